#include "sys/clock.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "sys/interrupt.h"

namespace rxerun::sys {

SteadyTime RealClock::now() {
  return std::chrono::steady_clock::now();
}

WaitResult RealClock::wait_until(SteadyTime until, Interrupt& interrupt) {
  while (true) {
    if (interrupt.requested()) return WaitResult::Interrupted;
    auto left = until - now();
    if (left <= std::chrono::nanoseconds::zero()) return WaitResult::Reached;
    // poll() takes int milliseconds; wait in slices of at most a minute and round up.
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    int timeout = static_cast<int>(std::min<long long>(ms, 60'000));
    pollfd pfd{interrupt.fd(), POLLIN, 0};
    int rc = ::poll(&pfd, 1, timeout);
    if (rc < 0 && errno != EINTR) return WaitResult::Reached;  // cannot wait: do not spin
  }
}

}  // namespace rxerun::sys
