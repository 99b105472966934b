// nfsd: an NFS server with an RDMA listener, natively, in the step's
// network namespace: nfsd's versions (NFSv4 only), its listener ("rdma
// 20049" in its port list) and its threads, written through nfsd's own
// filesystem; and an export of a directory to the lab's clients, written
// into the kernel's export caches as rpc.mountd would write it, the
// directory as the NFSv4 root (fsid 0) of a client domain of the step's own.
// Without `dir`, the directory is a tmpfs the step mounts (an NFS export
// needs a filesystem the kernel can export; tmpfs is one).
//
// nfsd has one instance per network namespace, and the kernel cannot take
// one listener back out of a running nfsd: the step starts nfsd only where
// none runs, so that stopping it at cleanup stops nothing of anybody
// else's (a host's own nfsd lives in the initial namespace; a lab serves
// from a namespace of its own, or from the lab VM).
// docs/kernel-notes.md, "NFS over RDMA".
//
// Each piece is journalled before it is made; undo, in reverse: the export
// and the clients (written again expired), nfsd stopped (its threads and
// listener go, and the kernel empties the export caches) while it is the
// one the step started, the versions as they were, the tmpfs unmounted
// and its directory removed, the modules unloaded.

#include <algorithm>
#include <cerrno>
#include <set>

#include <fmt/format.h>

#include "base/try.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/common/modules.h"
#include "steps/common/step_hints.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// NFSv4 only: NFSv3 needs rpc.mountd's MOUNT protocol, lockd and rpcbind
// (docs/kernel-notes.md, "NFS over RDMA").
constexpr const char* kVersions = "-2 -3 +4 +4.1 +4.2";
// What the export's options start from: rw, sync, no_root_squash,
// no_wdelay, and these.
// The shortest grace period nfsd takes (seconds).
constexpr unsigned kGraceTime = 10;
constexpr unsigned kDefaultFlags = 0x2 /* insecure */ | 0x400 /* no_subtree_check */ | sys::kNfsExportFsid;

StepResult run_nfsd(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_nfsd(const nlohmann::json& args, UndoContext& ctx);

// The bit an export option sets or clears.
std::optional<std::pair<unsigned, bool>> export_option(const std::string& word) {
  for (const auto& f : sys::kNfsExportFlags) {
    if (word == f.set) return std::pair{f.bit, true};
    if (*f.unset && word == f.unset) return std::pair{f.bit, false};
  }
  if (word == "secure") return std::pair{0x2u, false};
  if (word == "subtree_check") return std::pair{0x400u, false};
  return std::nullopt;
}

void validate_nfsd(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  if (params.contains("options") && params.at("options").is_array())
    for (const auto& o : params.at("options"))
      if (o.is_string() && !export_option(o.get<std::string>()))
        complain("options", "'" + o.get<std::string>() +
                                "' is no export option rxerun sets: ro, rw, root_squash, no_root_squash, all_squash, "
                                "sync, async, wdelay, no_wdelay, secure, insecure, subtree_check, no_subtree_check");
  if (params.contains("dir") && params.at("dir").is_string() && !params.at("dir").get<std::string>().starts_with("/"))
    complain("dir", "'dir' must be an absolute path");
}

}  // namespace

Kind nfsd_kind() {
  KindSpec spec;
  spec.name = "nfsd";
  spec.needs = {Need::NetAdmin, Need::RdmaRxe};
  spec.summary =
      "Start an NFSv4 server with an RDMA listener in the step's namespace and export a directory to the lab's "
      "clients, natively (nfsd's filesystem, the kernel's export caches); undo stops it and withdraws the export.";
  spec.params = {
      {.name = "clients",
       .type = ParamType::AddressList,
       .required = true,
       .help = "the addresses the clients mount from: [10.10.0.2]"},
      {.name = "dir",
       .type = ParamType::String,
       .help = "the directory to export (on a filesystem the kernel can export: ext4, xfs, tmpfs, ...); default a "
               "tmpfs of `size` the step mounts"},
      {.name = "size",
       .type = ParamType::Size,
       .default_value = 64 * 1024 * 1024,
       .help = "the tmpfs's size, without `dir`",
       .min = 1024 * 1024},
      {.name = "port",
       .type = ParamType::Int,
       .default_value = 20049,
       .help = "the RDMA listener's port",
       .min = 1,
       .max = 65535},
      {.name = "threads", .type = ParamType::Int, .default_value = 4, .help = "nfsd's threads", .min = 1, .max = 64},
      {.name = "options",
       .type = ParamType::List,
       .help = "export options on top of rw, sync, no_root_squash, no_wdelay, insecure, no_subtree_check: [ro], "
               "[root_squash], [async]",
       .fields = {{.name = "option", .type = ParamType::String}}},
  };
  spec.facts = {
      {"dir", "the exported directory (a client's files land here)"},
      {"tmpfs", "whether the step mounted a tmpfs there"},
      {"domain", "the client domain of the export, the step's own: rxerun-1534e4e7d"},
      {"clients", "the client addresses let into the domain"},
      {"port", "the RDMA listener's port"},
      {"listeners", "nfsd's port list as the kernel shows it: [\"rdma 20049\", \"rdma 20049\"] (IPv4 and IPv6)"},
      {"threads", "nfsd's threads as the kernel shows them"},
      {"versions", "the NFS versions nfsd offers, as the kernel shows them: \"-3 +4 +4.1 +4.2\""},
      {"grace_ended",
       "whether nfsd ended its NFSv4 grace period at the start (6.1, when the step loaded nfsd); else new clients' "
       "opens wait out a grace period of 10 s"},
      {"options", "the export's options as the kernel shows them: rw,insecure,no_root_squash,sync,...,fsid=0"},
  };
  spec.example =
      "- nfsd: {clients: [10.10.0.2]}\n"
      "  expect: {port: 20049}\n";
  spec.default_timeout = Duration{30'000};
  spec.validate = validate_nfsd;
  return Kind{std::move(spec), run_nfsd, undo_nfsd};
}

namespace {

// ---- the journal's records --------------------------------------------

// A directory the step made (to mount the tmpfs on).
struct DirRecord {
  static constexpr std::string_view kOp = "dir";
  std::string dir;
  bool records = false;  // nfsd's client records go with it
  nlohmann::json to_args() const { return {{"op", kOp}, {"dir", dir}, {"records", records}}; }
  static Result<DirRecord> read(JournalArgs& a) {
    DirRecord r{a.text("dir"), a.flag("records")};
    if (a.ok() && !r.dir.starts_with("/run/rxerun-nfs")) a.refuse("dir", "a directory of rxerun's under /run");
    if (!a.ok()) return a.error();
    return r;
  }
};

// A filesystem the step mounted on a directory of its own: nfsd's control
// filesystem, the tmpfs to export (identity: the mount's ID).
struct MountRecord {
  static constexpr std::string_view kOp = "mount";
  std::string dir;
  std::string fstype;       // "nfsd", "tmpfs"
  nlohmann::json identity;  // {"mount_id"}
  nlohmann::json to_args() const { return {{"op", kOp}, {"mount", dir}, {"fstype", fstype}}; }
  static Result<MountRecord> read(JournalArgs& a) {
    MountRecord r{a.text("mount"), a.text("fstype"), a.identity()};
    if (a.ok() && !r.dir.starts_with("/run/rxerun-nfs")) a.refuse("mount", "a directory of rxerun's under /run");
    if (a.ok() && r.fstype != "nfsd" && r.fstype != "tmpfs") a.refuse("fstype", "nfsd or tmpfs");
    if (!a.ok()) return a.error();
    return r;
  }
};

// Where nfsd kept its client records before the step pointed it at a
// directory of its own.
struct RecoveryRecord {
  static constexpr std::string_view kOp = "recovery";
  std::string ctl;
  std::string before;
  std::string set;
  nlohmann::json to_args() const { return {{"op", kOp}, {"recovery", before}, {"set", set}, {"ctl", ctl}}; }
  static Result<RecoveryRecord> read(JournalArgs& a) {
    RecoveryRecord r{a.text("ctl"), a.text("recovery"), a.text("set")};
    if (!a.ok()) return a.error();
    return r;
  }
};

// nfsd's grace period before the step shortened it (seconds).
struct GraceRecord {
  static constexpr std::string_view kOp = "grace";
  std::string ctl;
  std::uint64_t before = 0, set = 0;
  nlohmann::json to_args() const { return {{"op", kOp}, {"grace", before}, {"set", set}, {"ctl", ctl}}; }
  static Result<GraceRecord> read(JournalArgs& a) {
    GraceRecord r{a.text("ctl"), a.number("grace", 3600), a.number("set", 3600)};
    if (!a.ok()) return a.error();
    return r;
  }
};

// The versions nfsd offered before the step changed them.
struct VersionsRecord {
  static constexpr std::string_view kOp = "versions";
  std::string ctl;  // where nfsd's filesystem is mounted
  std::string before, after;
  nlohmann::json to_args() const { return {{"op", kOp}, {"versions", before}, {"set", after}, {"ctl", ctl}}; }
  static Result<VersionsRecord> read(JournalArgs& a) {
    VersionsRecord r{a.text("ctl"), a.text("versions"), a.text("set")};
    if (!a.ok()) return a.error();
    return r;
  }
};

// nfsd, started by the step (identity: its namespace).
struct NfsdRecord {
  static constexpr std::string_view kOp = "nfsd";
  std::string ctl;  // where nfsd's filesystem is mounted
  std::uint64_t port = 0;
  std::uint64_t threads = 0;
  nlohmann::json identity;  // {"netns_inode"}
  nlohmann::json to_args() const {
    return {{"op", kOp}, {"nfsd", "rdma"}, {"ctl", ctl}, {"port", port}, {"threads", threads}};
  }
  static Result<NfsdRecord> read(JournalArgs& a) {
    if (a.text("nfsd") != "rdma" && a.ok()) a.refuse("nfsd", "rdma");
    NfsdRecord r{a.text("ctl"), a.number("port", 65535), a.number("threads", 64), a.identity()};
    if (!a.ok()) return a.error();
    return r;
  }
};

// The export, and the clients let into its domain (the step's own).
struct ExportRecord {
  static constexpr std::string_view kOp = "export";
  std::string domain;
  std::string path;
  std::vector<std::string> clients;
  nlohmann::json to_args() const { return {{"op", kOp}, {"export", path}, {"domain", domain}, {"clients", clients}}; }
  static Result<ExportRecord> read(JournalArgs& a) {
    ExportRecord r{a.text("domain"), a.text("export"), a.texts("clients")};
    if (a.ok() && !r.domain.starts_with("rxerun-")) a.refuse("domain", "a client domain of rxerun's");
    if (!a.ok()) return a.error();
    return r;
  }
};

// ---- run ----------------------------------------------------------------

StepResult nfsd_runs(const sys::NfsdState& state) {
  std::string listeners;
  for (const auto& l : state.listeners) listeners += (listeners.empty() ? "" : ", ") + l;
  StepResult r = StepResult::error(
      "nfsd runs in this network namespace already (" + std::to_string(state.threads) + " threads" +
      (listeners.empty() ? "" : ", listening on " + listeners) +
      "): this step starts an nfsd of its own only where none runs, and never changes one it did not start");
  r.hints.push_back("serve from a namespace of the lab's own (netns: on the step), where nfsd is the lab's alone");
  r.hints.push_back("a run of this scenario that was killed leaves it: rxerun cleanup SCENARIO stops what it started");
  return r;
}

// A filesystem on a directory of the step's own: "/run/rxerun-nfsd-TAG"
// for nfsd's, "/run/rxerun-nfs-TAG" for the tmpfs.
Result<std::string> mount_own(StepContext& ctx, const std::string& dir, const std::string& fstype,
                              const std::string& options) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY(ctx.will_change(DirRecord{dir}.to_args(), "remove directory " + dir));
  RXERUN_TRY(nfs.make_dir(dir));
  RXERUN_TRY(ctx.will_change(MountRecord{dir, fstype, nullptr}.to_args(), "unmount the " + fstype + " on " + dir));
  RXERUN_TRY(nfs.mount(fstype, dir, fstype, options));
  RXERUN_TRY_ASSIGN(const auto mounts, nfs.mounts());
  if (const auto m = sys::mount_at(mounts, dir)) RXERUN_TRY(ctx.identify({{"mount_id", m->id}}));
  return dir;
}

// On a kernel that keeps NFSv4 client records in a directory (6.1), a
// directory of the step's own: with it nfsd tracks clients, and ends its
// grace period when asked. Where that directory is, is nfsd's one setting
// for every namespace, and goes with the module: only when this step loaded
// nfsd (docs/kernel-notes.md, "NFS over RDMA").
Result<void> own_records(StepContext& ctx, const std::string& ctl, const std::string& tag, bool loaded_nfsd) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY_ASSIGN(const auto recovery, nfs.recovery_dir(ctl));
  if (!recovery || !loaded_nfsd) return {};
  const std::string dir = "/run/rxerun-nfs-records-" + tag;
  RXERUN_TRY(
      ctx.will_change(DirRecord{dir, true}.to_args(), "remove directory " + dir + " with nfsd's client records"));
  RXERUN_TRY(nfs.make_dir(dir));
  RXERUN_TRY(ctx.will_change(RecoveryRecord{ctl, *recovery, dir}.to_args(),
                             "keep nfsd's client records in " + *recovery + " again"));
  return nfs.set_recovery_dir(ctl, dir);
}

// nfsd's grace period and versions, its RDMA listener, its threads.
Result<sys::NfsdState> start_nfsd(StepContext& ctx, const std::string& ctl, const sys::NfsdState& before, unsigned port,
                                  unsigned threads, const std::string& tag, bool loaded_nfsd) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY(own_records(ctx, ctl, tag, loaded_nfsd));
  // Where it cannot end the grace period at once, the shortest one the
  // kernel takes: new clients' opens wait it out.
  RXERUN_TRY_ASSIGN(const unsigned grace, nfs.grace_time(ctl));
  if (grace != kGraceTime) {
    RXERUN_TRY(ctx.will_change(GraceRecord{ctl, grace, kGraceTime}.to_args(),
                               "give nfsd a grace period of " + std::to_string(grace) + " s again"));
    RXERUN_TRY(nfs.set_grace_time(ctl, kGraceTime));
  }
  if (before.versions != kVersions) {
    RXERUN_TRY(ctx.will_change(VersionsRecord{ctl, before.versions, kVersions}.to_args(),
                               "offer NFS versions " + before.versions + " again"));
    RXERUN_TRY(nfs.set_versions(ctl, kVersions));
  }
  RXERUN_TRY_ASSIGN(const auto identity, netns_identity(ctx.sys()));
  RXERUN_TRY(ctx.will_change(NfsdRecord{ctl, port, threads, nullptr}.to_args(), "stop nfsd (started by this run)"));
  RXERUN_TRY(ctx.identify(identity));
  if (auto r = nfs.add_listener(ctl, "rdma", port); !r) {
    if (r.error().code == EADDRINUSE)
      return make_error("the kernel could not listen for RDMA on port " + std::to_string(port) +
                            ": it is taken in this namespace (give another port), or, with siw devices in several "
                            "namespaces, siw could not listen on one of them (docs/kernel-notes.md, \"NFS over "
                            "RDMA\")",
                        EADDRINUSE);
    return r.error();
  }
  RXERUN_TRY(nfs.set_threads(ctl, threads));
  // No client has state to reclaim from before the start: new ones need not
  // wait out the grace period (90 s) to open files.
  RXERUN_TRY_ASSIGN(const bool ended, nfs.end_grace(ctl));
  RXERUN_TRY_ASSIGN(auto state, nfs.nfsd(ctl));
  state.grace_ended = state.grace_ended || ended;  // the kernel ends it in the background
  return state;
}

StepResult serve(const Params& params, StepContext& ctx, std::vector<std::string>& hints) {
  auto& nfs = ctx.sys().nfs;
  const auto port = static_cast<unsigned>(params.integer("port"));
  const auto threads = static_cast<unsigned>(params.integer("threads"));
  const auto clients = params.at("clients").get<std::vector<std::string>>();
  unsigned flags = kDefaultFlags;
  if (params.has("options"))
    for (const auto& word : params.at("options").get<std::vector<std::string>>())
      if (const auto o = export_option(word)) flags = o->second ? (flags | o->first) : (flags & ~o->first);

  // rpcrdma before nfsd asks for its RDMA transport; rpcsec_gss_krb5
  // before the kernel loads it on its own for a mount, so that cleanup
  // unloads it too.
  RXERUN_TRY_ASSIGN(const auto loaded,
                    load_modules(ctx,
                                 {{.name = "nfsd"},
                                  {.name = "rpcrdma"},
                                  {.name = "rpcsec_gss_krb5", .optional = true, .missing = "Kerberos for NFS"}},
                                 "once nfsd is stopped", &hints));
  const bool loaded_nfsd = std::find(loaded.begin(), loaded.end(), "nfsd") != loaded.end();
  // nfsd's filesystem, mounted here, is this namespace's (and keeps nfsd
  // running: the kernel stops it with the last mount).
  const std::string tag = fmt::format("{:x}", step_tag(ctx.sys()));
  RXERUN_TRY_ASSIGN(const std::string ctl, mount_own(ctx, "/run/rxerun-nfsd-" + tag, "nfsd", ""));
  RXERUN_TRY_ASSIGN(const auto before, nfs.nfsd(ctl));
  if (before.running()) return nfsd_runs(before);

  std::string dir;
  const bool tmpfs = !params.has("dir");
  if (tmpfs) {
    RXERUN_TRY_ASSIGN(dir, mount_own(ctx, "/run/rxerun-nfs-" + tag, "tmpfs",
                                     "size=" + std::to_string(params.size("size")) + ",mode=0777"));
  } else {
    dir = params.str("dir");
    RXERUN_TRY_ASSIGN(const bool is_dir, nfs.is_dir(dir));
    if (!is_dir) return StepResult::error("no directory " + dir + " to export");
  }

  RXERUN_TRY_ASSIGN(const auto running, start_nfsd(ctx, ctl, before, port, threads, tag, loaded_nfsd));
  const std::string domain = "rxerun-" + tag;
  RXERUN_TRY(ctx.will_change(ExportRecord{domain, dir, clients}.to_args(),
                             "withdraw the export of " + dir + " and forget its clients"));
  for (const auto& address : clients) RXERUN_TRY(nfs.add_client({address, domain}));
  if (auto r = nfs.add_export(domain, dir, flags); !r) {
    if (r.error().code == EINVAL)
      return StepResult::error("the kernel cannot export " + dir +
                               " (its filesystem has no NFS export support): give a dir on ext4, xfs or tmpfs, or "
                               "leave dir out for a tmpfs");
    return StepResult::error(r.error());
  }
  RXERUN_TRY_ASSIGN(const auto exports, nfs.exports());
  std::string options;
  for (const auto& e : exports)
    if (e.domain == domain && e.path == dir) options = e.options;
  return StepResult::ok({{"dir", dir},
                         {"tmpfs", tmpfs},
                         {"domain", domain},
                         {"clients", clients},
                         {"port", port},
                         {"listeners", running.listeners},
                         {"threads", running.threads},
                         {"versions", running.versions},
                         {"grace_ended", running.grace_ended},
                         {"options", options}});
}

StepResult run_nfsd(const Params& params, StepContext& ctx) {
  std::vector<std::string> hints;
  StepResult r = serve(params, ctx, hints);
  return with_hints(std::move(r), hints);
}

// ---- undo, one kind of record at a time --------------------------------

// nfsd's state through the filesystem the step mounted on `ctl`; nullopt
// once that mount went (and nfsd with it, unless another mount keeps it).
Result<std::optional<sys::NfsdState>> nfsd_at(UndoContext& ctx, const std::string& ctl) {
  auto state = ctx.sys().nfs.nfsd(ctl);
  if (!state && state.error().code == ENOENT) return std::optional<sys::NfsdState>();
  if (!state) return state.error();
  return std::optional<sys::NfsdState>(*state);
}

Result<nlohmann::json> undo_export(const ExportRecord& record, UndoContext& ctx) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY_ASSIGN(const auto exports, nfs.exports());
  if (std::any_of(exports.begin(), exports.end(),
                  [&](const sys::NfsExport& e) { return e.domain == record.domain && e.path == record.path; }))
    RXERUN_TRY(nfs.remove_export(record.domain, record.path));
  // Only the addresses still in the step's domain: one written since into
  // another domain is somebody else's.
  RXERUN_TRY_ASSIGN(const auto clients, nfs.clients());
  for (const auto& c : clients)
    if (c.domain == record.domain) RXERUN_TRY(nfs.remove_client(c.address));
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_nfsd_started(const NfsdRecord& record, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto now, netns_identity(ctx.sys()));
  if (differs(record.identity, now))
    return make_error("the namespace is another one than the run started nfsd in: its nfsd left alone");
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY_ASSIGN(const auto state, nfsd_at(ctx, record.ctl));
  if (!state || !state->running()) return nlohmann::json::object();
  // Started by this run: its listener alone, and as many threads (a crash
  // between the listener and the threads leaves none).
  const std::string ours = "rdma " + std::to_string(record.port);
  const bool only_ours =
      std::all_of(state->listeners.begin(), state->listeners.end(), [&](const std::string& l) { return l == ours; });
  if (!only_ours || (state->threads != 0 && state->threads != record.threads))
    return make_error("nfsd here runs with " + std::to_string(state->threads) + " threads and other listeners than " +
                      ours + ": it is not the one this run started, left alone");
  RXERUN_TRY(nfs.set_threads(record.ctl, 0));
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_versions(const VersionsRecord& record, UndoContext& ctx) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY_ASSIGN(const auto state, nfsd_at(ctx, record.ctl));
  if (!state || state->running()) return nlohmann::json::object();  // its filesystem went, or nfsd started again
  RXERUN_TRY(nfs.set_versions(record.ctl, record.before));
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_own_mount(const MountRecord& record, UndoContext& ctx) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY_ASSIGN(const auto mounts, nfs.mounts());
  const auto m = sys::mount_at(mounts, record.dir);
  if (!m || m->fstype != record.fstype) return nlohmann::json::object();
  if (const auto id = identity_number(record.identity, "mount_id"); id && *id != m->id)
    return make_error("the " + record.fstype + " on " + record.dir +
                      " is another mount than this run made: left alone");
  if (record.fstype == "nfsd") {
    // The last mount of a namespace's nfsd filesystem going stops its
    // nfsd: one that still runs now is not the run's (stopped by now), and
    // keeps this mount unless another mount of the filesystem is there.
    RXERUN_TRY_ASSIGN(const auto state, nfs.nfsd(record.dir));
    const bool another = std::any_of(mounts.begin(), mounts.end(), [&](const sys::MountEntry& x) {
      return x.id != m->id && x.fstype == "nfsd" && x.device == m->device;
    });
    if (state.running() && !another)
      return make_error("nfsd's filesystem on " + record.dir + " keeps an nfsd that is not this run's running (" +
                        std::to_string(state.threads) + " threads): left mounted");
  }
  RXERUN_TRY(nfs.unmount(record.dir));
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_recovery(const RecoveryRecord& record, UndoContext& ctx) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY_ASSIGN(const auto state, nfsd_at(ctx, record.ctl));
  if (!state) return nlohmann::json::object();
  RXERUN_TRY_ASSIGN(const auto now, nfs.recovery_dir(record.ctl));
  if (state->running() || now != record.set) return nlohmann::json::object();  // started or set again since
  // The kernel takes only a directory that is there; the setting goes with
  // nfsd's module, which this run loaded (and unloads next).
  if (auto r = nfs.set_recovery_dir(record.ctl, record.before); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_grace(const GraceRecord& record, UndoContext& ctx) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY_ASSIGN(const auto state, nfsd_at(ctx, record.ctl));
  if (!state) return nlohmann::json::object();
  RXERUN_TRY_ASSIGN(const unsigned now, nfs.grace_time(record.ctl));
  if (state->running() || now != record.set) return nlohmann::json::object();  // started or set again since
  RXERUN_TRY(nfs.set_grace_time(record.ctl, static_cast<unsigned>(record.before)));
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_dir(const DirRecord& record, UndoContext& ctx) {
  auto& nfs = ctx.sys().nfs;
  if (auto r = record.records ? nfs.remove_records_dir(record.dir) : nfs.remove_dir(record.dir);
      !r && r.error().code != ENOENT)
    return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_nfsd_modules(const ModulesRecord& record, UndoContext& ctx) {
  // An nfsd of somebody else's holds nfsd loaded: the kernel's use counts decide.
  return unload_modules(record, ctx, {});
}

const RecordUndo kNfsdUndos[] = {
    undo_of<ModulesRecord, undo_nfsd_modules>(), undo_of<DirRecord, undo_dir>(),
    undo_of<MountRecord, undo_own_mount>(),      undo_of<RecoveryRecord, undo_recovery>(),
    undo_of<GraceRecord, undo_grace>(),          undo_of<VersionsRecord, undo_versions>(),
    undo_of<NfsdRecord, undo_nfsd_started>(),    undo_of<ExportRecord, undo_export>(),
};

Result<nlohmann::json> undo_nfsd(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  return dispatch_undo(a, ctx, kNfsdUndos);
}

}  // namespace

}  // namespace rxerun::steps
