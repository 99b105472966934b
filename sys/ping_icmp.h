#pragma once
// ICMP/ICMPv6 echo over a raw socket (root) or an unprivileged ping socket.

#include "sys/ping.h"

namespace rxerun::sys {

class IcmpPinger final : public Pinger {
 public:
  Result<PingResult> ping(const PingSpec& spec, SteadyTime deadline, Interrupt& interrupt) override;
};

}  // namespace rxerun::sys
