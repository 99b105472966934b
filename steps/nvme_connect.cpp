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

#include "base/try.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/common/modules.h"
#include "steps/common/nvme_fabrics.h"
#include "steps/common/step_hints.h"
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
  spec.takes_netns = false;
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

// The controller the step connected (its identity: instance and controller
// ID, once the kernel answered); the undo deletes it while it is that one.
struct ControllerRecord {
  static constexpr std::string_view kOp = "controller";
  std::string nqn;  // the subsystem's
  std::string transport;
  std::string address;
  std::string service;
  nlohmann::json identity;  // {"instance", "cntlid"}; null when not recorded

  nlohmann::json to_args() const {
    return {{"op", kOp}, {"controller", nqn}, {"transport", transport}, {"address", address}, {"service", service}};
  }
  static Result<ControllerRecord> read(JournalArgs& a) {
    ControllerRecord r{a.text("controller"), a.text("transport"), a.address("address"), a.text("service"),
                       a.identity()};
    if (a.ok() && !valid_nqn(r.nqn)) a.refuse("controller", "a subsystem NQN");
    if (a.ok() && r.transport != "rdma") a.refuse("transport", "a transport: rdma");
    if (!a.ok()) return a.error();
    return r;
  }
};

// The kernel scans the namespaces after it answered: waits for the first
// block device of controller `instance`, and for its node in /dev.
StepResult wait_for_namespace(StepContext& ctx, unsigned instance, nlohmann::json facts, std::uint64_t log_since) {
  auto& nvme = ctx.sys().nvme;
  const std::string controller = "nvme" + std::to_string(instance);
  for (;;) {
    RXERUN_TRY_ASSIGN(const auto all, nvme.controllers());
    const auto* c = instance_of(all, instance);
    if (!c) {
      StepResult r = StepResult::fail("controller " + controller + " went away before its namespace showed up", facts);
      for (const auto& line : nvme.kernel_messages(log_since)) r.hints.push_back("kernel: " + line);
      return r;
    }
    if (!c->block_devices.empty()) {
      RXERUN_TRY_ASSIGN(const bool node, ctx.sys().storage.block_device(c->block_devices.front()));
      if (node) {
        facts["device"] = "/dev/" + c->block_devices.front();
        nlohmann::json devices = nlohmann::json::array();
        for (const auto& d : c->block_devices) devices.push_back("/dev/" + d);
        facts["devices"] = devices;
        return StepResult::ok(facts);
      }
    }
    switch (ctx.sleep_for(kDevicePoll)) {
      case WaitStatus::Done: continue;
      case WaitStatus::Interrupted: return StepResult::error("interrupted");
      case WaitStatus::Deadline: {
        StepResult r = StepResult::timeout(
            "controller " + controller + " is " + c->state + " but no namespace block device showed up", facts);
        for (const auto& line : nvme.kernel_messages(log_since)) r.hints.push_back("kernel: " + line);
        return r;
      }
    }
  }
}

// The connect the kernel refused: `fail`, with the errno and its own words.
StepResult connect_refused(const Error& e, const std::string& nqn, const std::string& target,
                           const std::vector<std::string>& kernel_log, nlohmann::json facts) {
  const int code = e.code;
  StepResult r =
      kernel_refusal(code, "the kernel refused the connect to " + nqn + " at " + target, kernel_log, std::move(facts));
  if (code == ECONNRESET || code == ECONNREFUSED)
    r.hints.push_back(
        "nobody listens there for that subsystem, or the target refused this host: is an nvmet "
        "step's port on that address and service?");
  return r;
}

// Connects (or adopts a live controller for the same target), then waits
// for its block device. Hints of loading the modules go to `hints`.
StepResult connect_controller(const sys::FabricsOptions& options, StepContext& ctx, std::vector<std::string>& hints) {
  auto& nvme = ctx.sys().nvme;
  const std::string target = options.transport + " " + options.traddr + " service " + options.trsvcid;
  const std::uint64_t log_since = nvme.log_clock();

  RXERUN_TRY(load_modules(ctx, {{.name = "nvme_" + options.transport}},
                          "once no NVMe over Fabrics controller of that transport is left", &hints));

  nlohmann::json facts = {{"nqn", options.nqn}};
  RXERUN_TRY_ASSIGN(const auto before, nvme.controllers());
  unsigned instance = 0;
  bool adopted = false;
  for (const auto& c : before) {
    if (!same_target(c, options.transport, options.traddr, options.trsvcid, options.nqn) || c.state != "live") continue;
    if (!options.hostnqn.empty() && c.hostnqn != options.hostnqn) continue;
    // Already connected, as asked: not this run's, so not this run's to disconnect.
    instance = c.instance;
    facts["cntlid"] = c.cntlid;
    adopted = true;
    break;
  }
  if (!adopted) {
    const ControllerRecord record{options.nqn, options.transport, options.traddr, options.trsvcid, nullptr};
    RXERUN_TRY(ctx.will_change(record.to_args(), "disconnect the NVMe controller of " + options.nqn + " at " + target));
    std::vector<std::string> kernel_log;
    auto connected = nvme.connect(options, &kernel_log);
    if (!connected) return connect_refused(connected.error(), options.nqn, target, kernel_log, facts);
    instance = connected->instance;
    facts["cntlid"] = connected->cntlid;
    RXERUN_TRY(ctx.identify({{"instance", connected->instance}, {"cntlid", connected->cntlid}}));
  }
  facts["changed"] = !adopted;
  facts["instance"] = instance;
  facts["controller"] = "nvme" + std::to_string(instance);
  return wait_for_namespace(ctx, instance, std::move(facts), log_since);
}

StepResult run_nvme_connect(const Params& params, StepContext& ctx) {
  if (auto refused = refuse_other_netns(ctx, "nvme_connect")) return *refused;
  const sys::FabricsOptions options{.transport = params.str("transport"),
                                    .traddr = params.str("address"),
                                    .trsvcid = std::to_string(params.integer("service")),
                                    .nqn = params.str("nqn"),
                                    .hostnqn = params.has("hostnqn") ? params.str("hostnqn") : "",
                                    .hostid = params.has("hostid")    ? params.str("hostid")
                                              : params.has("hostnqn") ? host_id_for(params.str("hostnqn"))
                                                                      : "",
                                    .host_traddr = params.has("host_address") ? params.str("host_address") : ""};
  std::vector<std::string> hints;
  StepResult r = connect_controller(options, ctx, hints);
  return with_hints(std::move(r), hints);
}

// "nvme1 (rdma 10.10.0.1:4420, nqn.x)" for messages.
std::string described_controller(const sys::FabricsController& c) {
  return "nvme" + std::to_string(c.instance) + " (" + c.transport + " " + c.traddr + ":" + c.trsvcid + ", " +
         c.subsysnqn + ")";
}

Result<nlohmann::json> undo_controller(const ControllerRecord& record, UndoContext& ctx) {
  const std::string& nqn = record.nqn;
  const std::string& address = record.address;
  const std::string& service = record.service;
  auto& nvme = ctx.sys().nvme;
  RXERUN_TRY_ASSIGN(const auto all, nvme.controllers());
  std::vector<unsigned> doomed;
  if (auto instance = identity_number(record.identity, "instance")) {
    const auto* c = instance_of(all, static_cast<unsigned>(*instance));
    if (!c) return nlohmann::json::object();  // gone (disconnected by hand, or the module went)
    const std::uint64_t cntlid = identity_number(record.identity, "cntlid").value_or(0);
    if (!same_target(*c, record.transport, address, service, nqn) || (cntlid != 0 && c->cntlid != cntlid))
      return make_error("NVMe controller " + described_controller(*c) + " is another one than this run connected (to " +
                        nqn + " at " + address + ":" + service + "): left alone");
    doomed.push_back(c->instance);
  } else {
    // The run ended between the connect and its record: a controller for
    // that subsystem at that address is this run's (the step adopts, and
    // so journals nothing for, one that was there before it).
    for (const auto& c : all)
      if (same_target(c, record.transport, address, service, nqn)) doomed.push_back(c.instance);
  }
  for (unsigned i : doomed)
    if (auto r = nvme.delete_controller(i); !r && r.error().code != ENOENT && r.error().code != ENODEV)
      return r.error();
  return nlohmann::json::object();
}

Result<std::vector<std::string>> fabrics_users(UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto all, ctx.sys().nvme.controllers());
  std::vector<std::string> users;
  for (const auto& c : all)
    if (c.transport == "rdma") users.push_back(described_controller(c));
  return users;
}

Result<nlohmann::json> undo_nvme_connect_modules(const ModulesRecord& modules, UndoContext& ctx) {
  return unload_modules(modules, ctx, fabrics_users);
}

// Two records: the modules the step loaded, and the controller.
const RecordUndo kNvmeConnectUndos[] = {undo_of<ControllerRecord, undo_controller>(),
                                        undo_of<ModulesRecord, undo_nvme_connect_modules>()};

Result<nlohmann::json> undo_nvme_connect(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  return dispatch_undo(a, ctx, kNvmeConnectUndos,
                       ModulesRecord::in_older_entry(a) ? ModulesRecord::kOp : ControllerRecord::kOp);
}

}  // namespace

}  // namespace rxerun::steps
