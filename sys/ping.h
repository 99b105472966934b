#pragma once
// ICMP echo, natively: a raw ICMP socket (or an unprivileged ping socket),
// not the ping binary.

#include <optional>
#include <string>

#include "base/duration.h"
#include "base/result.h"
#include "sys/clock.h"

namespace rxerun::sys {

struct PingSpec {
  std::string to;         // an IPv4 or IPv6 address
  std::string from_dev;   // bind to this interface (SO_BINDTODEVICE); "" for none
  std::string from_addr;  // bind to this source address; "" for none
  int count = 3;
  Duration interval{200};
  Duration wait{1000};  // how long to wait for the last reply
};

struct PingResult {
  int sent = 0;
  int received = 0;
  std::optional<double> rtt_min_ms;  // unset when nothing came back
  std::optional<double> rtt_avg_ms;
  std::optional<double> rtt_max_ms;
  int send_errors = 0;     // requests the kernel refused to send (no route, a firewall's EPERM): lost
  std::string send_error;  // the last such refusal, strerror text ("Network is unreachable"); "" when none
};

class Pinger {
 public:
  virtual ~Pinger() = default;
  // Stops early, with what it has, at `deadline` or when `interrupt` fires.
  virtual Result<PingResult> ping(const PingSpec& spec, SteadyTime deadline, Interrupt& interrupt) = 0;
};

}  // namespace rxerun::sys
