// rxe: a Soft-RoCE device over a netdev (`rdma link add NAME type rxe netdev
// NETDEV`), loading rdma_rxe (and rdma_ucm, which rdma_cm users need) when
// the kernel has not.
//
// Two changes, journalled apart:
// - the modules this run loaded (with the dependencies they pulled in),
//   before loading them; undo unloads them once no rxe device is left,
//   retrying while they are briefly busy;
// - the device; undo deletes it by index, "already gone" being success. The
//   journal records the device's index and its netdev's (with the
//   namespace's inode, steps/common/identity.h): a device made since under the
//   name, or over a netdev made since under its name, is left alone and
//   reported.
// The device's undo does not ride on its netdev's deletion (a deleted veth
// takes its rxe device along): the modules' undo, which runs before the
// run's veths go, would then still see the device and leave rdma_rxe
// loaded. Deleting the device first costs a fraction of a second and leaves
// no module behind.
//
// The same name over the same netdev is adopted unchanged (and, not being
// this run's work, left in place). rxe device names are global across
// namespaces: a name in use elsewhere is a clear error, also when the kernel
// answers it with ENFILE ("Too many open files in system").
//
// Before Linux 7.1, rxe's UDP 4791 socket lives in the initial namespace
// only: a device inside another namespace is created but cannot talk. After
// adding, the step checks the socket in its namespace and names a kernel
// that has it when there is none.

#include <algorithm>
#include <cerrno>

#include "base/strings.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_args.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

constexpr const char* kRxe = "rdma_rxe";
constexpr const char* kUcm = "rdma_ucm";
constexpr Duration kRxePoll{20};
// How long a missing UDP 4791 socket is waited for after the device appeared.
constexpr Duration kSocketGrace{1000};
// Unload attempts while a module is busy, and the pause between them (blktests
// tries ten times).
constexpr int kUnloadTries = 10;
constexpr int kUnloadTriesOthers = 3;  // modules other than rdma_rxe: best effort
constexpr Duration kUnloadPause{200};

const sys::RxeDevice* named(const std::vector<sys::RxeDevice>& devs, const std::string& name) {
  auto it = std::find_if(devs.begin(), devs.end(), [&](const sys::RxeDevice& d) { return d.name == name; });
  return it == devs.end() ? nullptr : &*it;
}

// Defined after the spec below, which names them.
StepResult run_rxe(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_rxe(const nlohmann::json& args, UndoContext& ctx);

}  // namespace

Kind rxe_kind() {
  KindSpec spec;
  spec.name = "rxe";
  spec.needs = {Need::NetAdmin, Need::RdmaRxe};
  spec.summary =
      "Add a Soft-RoCE (rxe) device over a netdev, loading rdma_rxe when needed; undo deletes it and unloads what "
      "the run loaded.";
  spec.params = {
      {.name = "name",
       .type = ParamType::IfName,
       .required = true,
       .help = "the RDMA device's name, global across namespaces: rxe0"},
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
      {"module_loaded", "whether the step loaded rdma_rxe (cleanup unloads it again)"},
  };
  spec.example =
      "- veth: {name: vA, peer: vB}\n"
      "- link: {dev: vA, up: true}\n"
      "- link: {dev: vB, up: true}\n"
      "- rxe: {name: rxe0, netdev: vA}\n";
  spec.default_timeout = Duration{30'000};
  return Kind{std::move(spec), run_rxe, undo_rxe};
}

namespace {

std::string where_netns(const StepContext& ctx) {
  return ctx.step().netns ? " in netns " + *ctx.step().netns : "";
}

std::string name_taken(const std::string& name, const sys::RxeDevice* holder) {
  std::string where;
  if (holder)
    where = holder->netdev.empty() ? "it sits on " + holder->parent + " in another namespace; "
                                   : "it sits on " + holder->netdev + "; ";
  return "rxe device name " + name + " is taken (names are global across namespaces): " + where + "choose another name";
}

StepResult not_in_this_kernel(const Error& e) {
  StepResult r = StepResult::error(
      "rdma_rxe is not available in this kernel (CONFIG_RDMA_RXE); run the scenario in "
      "the lab VM: rxerun --vm ...");
  r.hints.push_back(e.message);
  r.hints.push_back("rxerun vm setup prepares the lab VM once; rxerun --vm SCENARIO runs the scenario there");
  return r;
}

// Loads what is missing of rdma_rxe and rdma_ucm, journalled first; tells
// whether this step loaded rdma_rxe.
Result<bool> load_modules(StepContext& ctx, std::vector<std::string>* hints) {
  auto& rdma = ctx.sys().rdma;
  std::vector<std::string> heads, deps;  // unload order: the modules asked for, then what they pulled in
  std::vector<std::string> wanted;
  for (const char* m : {kRxe, kUcm}) {
    auto need = rdma.modules_to_load(m);
    if (!need) {
      if (need.error().code == ENOENT && std::string(m) == kUcm) {
        hints->push_back("this kernel has no rdma_ucm: rdma_cm users (rping, perftest -R) will not find the device");
        continue;
      }
      return need.error();
    }
    if (need->empty()) continue;
    wanted.push_back(m);
    for (const auto& n : *need) {
      if (std::find(heads.begin(), heads.end(), n) != heads.end() ||
          std::find(deps.begin(), deps.end(), n) != deps.end())
        continue;
      (n == m ? heads : deps).push_back(n);
    }
  }
  if (wanted.empty()) return false;
  std::vector<std::string> all = heads;
  all.insert(all.end(), deps.begin(), deps.end());
  std::string summary = "unload " + join(heads, ", ");
  if (!deps.empty()) summary += " and " + std::to_string(deps.size()) + " modules they needed";
  summary += " (loaded by this run) once no rxe device is left";
  if (auto r = ctx.will_change({{"modules", all}}, summary); !r) return r.error();
  for (const auto& m : wanted)
    if (auto r = rdma.load_module(m); !r) return r.error();
  return std::find(wanted.begin(), wanted.end(), kRxe) != wanted.end();
}

StepResult run_rxe(const Params& params, StepContext& ctx) {
  auto& rdma = ctx.sys().rdma;
  const std::string name = params.str("name");
  const std::string netdev = params.str("netdev");
  std::vector<std::string> hints;

  auto loaded = load_modules(ctx, &hints);
  if (!loaded) {
    if (loaded.error().code == ENOENT) return not_in_this_kernel(loaded.error());
    return StepResult::error(loaded.error());
  }
  nlohmann::json facts = {{"name", name}, {"netdev", netdev}, {"module_loaded", *loaded}};
  auto finish = [&](StepResult r) {
    r.hints.insert(r.hints.end(), hints.begin(), hints.end());
    return r;
  };

  auto devs = rdma.rxe_devices();
  if (!devs) return finish(StepResult::error(devs.error()));
  if (const auto* d = named(*devs, name)) {
    if (d->netdev != netdev) return finish(StepResult::error(name_taken(name, d)));
    // Already there, as asked: not this run's work, so not this run's to delete.
    facts["changed"] = false;
    facts["index"] = d->index;
    return finish(StepResult::ok(facts));
  }
  for (const auto& d : *devs)
    if (!d.netdev.empty() && d.netdev == netdev)
      return finish(StepResult::error(netdev + where_netns(ctx) + " already has rxe device " + d.name +
                                      " (one per netdev): use name " + d.name +
                                      ", or delete it first (rdma link delete " + d.name + ")"));

  if (auto r = ctx.will_change({{"name", name}, {"netdev", netdev}}, "delete rxe device " + name); !r)
    return finish(StepResult::error(r.error()));
  if (auto r = rdma.add_rxe(name, netdev); !r) {
    switch (r.error().code) {
      case ENFILE: return finish(StepResult::error(name_taken(name, nullptr)));
      case ENODEV: return finish(StepResult::error("no netdev " + netdev + where_netns(ctx) + " (create it first)"));
      case EEXIST:
        return finish(StepResult::error(netdev + where_netns(ctx) + " already has an rxe device (one per netdev)"));
      default: return finish(StepResult::error(r.error()));
    }
  }

  // The kernel registers the device before it answers; wait all the same
  // until it lists it, so that later steps find it.
  const sys::RxeDevice* made = nullptr;
  for (;;) {
    devs = rdma.rxe_devices();
    if (!devs) return finish(StepResult::error(devs.error()));
    if ((made = named(*devs, name))) break;
    switch (ctx.sleep_for(kRxePoll)) {
      case WaitStatus::Done: continue;
      case WaitStatus::Deadline: return finish(StepResult::timeout("rxe device " + name + " did not appear", facts));
      case WaitStatus::Interrupted: return finish(StepResult::error("interrupted"));
    }
  }
  facts["changed"] = true;
  facts["index"] = made->index;
  {
    auto inode = ctx.sys().netns.current_inode();
    if (!inode) return finish(StepResult::error(inode.error()));
    nlohmann::json id = {{"index", made->index}, {"netdev_ifindex", made->netdev_ifindex}, {"netns_inode", *inode}};
    if (auto r = ctx.identify(std::move(id)); !r) return finish(StepResult::error(r.error()));
  }

  // rxe talks through a UDP 4791 socket of the device's namespace (Linux 7.1
  // and later); older kernels open it in the initial namespace only.
  const auto since = ctx.sys().clock.now();
  for (;;) {
    auto listening = rdma.udp4791_listening();
    if (!listening) return finish(StepResult::error(listening.error()));
    if (*listening) break;
    if (ctx.sys().clock.now() - since >= kSocketGrace || ctx.sleep_for(kRxePoll) != WaitStatus::Done) {
      const std::string here = ctx.step().netns ? "netns " + *ctx.step().netns : "this network namespace";
      StepResult r = StepResult::error(
          "rxe device " + name + " was added over " + netdev + ", but no UDP 4791 socket listens in " + here +
          ": this kernel runs rxe only in the initial network namespace (before Linux 7.1); run the scenario in "
          "the lab VM with kernel 7.3: rxerun --vm --kernel 7.3 ..., or put vm: {kernel: \"7.3\"} in it");
      r.facts = facts;
      r.hints.push_back("rxerun vm setup --kernel 7.3 prepares that kernel once");
      return finish(r);
    }
  }
  return finish(StepResult::ok(facts));
}

// "rdma device index 3 over netdev index 7 in netns inode 4026532281", leaving out what is not known.
std::string described(const nlohmann::json& id) {
  auto v = [&](const char* key) { return id.value(key, std::uint64_t{0}); };
  std::string out = "RDMA device index " + std::to_string(v("index"));
  if (v("netdev_ifindex")) out += " over netdev index " + std::to_string(v("netdev_ifindex"));
  if (v("netns_inode")) out += " in netns inode " + std::to_string(v("netns_inode"));
  return out;
}

Result<nlohmann::json> undo_device(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  const std::string name = a.ifname("name");
  const std::string netdev = a.ifname("netdev");
  const nlohmann::json recorded = a.identity();
  if (!a.ok()) return a.error();
  auto& rdma = ctx.sys().rdma;
  auto devs = rdma.rxe_devices();
  if (!devs) return devs.error();
  const auto* d = named(*devs, name);
  if (!d) return nlohmann::json::object();  // gone: with its netdev, its namespace or rdma_rxe
  if (!recorded.is_null()) {
    // The device's index tells it from a namesake (the kernel does not hand
    // an index out again soon); the netdev's, from one over a namesake of
    // its netdev, which the kernel could have given the same device index.
    auto inode = ctx.sys().netns.current_inode();
    if (!inode) return inode.error();
    const nlohmann::json now = {
        {"index", d->index}, {"netdev_ifindex", d->netdev_ifindex}, {"netns_inode", d->netdev.empty() ? 0 : *inode}};
    if (differs(recorded, now))
      return make_error("rxe device " + name + " is another one than the one this run added: the journal recorded " +
                        described(recorded) + ", " + name + " is now " + described(now) +
                        " (deleted and made again under its name since): left alone");
    if (auto r = rdma.remove_device(d->index); !r && r.error().code != ENODEV) return r.error();
    return nlohmann::json::object();
  }
  // Over another netdev it is not the one this run added (that one is gone,
  // or was never made: a name taken elsewhere); it is left alone.
  if (d->netdev != netdev)
    return nlohmann::json{
        {"left_alone", name + " over " + (d->netdev.empty() ? d->parent + " in another namespace" : d->netdev)}};
  if (auto r = rdma.remove_device(d->index); !r && r.error().code != ENODEV) return r.error();
  return nlohmann::json::object();
}

// A kernel module's name as modules.dep spells it (after the path and suffix).
bool module_name(const std::string& m) {
  return !m.empty() && m.size() < 64 && std::all_of(m.begin(), m.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

Result<nlohmann::json> undo_modules(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  std::vector<std::string> remaining = a.texts("modules");
  if (a.ok() && !std::all_of(remaining.begin(), remaining.end(), module_name))
    a.refuse("modules", "a list of kernel module names");
  if (!a.ok()) return a.error();
  auto& sys = ctx.sys();
  auto devs = sys.rdma.rxe_devices();
  if (!devs) return devs.error();
  if (!devs->empty()) {
    // Somebody's rxe device still needs them (not this run's: its own went first).
    std::vector<std::string> names;
    for (const auto& d : *devs) names.push_back(d.name);
    return nlohmann::json{{"modules_left", remaining}, {"left_for", names}};
  }
  std::vector<std::string> unloaded;
  for (int round = 1;; ++round) {
    // Passes without a pause while they make progress: a module goes once its users have.
    for (bool progress = true; progress && !remaining.empty();) {
      progress = false;
      for (auto it = remaining.begin(); it != remaining.end();) {
        auto r = sys.rdma.unload_module(*it);
        const int code = r ? 0 : r.error().code;
        if (code == EBUSY || code == EAGAIN) {
          ++it;
          continue;
        }
        if (code != 0 && code != ENOENT && code != EPERM) return r.error();  // ENOENT gone, EPERM built in
        if (code == 0) unloaded.push_back(*it);
        it = remaining.erase(it);
        progress = true;
      }
    }
    if (remaining.empty()) break;
    const bool rxe_left = std::find(remaining.begin(), remaining.end(), kRxe) != remaining.end();
    if (round >= (rxe_left ? kUnloadTries : kUnloadTriesOthers)) break;
    if (sys.clock.wait_until(sys.clock.now() + kUnloadPause, sys.interrupt) == sys::WaitResult::Interrupted) break;
  }
  if (std::find(remaining.begin(), remaining.end(), kRxe) != remaining.end())
    return make_error("rdma_rxe is still in use after " + std::to_string(kUnloadTries) +
                          " tries (a process holding an RDMA device?): left loaded",
                      EBUSY);
  // What else stays is in use by somebody else.
  return nlohmann::json{{"modules_unloaded", unloaded}, {"modules_left", remaining}};
}

Result<nlohmann::json> undo_rxe(const nlohmann::json& args, UndoContext& ctx) {
  if (args.contains("modules")) return undo_modules(args, ctx);
  return undo_device(args, ctx);
}

}  // namespace

}  // namespace rxerun::steps
