#include "sys/recording/ping.h"

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

Result<PingResult> RecordingPinger::ping(const PingSpec& spec, SteadyTime, Interrupt&) {
  std::vector<std::string> cmd{"ping", "-c", std::to_string(spec.count), "-i",
                               decimal_text(spec.interval.count() / 1000.0)};
  if (!spec.from_dev.empty()) cmd.insert(cmd.end(), {"-I", spec.from_dev});
  if (!spec.from_addr.empty()) cmd.insert(cmd.end(), {"-I", spec.from_addr});
  cmd.push_back(spec.to);
  log_.record("ping " + spec.to, shell_join(cmd));
  return PingResult{spec.count, spec.count, std::nullopt, std::nullopt, std::nullopt};
}

}  // namespace rxerun::sys
