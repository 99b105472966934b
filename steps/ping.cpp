// ping: ICMP echo to an address, natively (sys::Pinger), as ping(8) judges
// it: the step passes when at least one reply came back. It changes nothing,
// so it has no undo.

#include <arpa/inet.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "base/try.h"
#include "engine/step.h"
#include "steps/common/traffic.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_ping(const Params& params, StepContext& ctx);

}  // namespace

Kind ping_kind() {
  KindSpec spec;
  spec.name = "ping";
  spec.needs = {Need::NetAdmin};
  spec.summary =
      "ICMP echo to an address, natively (no ping binary); passes when at least one reply came back, as ping(8).";
  spec.params = {
      {.name = "to", .type = ParamType::Address, .required = true, .help = "the IPv4 or IPv6 address to ping"},
      {.name = "from",
       .type = ParamType::String,
       .help = "send from this interface (bound to it, as ping -I DEV) or from this source address"},
      {.name = "count",
       .type = ParamType::Int,
       .default_value = 3,
       .help = "how many echo requests to send (count x interval + 1s must fit in the step's timeout, 10s unless set)",
       .min = 1,
       .max = 65535},
      {.name = "interval",
       .type = ParamType::Duration,
       .default_value = "200ms",
       .help = "time between requests; after the last, replies are awaited for 1s more"},
  };
  spec.facts = {
      {"changed", "always false: a ping changes nothing"},
      {"sent", "echo requests sent"},
      {"received", "echo replies received (duplicates not counted)"},
      {"loss_pct", "percentage of requests without a reply"},
      {"rtt_min_ms", "fastest round trip in milliseconds (absent when no reply came back)"},
      {"rtt_avg_ms", "mean round trip in milliseconds (absent when no reply came back)"},
      {"rtt_max_ms", "slowest round trip in milliseconds (absent when no reply came back)"},
  };
  spec.example =
      "- name: reach\n"
      "  ping: {to: 127.0.0.1, count: 2, interval: 100ms}\n"
      "  expect: {loss_pct: 0}\n";
  // count x interval plus the 1s wait for the last reply must fit: the
  // default covers the default count with room to spare.
  spec.default_timeout = Duration(10'000);
  return Kind{std::move(spec), run_ping, {}};
}

namespace {

bool is_address(const std::string& s) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, s.c_str(), buf) == 1 || ::inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

bool plausible_ifname(const std::string& s) {
  return !s.empty() && s.size() <= 15 && s.find_first_of("/ \t\n\r") == std::string::npos && s != "." && s != "..";
}

// Numbers as a person reads them: 0 and 100, not 0.0; rtt to the microsecond.
StepResult run_ping(const Params& params, StepContext& ctx) {
  sys::PingSpec spec;
  spec.to = params.str("to");
  spec.count = static_cast<int>(params.integer("count"));
  spec.interval = params.duration("interval");
  if (spec.interval < Duration(1))
    return StepResult::error(params.where("interval") + ": interval must be at least 1ms");
  if (params.has("from")) {
    const std::string from = params.str("from");
    if (is_address(from)) {
      spec.from_addr = from;
    } else if (plausible_ifname(from)) {
      spec.from_dev = from;
    } else {
      return StepResult::error(params.where("from") + ": '" + from + "' is neither an address nor an interface name");
    }
  }

  RXERUN_TRY_ASSIGN(const sys::PingResult r, ctx.sys().pinger.ping(spec, ctx.deadline(), ctx.sys().interrupt));

  nlohmann::json facts = {{"changed", false}, {"sent", r.sent}, {"received", r.received}};
  facts["loss_pct"] = r.sent > 0 ? rounded(100.0 * (r.sent - r.received) / r.sent, 1) : nlohmann::json(100);
  if (r.rtt_min_ms) facts["rtt_min_ms"] = rounded(*r.rtt_min_ms, 3);
  if (r.rtt_avg_ms) facts["rtt_avg_ms"] = rounded(*r.rtt_avg_ms, 3);
  if (r.rtt_max_ms) facts["rtt_max_ms"] = rounded(*r.rtt_max_ms, 3);

  if (ctx.sys().interrupt.requested()) return StepResult::error("interrupted");
  if (r.sent < spec.count && ctx.sys().clock.now() >= ctx.deadline()) {
    return StepResult::timeout(
        "the step's timeout ran out after " + std::to_string(r.sent) + " of " + std::to_string(spec.count) +
            " echo requests: raise `timeout` (count x interval is " + format_duration(spec.interval * spec.count) + ")",
        facts);
  }
  if (r.received > 0) return StepResult::ok(facts);

  std::string message = "no reply from " + spec.to + " (" + std::to_string(r.sent) + " echo request" +
                        (r.sent == 1 ? "" : "s") + " sent)";
  StepResult failed = StepResult::fail("", facts);
  if (r.send_errors > 0) {
    message += "; " + std::to_string(r.send_errors) + " could not be sent: " + r.send_error;
    if (r.send_error == std::strerror(EPERM))
      failed.hints.push_back("a firewall rule drops it on the way out (a `block` on the output hook?)");
    else if (r.send_error == std::strerror(ENETUNREACH) || r.send_error == std::strerror(EHOSTUNREACH))
      failed.hints.push_back("no route to " + spec.to +
                             " here: is an address of its subnet configured, and the link up (in this netns)?");
  } else {
    failed.hints.push_back("a `block` (nftables) or `netem` loss on the way, a link down, or a missing address at " +
                           spec.to);
  }
  failed.message = std::move(message);
  return failed;
}

}  // namespace

}  // namespace rxerun::steps
