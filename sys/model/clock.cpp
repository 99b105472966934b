#include "sys/model/clock.h"

#include <csignal>
#include <stdexcept>

#include "base/strings.h"
#include "sys/interrupt.h"

namespace rxerun::sys {

WaitResult ModelClock::wait_until(SteadyTime until, Interrupt& interrupt) {
  if (interrupt.requested()) return WaitResult::Interrupted;
  if (interrupt_at_ && *interrupt_at_ <= until) {
    if (*interrupt_at_ > now_) now_ = *interrupt_at_;
    interrupt_at_.reset();
    interrupt.request(SIGINT);
    return WaitResult::Interrupted;
  }
  if (until == SteadyTime::max()) {
    if (!k_.open_world) throw std::logic_error("a test waited for ever");
    k_.did("clock", "wait without end", "");
    return WaitResult::Reached;
  }
  if (until > now_) {
    const auto d = std::chrono::ceil<std::chrono::milliseconds>(until - now_);
    // sleep(1) takes decimals
    k_.did("clock", "wait " + format_duration(d), shell_join({"sleep", decimal_text(d.count() / 1000.0)}));
    waits.push_back(std::chrono::duration_cast<Duration>(until - now_));
    now_ = until;
    if (on_wait) on_wait();
  }
  return WaitResult::Reached;
}

std::uint64_t ModelKernelLog::now() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.now().time_since_epoch()).count());
}

std::vector<KernelRecord> ModelKernelLog::records(std::uint64_t since) {
  ++reads;
  std::vector<KernelRecord> out;
  for (const auto& e : entries)
    if (e.usec >= since) out.push_back(e);
  return out;
}

void ModelKernelLog::log(const std::string& text, int facility) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    const std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty() || nl != std::string::npos) entries.push_back({facility, 4, now(), line});
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
}

}  // namespace rxerun::sys
