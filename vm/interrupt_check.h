#pragma once
// `vm setup` stops between (and inside) its long stages when the interrupt
// fd (sys::Interrupt::fd(), readable on Ctrl-C) becomes readable.

#include <poll.h>

namespace rxerun::vm {

inline bool interrupt_requested(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

}  // namespace rxerun::vm
