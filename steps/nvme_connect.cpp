// nvme_connect: the host side of NVMe over Fabrics, natively: one write of
// "transport=rdma,traddr=...,trsvcid=...,nqn=..." to /dev/nvme-fabrics (what
// `nvme connect` does), the kernel's answer "instance=N,cntlid=M" read
// back, then a wait until the namespace's block device is there
// (/dev/nvme0n1), within the step's timeout. Loads nvme-rdma (nvme-fabrics
// comes with it) when the kernel has not.
//
// A connect the kernel refuses is `fail` (the step ran; what it checks, that
// the host gets in, did not hold), with the errno and the NVMe stack's own
// kernel messages about it. The controller is journalled before the write;
// undo deletes it (delete_controller) only while the controller of that
// instance is the one this run made: same subsystem NQN, transport and
// address, as sysfs reads them back. A live controller for the same
// subsystem and address before the step is adopted unchanged and left in
// place.

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_args.h"
#include "steps/common/modules.h"
#include "steps/common/nvme_fabrics.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

constexpr Duration kDevicePoll{50};

StepResult run_nvme_connect(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_nvme_connect(const nlohmann::json& args, UndoContext& ctx);

void validate_nvme_connect(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  std::string why;
  if (params.contains("hostid") && params.at("hostid").is_string() &&
      !is_uuid(params.at("hostid").get_ref<const std::string&>()))
    complain("hostid", "'hostid' must be a UUID such as 7b1f3c2e-0d5a-4e8b-9c61-2f4a8d0e6b13");
  for (const char* key : {"nqn", "hostnqn"}) {
    if (!params.contains(key) || !params.at(key).is_string()) continue;
    if (!valid_nqn(params.at(key).get_ref<const std::string&>(), &why))
      complain(key, "'" + std::string(key) + "' is not a valid NQN: " + why);
  }
}

}  // namespace

Kind nvme_connect_kind() {
  KindSpec spec;
  spec.name = "nvme_connect";
  spec.needs = {Need::NetAdmin, Need::RdmaRxe};
  spec.summary =
      "Connect this host to an NVMe over Fabrics subsystem through /dev/nvme-fabrics and wait for its block "
      "device; undo disconnects the controller it made.";
  spec.params = {
      {.name = "transport",
       .type = ParamType::Enum,
       .default_value = "rdma",
       .help = "the fabric",
       .choices = {"rdma"}},
      {.name = "address", .type = ParamType::Address, .required = true, .help = "the target's address: 10.10.0.1"},
      {.name = "service",
       .type = ParamType::Int,
       .default_value = 4420,
       .help = "the target's port number (trsvcid)",
       .min = 1,
       .max = 65535},
      {.name = "nqn", .type = ParamType::String, .required = true, .help = "the subsystem's NQN"},
      {.name = "hostnqn",
       .type = ParamType::String,
       .help = "this host's NQN (one of the target's hosts); default the kernel's own"},
      {.name = "hostid",
       .type = ParamType::String,
       .help = "this host's ID, a UUID; default one derived from hostnqn (the kernel refuses a hostnqn with its own "
               "default ID)"},
      {.name = "host_address",
       .type = ParamType::Address,
       .help = "the source address (host_traddr): which RDMA device the host uses"},
  };
  spec.facts = {
      {"controller", "the controller's name: nvme0"},
      {"device", "the block device of its first namespace: /dev/nvme0n1"},
      {"devices", "the block devices of all its namespaces"},
      {"instance", "the controller's instance number (nvme<instance>)"},
      {"cntlid", "the controller ID the target gave it"},
      {"changed", "whether the step connected (false: a live controller for it was there already)"},
      {"errno", "when the kernel refused the connect: its errno (ECONNRESET: nobody listens there)"},
      {"error", "when the kernel refused the connect: what the errno means"},
  };
  spec.example =
      "- nvme_connect: {transport: rdma, address: 10.10.0.1, service: 4420, nqn: nqn.2026-01.io.rxerun:lab}\n"
      "  expect: {device: \"~ ^/dev/nvme[0-9]+n1$\"}\n";
  spec.default_timeout = Duration{60'000};
  spec.validate = validate_nvme_connect;
  return Kind{std::move(spec), run_nvme_connect, undo_nvme_connect};
}

namespace {

bool same_target(const sys::FabricsController& c, const std::string& transport, const std::string& address,
                 const std::string& service, const std::string& nqn) {
  return c.transport == transport && c.traddr == address && c.trsvcid == service && c.subsysnqn == nqn;
}

const sys::FabricsController* instance_of(const std::vector<sys::FabricsController>& all, unsigned instance) {
  auto it =
      std::find_if(all.begin(), all.end(), [&](const sys::FabricsController& c) { return c.instance == instance; });
  return it == all.end() ? nullptr : &*it;
}

StepResult run_nvme_connect(const Params& params, StepContext& ctx) {
  if (auto refused = refuse_other_netns(ctx, "nvme_connect")) return *refused;
  auto& nvme = ctx.sys().nvme;
  const sys::FabricsOptions options{.transport = params.str("transport"),
                                    .traddr = params.str("address"),
                                    .trsvcid = std::to_string(params.integer("service")),
                                    .nqn = params.str("nqn"),
                                    .hostnqn = params.has("hostnqn") ? params.str("hostnqn") : "",
                                    .hostid = params.has("hostid")    ? params.str("hostid")
                                              : params.has("hostnqn") ? host_id_for(params.str("hostnqn"))
                                                                      : "",
                                    .host_traddr = params.has("host_address") ? params.str("host_address") : ""};
  const std::string target = options.transport + " " + options.traddr + " service " + options.trsvcid;
  std::vector<std::string> hints;
  auto finish = [&](StepResult r) {
    r.hints.insert(r.hints.end(), hints.begin(), hints.end());
    return r;
  };
  const std::uint64_t log_since = nvme.log_clock();

  auto loaded = load_modules(ctx, {{.name = "nvme_" + options.transport}},
                             "once no NVMe over Fabrics controller of that transport is left", &hints);
  if (!loaded) return finish(StepResult::error(loaded.error()));

  nlohmann::json facts = {{"nqn", options.nqn}};
  auto before = nvme.controllers();
  if (!before) return finish(StepResult::error(before.error()));
  unsigned instance = 0;
  bool adopted = false;
  for (const auto& c : *before) {
    if (!same_target(c, options.transport, options.traddr, options.trsvcid, options.nqn) || c.state != "live") continue;
    if (!options.hostnqn.empty() && c.hostnqn != options.hostnqn) continue;
    // Already connected, as asked: not this run's, so not this run's to disconnect.
    instance = c.instance;
    facts["cntlid"] = c.cntlid;
    adopted = true;
    break;
  }
  if (!adopted) {
    if (auto r = ctx.will_change({{"controller", options.nqn},
                                  {"transport", options.transport},
                                  {"address", options.traddr},
                                  {"service", options.trsvcid}},
                                 "disconnect the NVMe controller of " + options.nqn + " at " + target);
        !r)
      return finish(StepResult::error(r.error()));
    std::vector<std::string> kernel_log;
    auto connected = nvme.connect(options, &kernel_log);
    if (!connected) {
      const int code = connected.error().code;
      facts["errno"] = errno_symbol(code);
      facts["error"] = std::string(std::strerror(code));
      StepResult r = StepResult::fail("the kernel refused the connect to " + options.nqn + " at " + target + ": " +
                                          std::strerror(code) + " (" + errno_symbol(code) + ")",
                                      facts);
      for (const auto& line : kernel_log) r.hints.push_back("kernel: " + line);
      if (code == ECONNRESET || code == ECONNREFUSED)
        r.hints.push_back(
            "nobody listens there for that subsystem, or the target refused this host: is an nvmet "
            "step's port on that address and service?");
      return finish(r);
    }
    instance = connected->instance;
    facts["cntlid"] = connected->cntlid;
    if (auto r = ctx.identify({{"instance", connected->instance}, {"cntlid", connected->cntlid}}); !r)
      return finish(StepResult::error(r.error()));
  }
  const std::string controller = "nvme" + std::to_string(instance);
  facts["changed"] = !adopted;
  facts["instance"] = instance;
  facts["controller"] = controller;

  // The kernel scans the namespaces after it answered: wait for the first
  // block device, and for its node in /dev.
  for (;;) {
    auto all = nvme.controllers();
    if (!all) return finish(StepResult::error(all.error()));
    const auto* c = instance_of(*all, instance);
    if (!c) {
      StepResult r = StepResult::fail("controller " + controller + " went away before its namespace showed up", facts);
      for (const auto& line : nvme.kernel_messages(log_since)) r.hints.push_back("kernel: " + line);
      return finish(r);
    }
    if (!c->block_devices.empty()) {
      auto node = nvme.block_device(c->block_devices.front());
      if (!node) return finish(StepResult::error(node.error()));
      if (*node) {
        facts["device"] = "/dev/" + c->block_devices.front();
        nlohmann::json devices = nlohmann::json::array();
        for (const auto& d : c->block_devices) devices.push_back("/dev/" + d);
        facts["devices"] = devices;
        return finish(StepResult::ok(facts));
      }
    }
    switch (ctx.sleep_for(kDevicePoll)) {
      case WaitStatus::Done: continue;
      case WaitStatus::Interrupted: return finish(StepResult::error("interrupted"));
      case WaitStatus::Deadline: {
        StepResult r = StepResult::timeout(
            "controller " + controller + " is " + c->state + " but no namespace block device showed up", facts);
        for (const auto& line : nvme.kernel_messages(log_since)) r.hints.push_back("kernel: " + line);
        return finish(r);
      }
    }
  }
}

// "nvme1 (rdma 10.10.0.1:4420, nqn.x)" for messages.
std::string described_controller(const sys::FabricsController& c) {
  return "nvme" + std::to_string(c.instance) + " (" + c.transport + " " + c.traddr + ":" + c.trsvcid + ", " +
         c.subsysnqn + ")";
}

Result<nlohmann::json> undo_controller(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  const std::string nqn = a.text("controller");
  const std::string transport = a.text("transport");
  const std::string address = a.address("address");
  const std::string service = a.text("service");
  const nlohmann::json id = a.identity();
  if (a.ok() && !valid_nqn(nqn)) a.refuse("controller", "a subsystem NQN");
  if (a.ok() && transport != "rdma") a.refuse("transport", "a transport: rdma");
  if (!a.ok()) return a.error();
  auto& nvme = ctx.sys().nvme;
  auto all = nvme.controllers();
  if (!all) return all.error();
  std::vector<unsigned> doomed;
  if (auto instance = nvme_identity_number(id, "instance")) {
    const auto* c = instance_of(*all, static_cast<unsigned>(*instance));
    if (!c) return nlohmann::json::object();  // gone (disconnected by hand, or the module went)
    const std::uint64_t cntlid = nvme_identity_number(id, "cntlid").value_or(0);
    if (!same_target(*c, transport, address, service, nqn) || (cntlid != 0 && c->cntlid != cntlid))
      return make_error("NVMe controller " + described_controller(*c) + " is another one than this run connected (to " +
                        nqn + " at " + address + ":" + service + "): left alone");
    doomed.push_back(c->instance);
  } else {
    // The run ended between the connect and its record: a controller for
    // that subsystem at that address is this run's (the step adopts, and
    // so journals nothing for, one that was there before it).
    for (const auto& c : *all)
      if (same_target(c, transport, address, service, nqn)) doomed.push_back(c.instance);
  }
  for (unsigned i : doomed)
    if (auto r = nvme.delete_controller(i); !r && r.error().code != ENOENT && r.error().code != ENODEV)
      return r.error();
  return nlohmann::json::object();
}

Result<std::vector<std::string>> fabrics_users(UndoContext& ctx) {
  auto all = ctx.sys().nvme.controllers();
  if (!all) return all.error();
  std::vector<std::string> users;
  for (const auto& c : *all)
    if (c.transport == "rdma") users.push_back(described_controller(c));
  return users;
}

Result<nlohmann::json> undo_nvme_connect(const nlohmann::json& args, UndoContext& ctx) {
  if (is_modules_undo(args)) return unload_modules(args, ctx, fabrics_users);
  return undo_controller(args, ctx);
}

}  // namespace

}  // namespace rxerun::steps
