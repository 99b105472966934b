#include "steps/common/soft_device.h"

#include <algorithm>
#include <cerrno>

#include "base/strings.h"
#include "base/try.h"
#include "engine/picture.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/common/modules.h"
#include "steps/common/step_hints.h"

namespace rxerun::steps {

namespace {

constexpr const char* kUcm = "rdma_ucm";
constexpr Duration kSoftDevicePoll{20};

const sys::SoftDevice* device_named(const std::vector<sys::SoftDevice>& devs, const std::string& name) {
  auto it = std::find_if(devs.begin(), devs.end(), [&](const sys::SoftDevice& d) { return d.name == name; });
  return it == devs.end() ? nullptr : &*it;
}

std::string in_step_netns(const StepContext& ctx) {
  return ctx.step().netns ? " in netns " + *ctx.step().netns : "";
}

std::string name_taken(const std::string& name, const sys::SoftDevice* holder) {
  std::string where;
  if (holder) {
    where = "it names the " + holder->type + " device ";
    where += holder->netdev.empty()
                 ? "on " + (holder->parent.empty() ? "a netdev" : holder->parent) + " in another namespace; "
                 : "on " + holder->netdev + "; ";
  }
  return "RDMA device name " + name + " is taken (names are global across namespaces): " + where +
         "choose another name";
}

// The device the step added, over its netdev; the undo deletes it while it
// is the one recorded (its identity, once known).
struct SoftDeviceRecord {
  static constexpr std::string_view kOp = "device";
  std::string name;
  std::string netdev;
  nlohmann::json identity;  // {"index", "netdev_ifindex", "netns_inode"}; null when not recorded

  nlohmann::json to_args() const { return {{"op", kOp}, {"name", name}, {"netdev", netdev}}; }
  static Result<SoftDeviceRecord> read(JournalArgs& a) {
    SoftDeviceRecord r{a.ifname("name"), a.ifname("netdev"), a.identity()};
    if (!a.ok()) return a.error();
    return r;
  }
};

// "RDMA device index 3 over netdev index 7 in netns inode 4026532281", leaving out what is not known.
std::string described(const nlohmann::json& id) {
  auto v = [&](const char* key) { return id.value(key, std::uint64_t{0}); };
  std::string out = "RDMA device index " + std::to_string(v("index"));
  if (v("netdev_ifindex")) out += " over netdev index " + std::to_string(v("netdev_ifindex"));
  if (v("netns_inode")) out += " in netns inode " + std::to_string(v("netns_inode"));
  return out;
}

Result<nlohmann::json> undo_device(const SoftDeviceType& t, const SoftDeviceRecord& record, UndoContext& ctx) {
  const std::string& name = record.name;
  const nlohmann::json& recorded = record.identity;
  auto& rdma = ctx.sys().rdma;
  RXERUN_TRY_ASSIGN(const auto devs, rdma.soft_devices());
  const auto* d = device_named(devs, name);
  if (!d) return nlohmann::json::object();  // gone: with its netdev, its namespace or its driver
  if (!recorded.is_null()) {
    // The device's index tells it from a namesake (the kernel does not hand
    // an index out again soon); the netdev's, from one over a namesake of
    // its netdev, which the kernel could have given the same device index.
    RXERUN_TRY_ASSIGN(const std::uint64_t inode, ctx.sys().netns.current_inode());
    const nlohmann::json now = {
        {"index", d->index}, {"netdev_ifindex", d->netdev_ifindex}, {"netns_inode", d->netdev.empty() ? 0 : inode}};
    if (differs(recorded, now) || d->type != t.type)
      return make_error(std::string(t.type) + " device " + name +
                        " is another one than the one this run added: the journal recorded " + described(recorded) +
                        ", " + name + " is now " + (d->type != t.type ? "a " + d->type + " device, " : "") +
                        described(now) + " (deleted and made again under its name since): left alone");
    if (auto r = rdma.remove_device(d->index); !r && r.error().code != ENODEV) return r.error();
    return nlohmann::json::object();
  }
  // Over another netdev it is not the one this run added (that one is gone,
  // or was never made: a name taken elsewhere); it is left alone.
  if (d->netdev != record.netdev || d->type != t.type)
    return nlohmann::json{
        {"left_alone", name + " over " + (d->netdev.empty() ? d->parent + " in another namespace" : d->netdev)}};
  if (auto r = rdma.remove_device(d->index); !r && r.error().code != ENODEV) return r.error();
  return nlohmann::json::object();
}

}  // namespace

namespace {

// The device over its netdev, its driver loaded: adopted when it is there
// as asked, else journalled, added and waited for until the kernel lists it.
StepResult make_device(const SoftDeviceType& t, const std::string& name, const std::string& netdev,
                       nlohmann::json facts, StepContext& ctx) {
  auto& rdma = ctx.sys().rdma;
  const std::string type = t.type;
  RXERUN_TRY_ASSIGN(const auto devs, rdma.soft_devices());
  if (const auto* d = device_named(devs, name)) {
    if (d->netdev != netdev || d->type != type) return StepResult::error(name_taken(name, d));
    // Already there, as asked: not this run's work, so not this run's to delete.
    facts["changed"] = false;
    facts["index"] = d->index;
    return StepResult::ok(facts);
  }
  for (const auto& d : devs)
    if (!d.netdev.empty() && d.netdev == netdev && d.type == type)
      return StepResult::error(netdev + in_step_netns(ctx) + " already has " + type + " device " + d.name +
                               " (one per netdev): use name " + d.name + ", or delete it first (rdma link delete " +
                               d.name + ")");

  RXERUN_TRY(ctx.will_change(SoftDeviceRecord{name, netdev}.to_args(), "delete " + type + " device " + name));
  if (auto r = rdma.add_soft_device(type, name, netdev); !r) {
    switch (r.error().code) {
      case ENFILE: return StepResult::error(name_taken(name, nullptr));
      case ENODEV: return StepResult::error("no netdev " + netdev + in_step_netns(ctx) + " (create it first)");
      case EEXIST:
        return StepResult::error(netdev + in_step_netns(ctx) + " already has a " + type + " device (one per netdev)");
      default: return StepResult::error(r.error());
    }
  }

  // The kernel registers the device before it answers; wait all the same
  // until it lists it, so that later steps find it.
  sys::SoftDevice made;
  for (;;) {
    RXERUN_TRY_ASSIGN(const auto now, rdma.soft_devices());
    if (const auto* d = device_named(now, name)) {
      made = *d;
      break;
    }
    switch (ctx.sleep_for(kSoftDevicePoll)) {
      case WaitStatus::Done: continue;
      case WaitStatus::Deadline: return StepResult::timeout(type + " device " + name + " did not appear", facts);
      case WaitStatus::Interrupted: return StepResult::error("interrupted");
    }
  }
  facts["changed"] = true;
  facts["index"] = made.index;
  RXERUN_TRY_ASSIGN(const std::uint64_t inode, ctx.sys().netns.current_inode());
  RXERUN_TRY(ctx.identify({{"index", made.index}, {"netdev_ifindex", made.netdev_ifindex}, {"netns_inode", inode}}));
  if (t.after_add)
    if (auto r = t.after_add(ctx, facts)) return std::move(*r);
  return StepResult::ok(facts);
}

StepResult run_soft_device(const SoftDeviceType& t, const Params& params, StepContext& ctx) {
  const std::string name = params.str("name");
  const std::string netdev = params.str("netdev");
  const std::string type = t.type;
  std::vector<std::string> hints;

  const std::string once = "once no " + type + " device is left";
  const ModuleRequest ucm{
      .name = kUcm, .optional = true, .missing = "rdma_cm users (rping, perftest -R) will not find the device"};
  auto loaded = load_modules(ctx, {{.name = t.module}, ucm}, once, &hints);
  if (!loaded) {
    if (loaded.error().code == ENOENT) return t.not_in_this_kernel(loaded.error());
    return StepResult::error(loaded.error());
  }
  const bool module_loaded = std::find(loaded->begin(), loaded->end(), t.module) != loaded->end();
  nlohmann::json facts = {{"name", name}, {"netdev", netdev}, {"module_loaded", module_loaded}};
  StepResult r = make_device(t, name, netdev, std::move(facts), ctx);
  return with_hints(std::move(r), hints);
}

Result<nlohmann::json> undo_soft_device(const SoftDeviceType& t, const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  const std::string op = record_op(a, {SoftDeviceRecord::kOp, ModulesRecord::kOp},
                                   ModulesRecord::in_older_entry(a) ? ModulesRecord::kOp : SoftDeviceRecord::kOp);
  if (op != ModulesRecord::kOp) {
    RXERUN_TRY_ASSIGN(const auto device, SoftDeviceRecord::read(a));
    return undo_device(t, device, ctx);
  }
  RXERUN_TRY_ASSIGN(const auto modules, ModulesRecord::read(a));
  const std::string type = t.type;
  const ModuleUsers devices_left = [type](UndoContext& u) -> Result<std::vector<std::string>> {
    RXERUN_TRY_ASSIGN(const auto devs, u.sys().rdma.soft_devices());
    std::vector<std::string> names;
    for (const auto& d : devs)
      if (d.type == type) names.push_back(d.name);
    return names;
  };
  return unload_modules(modules, ctx, devices_left, t.module);
}

}  // namespace

Kind soft_device_kind(const SoftDeviceType& t) {
  const std::string type = t.type;
  KindSpec spec;
  spec.name = type;
  spec.needs = {Need::NetAdmin, t.need};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "netdev"},
                  {.effect = LabEffect::Makes,
                   .object = LabObject::RdmaDevice,
                   .param = "name",
                   .over_param = "netdev",
                   .device_type = type}};
  spec.summary = std::string("Add a ") + t.title + " device over a netdev, loading " + t.module +
                 " when needed; undo deletes it and unloads what the run loaded.";
  spec.params = {
      {.name = "name",
       .type = ParamType::IfName,
       .required = true,
       .help = "the RDMA device's name, global across namespaces: " + type + "0"},
      {.name = "netdev",
       .type = ParamType::IfName,
       .required = true,
       .help = "the interface it runs over, in the step's namespace"},
  };
  spec.facts = {
      {"name", "the device's name"},
      {"netdev", "the interface under it"},
      {"index", "the RDMA device index"},
      {"changed", "whether the step added the device (false: it was there already, over that netdev)"},
      {"module_loaded", std::string("whether the step loaded ") + t.module + " (cleanup unloads it again)"},
      {.name = "left_alone",
       .help = "at its revert: a device of that name that is not this step's, left alone",
       .when = kAtRevert},
      {.name = "modules_unloaded", .help = "at its revert: the modules unloaded", .when = kAtRevert},
      {.name = "modules_left", .help = "at its revert: modules it loaded that are still loaded", .when = kAtRevert},
      {.name = "left_for", .help = "at its revert: what still uses them", .when = kAtRevert},
  };
  spec.example =
      "- veth: {name: vA, peer: vB}\n"
      "- link: {dev: vA, up: true}\n"
      "- link: {dev: vB, up: true}\n"
      "- " +
      type + ": {name: " + type + "0, netdev: vA}\n";
  spec.default_timeout = Duration{30'000};
  const SoftDeviceType* kind = &t;
  Kind k{std::move(spec), [kind](const Params& p, StepContext& ctx) { return run_soft_device(*kind, p, ctx); },
         [kind](const nlohmann::json& args, UndoContext& ctx) { return undo_soft_device(*kind, args, ctx); }};
  // The device, in the step's namespace, joined to the netdev under it.
  k.picture = [type](const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
    const std::string netdev = picture_param(p, "netdev");
    picture.add_interface(place_of(step), netdev);
    picture.devices.push_back({type, picture_param(p, "name"), place_of(step), netdev, step.name});
  };
  return k;
}

}  // namespace rxerun::steps
