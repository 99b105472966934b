// nfs_mount: an NFSv4 mount over RDMA, natively: mount(2) of "nfs4" with
// the options as text ("vers=4.2,proto=rdma,port=20049,addr=..."), what
// mount.nfs would pass, from the step's network namespace (the kernel's
// RPC client connects from there) into rxerun's mount namespace. Facts are
// read back from /proc/self/mountinfo: the transport, version and port the
// kernel really uses, so that a lab proves its NFS runs over RDMA and not
// TCP. A mount the kernel refuses is `fail`, with the errno and the
// kernel's NFS and RPC lines.
//
// The mount point is made when absent (and removed at undo). The mount is
// journalled before mount(2); undo unmounts it while the mount on that
// point is the one the run made (its mount ID). A server that no longer
// answers would hold the unmount for minutes: after 30 s the mount's NFS
// client is shut down, where the kernel can (docs/kernel-notes.md).

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

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

StepResult run_nfs_mount(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_nfs_mount(const nlohmann::json& args, UndoContext& ctx);

void validate_nfs_mount(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  if (params.contains("mountpoint") && params.at("mountpoint").is_string() &&
      !params.at("mountpoint").get<std::string>().starts_with("/"))
    complain("mountpoint", "'mountpoint' must be an absolute path");
  if (params.contains("path") && params.at("path").is_string() &&
      !params.at("path").get<std::string>().starts_with("/"))
    complain("path", "'path' must start with '/': the server's NFSv4 root is '/'");
  if (params.contains("options") && params.at("options").is_array())
    for (const auto& o : params.at("options"))
      if (o.is_string())
        for (const char* owned : {"vers=", "proto=", "port=", "addr="})
          if (o.get<std::string>().starts_with(owned))
            complain("options", "'" + o.get<std::string>() + "': " + std::string(owned, std::strlen(owned) - 1) +
                                    " is a parameter of its own (version, port, server)");
}

}  // namespace

Kind nfs_mount_kind() {
  KindSpec spec;
  spec.name = "nfs_mount";
  spec.needs = {Need::NetAdmin, Need::RdmaRxe};
  spec.summary =
      "Mount an NFSv4 export over RDMA (mount(2) with proto=rdma) from the step's namespace; facts from "
      "/proc/self/mountinfo prove the transport; undo unmounts.";
  spec.params = {
      {.name = "server", .type = ParamType::Address, .required = true, .help = "the server's address: 10.10.0.1"},
      {.name = "path",
       .type = ParamType::String,
       .default_value = "/",
       .help = "the path on the server: its NFSv4 root"},
      {.name = "port",
       .type = ParamType::Int,
       .default_value = 20049,
       .help = "the server's RDMA port",
       .min = 1,
       .max = 65535},
      {.name = "version",
       .type = ParamType::Enum,
       .default_value = "4.2",
       .help = "the NFS version",
       .choices = {"4.0", "4.1", "4.2"}},
      {.name = "mountpoint",
       .type = ParamType::String,
       .help = "where to mount; default a directory the step makes under /run"},
      {.name = "options",
       .type = ParamType::List,
       .help = "more mount options, as nfs(5) spells them: [soft, timeo=50]",
       .fields = {{.name = "option", .type = ParamType::String}}},
  };
  spec.facts = {
      {"mountpoint", "where the export is mounted"},
      {"source", "the mount's source: 10.10.0.1:/"},
      {"transport", "the transport the kernel uses, from mountinfo's proto=: rdma"},
      {"version", "the NFS version the kernel uses (vers=): 4.2"},
      {"port", "the server's port the kernel uses"},
      {"clientaddr", "the client's address the kernel uses (clientaddr=)"},
      {"options", "the mount's options as /proc/self/mountinfo shows them"},
      {"errno", "when the kernel refused the mount: its errno (ECONNREFUSED: nobody serves there)"},
      {"error", "when the kernel refused the mount: what the errno means"},
      {.name = "client_shut_down",
       .help = "at its revert: whether the unmount shut the mount's NFS client down, its server silent for 30 s "
               "(kernels with /sys/fs/nfs/DEVICE/shutdown: 7.3, not 6.1)",
       .when = kAtRevert},
  };
  spec.example =
      "- nfs_mount: {server: 10.10.0.1}\n"
      "  expect: {transport: rdma}\n";
  spec.default_timeout = Duration{60'000};
  spec.validate = validate_nfs_mount;
  return Kind{std::move(spec), run_nfs_mount, undo_nfs_mount};
}

namespace {

// How long an unmount may wait on its server before the mount's NFS client
// is shut down: a healthy unmount takes well under a second, a server that
// no longer answers holds it for its RPCs' timeouts (three minutes).
constexpr Duration kServerSilence{30'000};

// A mount point the step made.
struct MountDirRecord {
  static constexpr std::string_view kOp = "dir";
  std::string dir;
  nlohmann::json to_args() const { return {{"op", kOp}, {"dir", dir}}; }
  static Result<MountDirRecord> read(JournalArgs& a) {
    MountDirRecord r{a.text("dir")};
    if (a.ok() && !r.dir.starts_with("/")) a.refuse("dir", "an absolute path");
    if (!a.ok()) return a.error();
    return r;
  }
};

// The mount (identity: its mount ID, once the kernel made it).
struct NfsMountRecord {
  static constexpr std::string_view kOp = "mount";
  std::string mountpoint;
  std::string source;
  nlohmann::json identity;  // {"mount_id"}
  nlohmann::json to_args() const { return {{"op", kOp}, {"mount", mountpoint}, {"source", source}}; }
  static Result<NfsMountRecord> read(JournalArgs& a) {
    NfsMountRecord r{a.text("mount"), a.text("source"), a.identity()};
    if (a.ok() && !r.mountpoint.starts_with("/")) a.refuse("mount", "an absolute path");
    if (!a.ok()) return a.error();
    return r;
  }
};

StepResult mount_refused(const Error& e, const std::string& source, StepContext& ctx, std::uint64_t since) {
  std::vector<std::string> kernel_log;
  for (const auto& record : ctx.sys().kernel_log.records(since))
    if (record.from_kernel() && sys::is_nfs_kernel_message(record.message))
      kernel_log.push_back(sys::dmesg_line(record));
  StepResult r = kernel_refusal(e.code, "the kernel refused to mount " + source + " over RDMA", kernel_log, {});
  if (e.code == ECONNREFUSED || e.code == ETIMEDOUT || e.code == EIO || e.code == ECONNRESET)
    r.hints.push_back("nobody serves there: is an nfsd step listening on that address and port?");
  if (e.code == EACCES || e.code == EPERM)
    r.hints.push_back("the server does not export to this client: is its address among the nfsd step's clients?");
  return r;
}

StepResult mount_it(const Params& params, StepContext& ctx, std::vector<std::string>& hints) {
  auto& nfs = ctx.sys().nfs;
  const std::string server = params.str("server");
  const auto port = params.integer("port");
  const bool v6 = server.find(':') != std::string::npos;
  const std::string source = (v6 ? "[" + server + "]" : server) + ":" + params.str("path");
  std::string options = "vers=" + params.str("version") + ",proto=" + std::string(v6 ? "rdma6" : "rdma") +
                        ",port=" + std::to_string(port) + ",addr=" + server;
  if (params.has("options"))
    for (const auto& o : params.at("options").get<std::vector<std::string>>()) options += "," + o;

  RXERUN_TRY(load_modules(ctx,
                          {{.name = "nfsv4"},
                           {.name = "rpcrdma"},
                           {.name = "rpcsec_gss_krb5", .optional = true, .missing = "Kerberos for NFS"}},
                          "once no NFS mount is left", &hints));
  std::string mountpoint = params.has("mountpoint") ? params.str("mountpoint") : "";
  if (mountpoint.empty()) mountpoint = fmt::format("/run/rxerun-nfs-mnt-{:x}", step_tag(ctx.sys()));
  RXERUN_TRY_ASSIGN(const bool there, nfs.is_dir(mountpoint));
  if (!there) {
    RXERUN_TRY(ctx.will_change(MountDirRecord{mountpoint}.to_args(), "remove directory " + mountpoint));
    RXERUN_TRY(nfs.make_dir(mountpoint));
  }
  const std::uint64_t since = ctx.sys().kernel_log.now();
  RXERUN_TRY(ctx.will_change(NfsMountRecord{mountpoint, source, nullptr}.to_args(), "unmount " + mountpoint));
  if (auto r = nfs.mount(source, mountpoint, "nfs4", options); !r) return mount_refused(r.error(), source, ctx, since);
  RXERUN_TRY_ASSIGN(const auto mounts, nfs.mounts());
  const auto m = sys::mount_at(mounts, mountpoint);
  if (!m) return StepResult::error("the kernel took the mount but /proc/self/mountinfo does not list " + mountpoint);
  RXERUN_TRY(ctx.identify({{"mount_id", m->id}}));
  nlohmann::json facts = {{"mountpoint", mountpoint},
                          {"source", m->source},
                          {"transport", sys::option_value(m->options, "proto")},
                          {"version", sys::option_value(m->options, "vers")},
                          {"clientaddr", sys::option_value(m->options, "clientaddr")},
                          {"options", m->options}};
  const std::string port_text = sys::option_value(m->options, "port");
  unsigned used_port = 0;
  if (auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), used_port);
      ec == std::errc() && end == port_text.data() + port_text.size() && !port_text.empty())
    facts["port"] = used_port;
  return StepResult::ok(facts);
}

StepResult run_nfs_mount(const Params& params, StepContext& ctx) {
  std::vector<std::string> hints;
  StepResult r = mount_it(params, ctx, hints);
  return with_hints(std::move(r), hints);
}

Result<nlohmann::json> undo_mount(const NfsMountRecord& record, UndoContext& ctx) {
  auto& nfs = ctx.sys().nfs;
  RXERUN_TRY_ASSIGN(const auto mounts, nfs.mounts());
  const auto m = sys::mount_at(mounts, record.mountpoint);
  if (!m || (m->fstype != "nfs4" && m->fstype != "nfs")) return nlohmann::json::object();
  if (const auto id = identity_number(record.identity, "mount_id"); id ? *id != m->id : m->source != record.source)
    return make_error("the NFS mount on " + record.mountpoint + " (" + m->source +
                      ") is another one than this run made: left alone");
  RXERUN_TRY_ASSIGN(const bool shut, nfs.unmount_nfs(record.mountpoint, kServerSilence));
  return nlohmann::json{{"client_shut_down", shut}};
}

Result<nlohmann::json> undo_mount_dir(const MountDirRecord& record, UndoContext& ctx) {
  if (auto r = ctx.sys().nfs.remove_dir(record.dir); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_nfs_mount_modules(const ModulesRecord& modules, UndoContext& ctx) {
  return unload_modules(modules, ctx, [](UndoContext& c) -> Result<std::vector<std::string>> {
    RXERUN_TRY_ASSIGN(const auto mounts, c.sys().nfs.mounts());
    std::vector<std::string> users;
    for (const auto& m : mounts)
      if (m.fstype == "nfs4" || m.fstype == "nfs") users.push_back("NFS mount " + m.mountpoint);
    return users;
  });
}

const RecordUndo kNfsMountUndos[] = {undo_of<NfsMountRecord, undo_mount>(), undo_of<MountDirRecord, undo_mount_dir>(),
                                     undo_of<ModulesRecord, undo_nfs_mount_modules>()};

Result<nlohmann::json> undo_nfs_mount(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  return dispatch_undo(a, ctx, kNfsMountUndos);
}

}  // namespace

}  // namespace rxerun::steps
