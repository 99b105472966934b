// port: waits until a port of an RDMA device reaches a state (ACTIVE by
// default) and reports its state, physical state and MTUs. Reads only.
//
// An rxe port is ACTIVE only while its netdev is up with carrier (a veth has
// carrier only when both ends are up); its active MTU is the largest IB MTU
// that fits the netdev's MTU (1500 gives 1024).

#include <cerrno>

#include "engine/step.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_port(const Params& params, StepContext& ctx);

}  // namespace

Kind port_kind() {
  KindSpec spec;
  spec.name = "port";
  spec.needs = {Need::RdmaRxe};
  spec.objects = {{.effect = LabEffect::Uses,
                   .object = LabObject::RdmaDevice,
                   .param = "dev",
                   .unless_param = "state",
                   .unless_value = "ABSENT"}};
  spec.summary = "Wait until a port of an RDMA device reaches a state (ACTIVE by default); report its state and MTU.";
  spec.params = {
      {.name = "dev", .type = ParamType::IfName, .required = true, .help = "the RDMA device: rxe0"},
      {.name = "port", .type = ParamType::Int, .default_value = 1, .help = "the port number", .min = 1, .max = 255},
      {.name = "state",
       .type = ParamType::Enum,
       .default_value = "ACTIVE",
       .help = "the state to wait for; ABSENT: until the device no longer exists (its netdev was deleted)",
       .choices = {"ACTIVE", "DOWN", "INIT", "ARMED", "ABSENT"}},
  };
  spec.facts = {
      {"state", "the port's state: ACTIVE, DOWN, INIT, ARMED; ABSENT once the device is gone"},
      {"phys_state", "the physical state: LinkUp, Disabled, Polling, ..."},
      {"active_mtu", "the active IB MTU in bytes (1024 over a netdev MTU of 1500)"},
      {"max_mtu", "the largest IB MTU the port supports, in bytes"},
  };
  spec.example =
      "- veth: {name: vA, peer: vB}\n"
      "- link: {dev: vA, up: true}\n"
      "- link: {dev: vB, up: true}\n"
      "- rxe: {name: rxe0, netdev: vA}\n"
      "- port: {dev: rxe0, state: ACTIVE}\n"
      "  expect: {active_mtu: 1024}\n";
  spec.default_timeout = Duration{10'000};
  return Kind{std::move(spec), run_port, {}};
}

namespace {

constexpr Duration kPortPoll{50};

nlohmann::json state_facts(const sys::PortState& s) {
  return {{"state", s.state_name}, {"phys_state", s.phys_state_name}};
}

// Waits until the device is gone: the kernel removes an rxe device when its
// netdev is deleted (docs/kernel-notes.md, "Ports and MTU").
StepResult wait_absent(StepContext& ctx, const std::string& dev, unsigned port) {
  auto& rdma = ctx.sys().rdma;
  const auto start = ctx.sys().clock.now();
  for (;;) {
    // Any other error means the device is still listed: while the kernel
    // removes it, its attributes fail to read for a moment.
    auto s = rdma.port_state(dev, port);
    if (!s && s.error().code == ENODEV) return StepResult::ok({{"state", "ABSENT"}});
    const WaitStatus w = ctx.sleep_for(kPortPoll);
    if (w == WaitStatus::Interrupted) return StepResult::error("interrupted");
    if (w == WaitStatus::Deadline) {
      const auto waited = std::chrono::duration_cast<Duration>(ctx.sys().clock.now() - start);
      std::string message = "RDMA device " + dev + " still exists after " + format_duration(waited);
      if (!s) message += " (" + s.error().message + ")";
      StepResult r = StepResult::timeout(message, s ? state_facts(*s) : nlohmann::json::object());
      r.hints.push_back("an rxe device goes when its netdev is deleted (or by `revert` of its rxe step)");
      return r;
    }
  }
}

StepResult run_port(const Params& params, StepContext& ctx) {
  auto& rdma = ctx.sys().rdma;
  const std::string dev = params.str("dev");
  const auto port = static_cast<unsigned>(params.integer("port"));
  const std::string wanted = params.str("state");
  if (wanted == "ABSENT") return wait_absent(ctx, dev, port);
  const std::string which = dev + " port " + std::to_string(port);
  const auto start = ctx.sys().clock.now();

  auto s = rdma.port_state(dev, port);
  if (!s) {
    if (s.error().code == ENODEV)
      return StepResult::error("no RDMA device " + dev + " (add it with an rxe step first)");
    if (s.error().code == ENOENT) return StepResult::error(dev + " has no port " + std::to_string(port));
    return StepResult::error(s.error());
  }
  while (s->state_name != wanted) {
    const WaitStatus w = ctx.sleep_for(kPortPoll);
    if (w == WaitStatus::Interrupted) return StepResult::error("interrupted");
    if (w == WaitStatus::Deadline) {
      const auto waited = std::chrono::duration_cast<Duration>(ctx.sys().clock.now() - start);
      StepResult r = StepResult::timeout(which + " is " + s->state_name + " (" + s->phys_state_name + "), not " +
                                             wanted + ", after " + format_duration(waited),
                                         state_facts(*s));
      if (wanted == "ACTIVE")
        r.hints.push_back(
            "an rxe port is ACTIVE only while its netdev is up with carrier; a veth has carrier only "
            "when both ends are up");
      return r;
    }
    s = rdma.port_state(dev, port);
    if (!s) {
      if (s.error().code == ENODEV || s.error().code == EAGAIN)
        return StepResult::fail("RDMA device " + dev + " went away while waiting for " + wanted);
      return StepResult::error(s.error());
    }
  }

  StepResult r = StepResult::ok(state_facts(*s));
  auto mtu = rdma.port_mtu(dev, port);
  if (mtu) {
    r.facts["active_mtu"] = mtu->active;
    r.facts["max_mtu"] = mtu->max;
  } else {
    r.hints.push_back("MTU unknown (sysfs does not show it; verbs do): " + mtu.error().message);
  }
  return r;
}

}  // namespace

}  // namespace rxerun::steps
