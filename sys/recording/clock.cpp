#include "sys/recording/clock.h"

#include "base/duration.h"
#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

WaitResult RecordingClock::wait_until(SteadyTime until, Interrupt&) {
  if (until > now_) {
    if (until == SteadyTime::max()) {
      log_.record({"wait without end", ""});
    } else {
      auto d = std::chrono::ceil<std::chrono::milliseconds>(until - now_);
      // sleep(1) takes decimals
      log_.record({"wait " + rxerun::format_duration(d), shell_join({"sleep", decimal_text(d.count() / 1000.0)})});
      now_ = until;
    }
  }
  return WaitResult::Reached;
}

}  // namespace rxerun::sys
