#include "sys/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace rxerun::sys {

namespace {
// Ctrl-C, kill, and a closed terminal (or an ssh session that ended): each
// stops the run the same way, with cleanup.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The one Interrupt bound to signals; a signal handler can reach nothing else.
std::atomic<Interrupt*> g_bound{nullptr};

void on_signal(int signo) {
  int saved = errno;
  if (Interrupt* i = g_bound.load()) i->request(signo);
  errno = saved;
}
}  // namespace

Interrupt::Interrupt() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe2 failed");
  read_.reset(fds[0]);
  write_.reset(fds[1]);
}

Interrupt::~Interrupt() {
  if (bound_) {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    for (int signo : kSignals) ::sigaction(signo, &sa, nullptr);
    g_bound.store(nullptr);
  }
}

void Interrupt::bind_signals() {
  g_bound.store(this);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking syscall returns EINTR and the step notices
  for (int signo : kSignals) ::sigaction(signo, &sa, nullptr);
  bound_ = true;
}

void Interrupt::request(int signo) {
  int expected = 0;
  signal_.compare_exchange_strong(expected, signo);
  char byte = 1;
  [[maybe_unused]] auto n = ::write(write_.get(), &byte, 1);  // async-signal-safe; a full pipe is fine
}

void Interrupt::clear() {
  signal_.store(0);
  char buf[64];
  while (::read(read_.get(), buf, sizeof buf) > 0) {
  }
}

}  // namespace rxerun::sys
