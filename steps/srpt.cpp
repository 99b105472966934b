// srpt: an SRP target in configfs, natively: LIO's backstore on a file or a
// null_blk device (core/fileio_N/NAME or core/iblock_N/NAME), ib_srpt's
// target port for an RDMA device's port (srpt/NAME, named after the port's
// GID), its TPG with LUN 0 on the backstore, the ACLs RDMA/CM logins need,
// and the RDMA/CM port ib_srpt listens on.
//
// ib_srpt names an RDMA/CM login by the address it came in on, the target's
// own (docs/kernel-notes.md, "SRP"): the ACLs are one per address of the
// device's interface, and let in every initiator that reaches it. What targetcli or blktests' srp
// scripts do with mkdir, echo and ln -s, without them.
//
// Each piece is journalled before it is made, and cleanup takes them apart
// in the reverse order the kernel needs (docs/kernel-notes.md, "SRP"): the
// ACLs, the LUN, the TPG (disabled first), the target port, the RDMA/CM
// port and the fabric when this run set them and nothing else uses them,
// the backstore and its HBA, the backing, then configfs's mount and the
// modules when this run made or loaded them.
//
// Undo leaves alone what it did not make: the backstore is told from a
// namesake by the unit serial the kernel gave it; the target port by the
// step's own TPG in it; an RDMA/CM port or a fabric someone else's targets
// still use stays. A target port of that name before the run is a clear
// error, and nothing is changed.

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "base/try.h"
#include "engine/step.h"
#include "steps/common/block_backing.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/common/modules.h"
#include "steps/common/nvme_fabrics.h"
#include "steps/common/step_hints.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// The backstore's name (in an HBA of the step's own).
constexpr const char* kBackstoreName = "rxerun";

StepResult run_srpt(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_srpt(const nlohmann::json& args, UndoContext& ctx);

void validate_srpt(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  validate_backing(params.at("backing"), "backing", complain);
}

}  // namespace

Kind srpt_kind() {
  KindSpec spec;
  spec.name = "srpt";
  spec.takes_netns = false;
  spec.needs = {Need::NetAdmin, Need::RdmaRxe};
  spec.summary =
      "Build an SRP target with LIO and ib_srpt in configfs: a backstore on a file or null_blk, a target port on an "
      "RDMA device with LUN 0, listening on RDMA/CM; undo takes it apart in reverse.";
  spec.params = {
      {.name = "device",
       .type = ParamType::String,
       .required = true,
       .help = "the RDMA device (rxe, siw) in the initial namespace whose port 1 the target serves on: rxe0"},
      {.name = "backing",
       .type = ParamType::Object,
       .required = true,
       .help = "what LUN 0 serves: file: {path, size} or null_blk: {size}",
       .fields = with_backing_fields("/run/srp-lab.img")},
      {.name = "rdma_cm_port",
       .type = ParamType::Int,
       .default_value = 5555,
       .help = "the port ib_srpt listens on for RDMA/CM logins (one for all its targets)",
       .min = 1,
       .max = 65535},
  };
  spec.facts = {
      {"target", "the target port's name in configfs (srpt/NAME): the RDMA port's GUID, 5054:00ff:fe12:3401"},
      {"tpg", "the target port's TPG, named after the backstore's serial: rxerun-1534e4e7d"},
      {"backstore", "LIO's storage object: fileio_0/rxerun or iblock_0/rxerun"},
      {"serial", "the backstore's unit serial, as the kernel made it"},
      {"device", "what backs LUN 0: the file's path or the null_blk disk (/dev/rxerun-nullb0)"},
      {"size", "the backing's size in bytes"},
      {"file_created", "whether the step created the backing file (cleanup deletes only such a file)"},
      {"rdma_cm_port", "the RDMA/CM port ib_srpt listens on"},
      {"acls",
       "the ACLs' names: the addresses of the device's interface, which RDMA/CM logins are named by "
       "(IPv6 ones written in full, fd00:0010:0000:0000:0000:0000:0000:0001)"},
      {"service_guid", "ib_srpt's identifier: what an initiator gives as target_id"},
      {.name = "left_alone",
       .help = "at its revert: what it set that is still in use and was left (the RDMA/CM port, the fabric)",
       .when = kAtRevert},
  };
  spec.example =
      "- srpt:\n"
      "    device: rxe0\n"
      "    backing: {null_blk: {size: 64MiB}}\n";
  spec.default_timeout = Duration{30'000};
  spec.validate = validate_srpt;
  return Kind{std::move(spec), run_srpt, undo_srpt};
}

namespace {

// ---- the journal's records, one per piece of the target --------------

// The serial the step gives its backstore, and the name of its TPG:
// "rxerun-" and `tag` in hex.
std::string backstore_serial(std::uint64_t tag) {
  return fmt::format("rxerun-{:x}", tag);
}

// The backstore (identity: its serial's tag).
struct BackstoreRecord {
  static constexpr std::string_view kOp = "backstore";
  std::string hba;
  std::string name;
  nlohmann::json identity;  // {"serial"}: the tag of backstore_serial()

  nlohmann::json to_args() const { return {{"op", kOp}, {"backstore", name}, {"hba", hba}}; }
  static Result<BackstoreRecord> read(JournalArgs& a) {
    BackstoreRecord r{a.text("hba"), a.text("backstore"), a.identity()};
    if (a.ok() && !r.hba.starts_with("fileio_") && !r.hba.starts_with("iblock_"))
      a.refuse("hba", "fileio_N or iblock_N");
    if (a.ok() && r.name != kBackstoreName) a.refuse("backstore", kBackstoreName);
    if (!a.ok()) return a.error();
    return r;
  }
};

// ib_srpt's fabric directory (srpt/), when the step made it.
struct FabricRecord {
  static constexpr std::string_view kOp = "fabric";
  nlohmann::json to_args() const { return {{"op", kOp}, {"fabric", "srpt"}}; }
  static Result<FabricRecord> read(JournalArgs& a) {
    if (a.text("fabric") != "srpt" && a.ok()) a.refuse("fabric", "srpt");
    if (!a.ok()) return a.error();
    return FabricRecord{};
  }
};

// The RDMA/CM port the step set (it was 0: not listening).
struct CmPortRecord {
  static constexpr std::string_view kOp = "rdma_cm_port";
  std::uint64_t port = 0;
  nlohmann::json to_args() const { return {{"op", kOp}, {"rdma_cm_port", port}}; }
  static Result<CmPortRecord> read(JournalArgs& a) {
    CmPortRecord r{a.number("rdma_cm_port", 65535)};
    if (!a.ok()) return a.error();
    return r;
  }
};

// The target port with the step's TPG in it (the TPG's LUN and ACLs go
// with it: each of them is undone by this record, in the kernel's order).
// The TPG's name is the step's own, which tells it from anybody else's.
struct SrptTargetRecord {
  static constexpr std::string_view kOp = "target";
  std::string target;
  std::string tpg;        // "rxerun-1534e4e7d"
  std::string backstore;  // "fileio_0/rxerun": the LUN's
  nlohmann::json to_args() const { return {{"op", kOp}, {"target", target}, {"tpg", tpg}, {"backstore", backstore}}; }
  static Result<SrptTargetRecord> read(JournalArgs& a) {
    SrptTargetRecord r{a.text("target"), a.text("tpg"), a.text("backstore")};
    if (a.ok() && (r.target.empty() || r.target.find('/') != std::string::npos)) a.refuse("target", "a target name");
    if (a.ok() && (!r.tpg.starts_with("rxerun-") || r.tpg.find('/') != std::string::npos))
      a.refuse("tpg", "a TPG name of rxerun's");
    if (!a.ok()) return a.error();
    return r;
  }
};

// ---- run ----------------------------------------------------------------

StepResult target_exists(const std::string& target, const std::string& device) {
  StepResult r = StepResult::error("SRP target port " + target + " (of " + device +
                                   ") exists already: this step makes its own and leaves others' alone; remove that "
                                   "one, or serve from another device");
  r.hints.push_back("a run of this scenario that was killed leaves it: rxerun cleanup SCENARIO removes what it made");
  return r;
}

// configfs (loaded, then mounted), then LIO and ib_srpt, so that cleanup
// unloads them while the tree is still visible. LIO's first HBA makes the
// kernel load every backstore plugin it has (docs/kernel-notes.md, "SRP"):
// loaded here first, they are this run's to unload.
Result<void> load_srpt_modules(StepContext& ctx, bool file, std::vector<std::string>& hints) {
  RXERUN_TRY(load_modules(ctx, {{.name = "configfs"}}, "once configfs is unmounted", &hints));
  RXERUN_TRY(ensure_configfs(ctx));
  const std::vector<ModuleRequest> wanted = {
      {.name = "ib_srpt"},
      {.name = "target_core_file"},
      {.name = "target_core_iblock"},
      {.name = "target_core_pscsi", .optional = true, .missing = "LIO's pscsi backstores"},
      {.name = "target_core_user", .optional = true, .missing = "LIO's user backstores"}};
  RXERUN_TRY(load_modules(ctx, wanted, "once no LIO backstore or SRP target is left", &hints));
  if (!file)
    RXERUN_TRY(
        load_modules(ctx, {{.name = "null_blk", .params = "nr_devices=0"}}, "once no null_blk device is left", &hints));
  return {};
}

// The backstore on the backing, in an HBA of its own (the lowest free
// index), with the step's serial.
Result<sys::LioBackstore> make_backstore(StepContext& ctx, const Backing& backing, bool file, std::uint64_t tag) {
  auto& srp = ctx.sys().srp;
  const std::string plugin = file ? "fileio" : "iblock";
  RXERUN_TRY_ASSIGN(const auto existing, srp.hbas());
  std::string hba;
  for (unsigned n = 0; hba.empty(); ++n)
    if (const std::string candidate = plugin + "_" + std::to_string(n);
        std::find(existing.begin(), existing.end(), candidate) == existing.end())
      hba = candidate;
  const sys::LioBackstore wanted{.hba = hba,
                                 .name = kBackstoreName,
                                 .path = backing.device,
                                 .size = file ? backing.size : 0,
                                 .serial = backstore_serial(tag)};
  RXERUN_TRY(ctx.will_change(BackstoreRecord{hba, kBackstoreName, nullptr}.to_args(),
                             "remove LIO backstore " + hba + "/" + kBackstoreName));
  RXERUN_TRY(srp.add_backstore(wanted));
  RXERUN_TRY_ASSIGN(const auto now, srp.backstores());
  auto it = std::find_if(now.begin(), now.end(),
                         [&](const sys::LioBackstore& b) { return b.hba == hba && b.name == kBackstoreName; });
  if (it == now.end()) return make_error("LIO backstore " + hba + "/" + kBackstoreName + " vanished after mkdir", EIO);
  RXERUN_TRY(ctx.identify({{"serial", tag}}));
  return *it;
}

// srpt/ and its RDMA/CM port: made and set when absent and 0; shared when
// another target listens on the same port already.
Result<void> ensure_fabric(StepContext& ctx, unsigned port) {
  auto& srp = ctx.sys().srp;
  RXERUN_TRY_ASSIGN(const bool fabric, srp.srpt_fabric());
  if (!fabric) {
    RXERUN_TRY(ctx.will_change(FabricRecord{}.to_args(), "remove ib_srpt's fabric (srpt) when no target is left"));
    if (auto r = srp.add_srpt_fabric(); !r && r.error().code != EEXIST) return r.error();
  }
  RXERUN_TRY_ASSIGN(const unsigned listening, srp.rdma_cm_port());
  if (listening == port) return {};
  if (listening != 0)
    return make_error("ib_srpt listens for RDMA/CM logins on port " + std::to_string(listening) +
                          " already, for all its targets: give rdma_cm_port: " + std::to_string(listening),
                      EBUSY);
  RXERUN_TRY(ctx.will_change(CmPortRecord{port}.to_args(), "stop ib_srpt listening on RDMA/CM port " +
                                                               std::to_string(port) + " when no target is left"));
  if (auto r = srp.set_rdma_cm_port(port); !r) {
    if (r.error().code == EADDRINUSE)
      return make_error("the kernel could not listen for SRP logins on RDMA/CM port " + std::to_string(port) +
                            ": another listener has it (give another rdma_cm_port), or a siw device is in another "
                            "network namespace and siw cannot listen on it (docs/kernel-notes.md, \"SRP\")",
                        EADDRINUSE);
    return r.error();
  }
  return {};
}

// The target port named after `device`'s port 1: its GUID form.
Result<std::string> target_name_of(StepContext& ctx, const std::string& device) {
  auto gids = ctx.sys().rdma.gids(device, 1);
  if (!gids) return make_error("RDMA device " + device + " has no port 1: " + gids.error().message, ENODEV);
  if (gids->empty()) return make_error("RDMA device " + device + " has no GID yet", ENODEV);
  const auto names = sys::srpt_port_names(gids->front().gid);
  if (!names) return make_error("the first GID of " + device + " is '" + gids->front().gid + "'", EIO);
  return names->guid;
}

// What ib_srpt names the RDMA/CM logins to `device` by: the addresses of its
// interface (IPv6 link-local ones aside), IPv6 ones written in full.
Result<std::vector<std::string>> login_names(StepContext& ctx, const std::string& device) {
  RXERUN_TRY_ASSIGN(const auto found, device_addresses(ctx, device));
  if (!found) return make_error("RDMA device " + device + " has no interface in the initial namespace", ENODEV);
  if (found->addresses.empty())
    return make_error(found->netdev + " (under " + device + ") has no address: RDMA/CM logins need one", EADDRNOTAVAIL);
  std::vector<std::string> names;
  for (const auto& a : found->addresses) names.push_back(sys::srpt_login_name(a));
  return names;
}

StepResult build_srpt(const Params& params, StepContext& ctx, std::vector<std::string>& hints) {
  auto& srp = ctx.sys().srp;
  const std::string device = params.str("device");
  const Params backing_params = params.object("backing");
  const bool file = backing_params.has("file");
  const auto port = static_cast<unsigned>(params.integer("rdma_cm_port"));
  RXERUN_TRY_ASSIGN(const std::string target, target_name_of(ctx, device));
  RXERUN_TRY_ASSIGN(const auto acls, login_names(ctx, device));
  RXERUN_TRY(load_srpt_modules(ctx, file, hints));
  RXERUN_TRY_ASSIGN(const auto before, srp.srpt_targets());
  if (std::any_of(before.begin(), before.end(), [&](const sys::SrptTarget& t) { return t.name == target; }))
    return target_exists(target, device);

  const std::uint64_t tag = step_tag(ctx.sys());  // the kernel makes no serial
  const std::string tpg = backstore_serial(tag);
  nlohmann::json facts = {{"target", target}, {"tpg", tpg}, {"rdma_cm_port", port}, {"acls", acls}};
  RXERUN_TRY_ASSIGN(const Backing backing, make_backing(backing_params, ctx, &hints));
  facts["device"] = backing.device;
  facts["size"] = backing.size;
  facts["file_created"] = backing.file_created;
  RXERUN_TRY_ASSIGN(const auto backstore, make_backstore(ctx, backing, file, tag));
  const std::string store = backstore.hba + "/" + backstore.name;
  facts["backstore"] = store;
  facts["serial"] = backstore.serial;

  RXERUN_TRY(ensure_fabric(ctx, port));
  RXERUN_TRY_ASSIGN(const std::string guid, srp.service_guid());
  facts["service_guid"] = guid;
  RXERUN_TRY(ctx.will_change(SrptTargetRecord{target, tpg, store}.to_args(),
                             "remove SRP target port " + target + " with its TPG, LUN and ACLs"));
  if (auto r = srp.add_srpt_target(target); !r) {
    if (r.error().code == EEXIST) return target_exists(target, device);
    return StepResult::error(r.error());
  }
  RXERUN_TRY(srp.add_tpg(target, tpg));
  RXERUN_TRY(srp.add_lun(target, tpg, {.index = 0, .backstore = store}));
  for (const auto& name : acls) RXERUN_TRY(srp.add_acl(target, tpg, name, {0}));
  RXERUN_TRY(srp.enable_tpg(target, tpg, true));
  return StepResult::ok(facts);
}

StepResult run_srpt(const Params& params, StepContext& ctx) {
  if (auto refused = refuse_other_netns(ctx, "srpt")) return *refused;
  std::vector<std::string> hints;
  StepResult r = build_srpt(params, ctx, hints);
  return with_hints(std::move(r), hints);
}

// ---- undo, one kind of record at a time --------------------------------

// The target port, while it holds the step's TPG: the TPG disabled, its
// ACLs, its LUN, the TPG, then the port.
Result<nlohmann::json> undo_target(const SrptTargetRecord& record, UndoContext& ctx) {
  auto& srp = ctx.sys().srp;
  RXERUN_TRY_ASSIGN(const auto all, srp.srpt_targets());
  auto t = std::find_if(all.begin(), all.end(), [&](const sys::SrptTarget& x) { return x.name == record.target; });
  if (t == all.end()) return nlohmann::json::object();
  for (const auto& tpg : t->tpgs) {
    if (tpg.name != record.tpg) continue;
    if (tpg.enabled) RXERUN_TRY(srp.enable_tpg(record.target, tpg.name, false));
    for (const auto& acl : tpg.acls)
      if (auto r = srp.remove_acl(record.target, tpg.name, acl.initiator); !r && r.error().code != ENOENT)
        return r.error();
    for (const auto& lun : tpg.luns)
      if (auto r = srp.remove_lun(record.target, tpg.name, lun.index); !r && r.error().code != ENOENT) return r.error();
    if (auto r = srp.remove_tpg(record.target, tpg.name); !r && r.error().code != ENOENT) return r.error();
  }
  if (auto r = srp.remove_srpt_target(record.target); !r && r.error().code != ENOENT) {
    if (r.error().code == ENOTEMPTY || r.error().code == EBUSY)
      return nlohmann::json{{"left_alone", "SRP target port " + record.target + " (it has TPGs of someone else's)"}};
    return r.error();
  }
  return nlohmann::json::object();
}

// Back to 0 (not listening) once no target port is left.
Result<nlohmann::json> undo_cm_port(const CmPortRecord& record, UndoContext& ctx) {
  auto& srp = ctx.sys().srp;
  RXERUN_TRY_ASSIGN(const bool fabric, srp.srpt_fabric());
  if (!fabric) return nlohmann::json::object();
  RXERUN_TRY_ASSIGN(const unsigned port, srp.rdma_cm_port());
  if (port != record.port) return nlohmann::json::object();  // set again since
  RXERUN_TRY_ASSIGN(const auto targets, srp.srpt_targets());
  if (!targets.empty())
    return nlohmann::json{
        {"left_alone", "RDMA/CM port " + std::to_string(port) + " (" + targets.front().name + " still serves on it)"}};
  RXERUN_TRY(srp.set_rdma_cm_port(0));
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_fabric(const FabricRecord&, UndoContext& ctx) {
  auto& srp = ctx.sys().srp;
  RXERUN_TRY_ASSIGN(const bool fabric, srp.srpt_fabric());
  if (!fabric) return nlohmann::json::object();
  if (auto r = srp.remove_srpt_fabric(); !r) {
    if (r.error().code == ENOTEMPTY || r.error().code == EBUSY)
      return nlohmann::json{{"left_alone", "ib_srpt's fabric (srpt: it has target ports of someone else's)"}};
    if (r.error().code != ENOENT) return r.error();
  }
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_backstore(const BackstoreRecord& record, UndoContext& ctx) {
  auto& srp = ctx.sys().srp;
  RXERUN_TRY_ASSIGN(const auto all, srp.backstores());
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const sys::LioBackstore& b) { return b.hba == record.hba && b.name == record.name; });
  if (it == all.end()) return nlohmann::json::object();
  if (auto tag = identity_number(record.identity, "serial"); tag && backstore_serial(*tag) != it->serial)
    return make_error("LIO backstore " + record.hba + "/" + record.name +
                      " is another one than this run made (serial " + it->serial + "): left alone");
  if (auto r = srp.remove_backstore(record.hba, record.name); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

// What still needs the modules of a record: LIO's backstores and SRP
// targets, null_blk's devices.
Result<std::vector<std::string>> srpt_users(const ModulesRecord& record, UndoContext& ctx) {
  std::vector<std::string> users;
  auto has = [&](const char* m) {
    return std::find(record.modules.begin(), record.modules.end(), m) != record.modules.end();
  };
  if (has("ib_srpt") || has("target_core_mod") || has("configfs")) {
    RXERUN_TRY_ASSIGN(const auto targets, ctx.sys().srp.srpt_targets());
    for (const auto& t : targets) users.push_back("SRP target port " + t.name);
    RXERUN_TRY_ASSIGN(const auto stores, ctx.sys().srp.backstores());
    for (const auto& b : stores) users.push_back("LIO backstore " + b.hba + "/" + b.name);
  }
  if (has("null_blk") || has("configfs")) {
    RXERUN_TRY_ASSIGN(const auto blks, null_blk_users(ctx));
    users.insert(users.end(), blks.begin(), blks.end());
  }
  return users;
}

Result<nlohmann::json> undo_srpt_modules(const ModulesRecord& record, UndoContext& ctx) {
  return unload_modules(record, ctx, [&](UndoContext& c) { return srpt_users(record, c); });
}

const RecordUndo kSrptUndos[] = {
    undo_of<ModulesRecord, undo_srpt_modules>(),     undo_of<SrptTargetRecord, undo_target>(),
    undo_of<CmPortRecord, undo_cm_port>(),           undo_of<FabricRecord, undo_fabric>(),
    undo_of<BackstoreRecord, undo_backstore>(),      undo_of<NullBlkRecord, undo_null_blk>(),
    undo_of<BackingFileRecord, undo_backing_file>(), undo_of<ConfigfsMountRecord, undo_configfs_mount>(),
};

Result<nlohmann::json> undo_srpt(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  return dispatch_undo(a, ctx, kSrptUndos);
}

}  // namespace

}  // namespace rxerun::steps
