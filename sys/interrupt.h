#pragma once
// SIGINT, SIGTERM and SIGHUP become a flag plus a readable pipe, so that any wait can
// poll() on it and stop at once. The signal handler only writes to the pipe.

#include <atomic>

#include "base/fd.h"

namespace rxerun::sys {

class Interrupt {
 public:
  Interrupt();  // a pipe, not yet bound to signals
  ~Interrupt();
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;

  // Routes SIGINT, SIGTERM and SIGHUP to this object until it is destroyed. At most
  // one Interrupt is bound at a time.
  void bind_signals();

  bool requested() const { return signal_.load() != 0; }
  int signal() const { return signal_.load(); }  // 0, SIGINT, SIGTERM or SIGHUP
  int fd() const { return read_.get(); }         // readable once requested

  void request(int signo);  // also what the signal handler calls

  // Forgets a request, so that cleanup after Ctrl-C can still wait for
  // things; a further Ctrl-C is then seen afresh.
  void clear();

 private:
  std::atomic<int> signal_{0};
  UniqueFd read_, write_;  // the pipe: the handler writes a byte, waits poll the read end
  bool bound_ = false;
};

}  // namespace rxerun::sys
