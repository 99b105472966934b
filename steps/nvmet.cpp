// nvmet: an NVMe over Fabrics target in configfs (/sys/kernel/config/nvmet),
// natively: a subsystem, one namespace backed by a file or a null_blk
// device, the hosts it lets in, and a port that offers it over RDMA. What
// nvmetcli or a hand script does with mkdir, echo and ln -s, without them.
//
// Each piece is journalled before it is made, and cleanup takes them apart
// in the reverse order the kernel needs (docs/kernel-notes.md, "NVMe over
// Fabrics"): the port's link to the subsystem (the port stops listening),
// the port, the namespace (disabled first), the allowed hosts' links, the
// hosts this run made, the subsystem, the backing (null_blk device, or the
// file when this run created it), then configfs's mount and the modules
// when this run made or loaded them.
//
// Undo leaves alone what it did not make: the subsystem is told from a
// namesake by the serial the kernel gave it at mkdir; a port by the address
// this run wrote into it, and a port someone else offers more subsystems on
// stays; a file by its device and inode; a null_blk device by its index;
// configfs's mount by its mount ID. A subsystem of that NQN before the run
// is a clear error, and nothing is changed.
//
// The backing and configfs's mount are steps/common/block_backing.h's,
// shared with srpt.

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "base/size.h"
#include "base/try.h"
#include "engine/diag.h"
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

StepResult run_nvmet(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_nvmet(const nlohmann::json& args, UndoContext& ctx);

void validate_nvmet(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  std::string why;
  const auto& nqn = params.at("nqn");
  if (nqn.is_string() && !valid_nqn(nqn.get_ref<const std::string&>(), &why))
    complain("nqn", "'nqn' is not a valid NQN: " + why);
  if (params.contains("hosts"))
    for (std::size_t i = 0; i < params.at("hosts").size(); ++i) {
      const auto& h = params.at("hosts")[i];
      if (h.is_string() && !valid_nqn(h.get_ref<const std::string&>(), &why))
        complain("hosts." + std::to_string(i), "'hosts' must hold host NQNs: " + why);
    }
  validate_backing(params.at("namespace"), "namespace", complain);
}

}  // namespace

Kind nvmet_kind() {
  KindSpec spec;
  spec.name = "nvmet";
  spec.takes_netns = false;
  spec.needs = {Need::NetAdmin, Need::RdmaRxe};
  spec.summary =
      "Build an NVMe over Fabrics target in configfs: a subsystem, a namespace on a file or null_blk, a port over "
      "RDMA; undo takes it apart in reverse.";
  spec.params = {
      {.name = "nqn",
       .type = ParamType::String,
       .required = true,
       .help = "the subsystem's NQN: nqn.2026-01.io.rxerun:lab (must not exist yet)"},
      {.name = "namespace",
       .type = ParamType::Object,
       .required = true,
       .help = "what the namespace serves: file: {path, size} or null_blk: {size}",
       .fields = with_backing_fields("/run/nvme-lab.img",
                                     {
                                         {.name = "nsid",
                                          .type = ParamType::Int,
                                          .default_value = 1,
                                          .help = "the namespace ID",
                                          .min = 1,
                                          .max = 0xfffffffeLL},
                                     })},
      {.name = "port",
       .type = ParamType::Object,
       .required = true,
       .help = "where the target listens: {transport: rdma, address: 10.10.0.1, service: 4420}",
       .fields =
           {
               {.name = "transport",
                .type = ParamType::Enum,
                .default_value = "rdma",
                .help = "the fabric",
                .choices = {"rdma"}},
               {.name = "address",
                .type = ParamType::Address,
                .required = true,
                .help = "IPv4 or IPv6 address of an RDMA device (rxe, siw) in the initial namespace"},
               {.name = "service",
                .type = ParamType::Int,
                .default_value = 4420,
                .help = "the port number (trsvcid)",
                .min = 1,
                .max = 65535},
               {.name = "id",
                .type = ParamType::Int,
                .help = "the configfs port ID; default the lowest free one",
                .min = 0,
                .max = 65535},
           }},
      {.name = "hosts",
       .type = ParamType::List,
       .help = "host NQNs allowed to connect; default: any host",
       .fields = {{.name = "host", .type = ParamType::String}}},
  };
  spec.facts = {
      {"nqn", "the subsystem's NQN"},
      {"nsid", "the namespace ID"},
      {"port_id", "the configfs port ID (ports/ID)"},
      {"port_created", "whether the step made the port (false: it offers the subsystem on a port with that address)"},
      {"device", "what backs the namespace: the file's path or the null_blk disk (/dev/rxerun-nullb0)"},
      {"size", "the backing's size in bytes"},
      {"serial", "the subsystem's serial number, as the kernel made it"},
      {"buffered_io", "whether the file is read and written through the page cache (its file system has no O_DIRECT)"},
      {"file_created", "whether the step created the backing file (cleanup deletes only such a file)"},
      {.name = "left_alone",
       .help =
           "at its revert: what it made that is still in use and was left (a port still offering another subsystem)",
       .when = kAtRevert},
  };
  spec.example =
      "- nvmet:\n"
      "    nqn: nqn.2026-01.io.rxerun:lab\n"
      "    namespace: {null_blk: {size: 64MiB}}\n"
      "    port: {transport: rdma, address: 10.10.0.1, service: 4420}\n";
  spec.default_timeout = Duration{30'000};
  spec.validate = validate_nvmet;
  return Kind{std::move(spec), run_nvmet, undo_nvmet};
}

namespace {

// ---- the journal's records, one per piece of the target --------------
//
// Each names itself with "op", which is the key an entry written before
// records named themselves is told by (nvmet_record_in_older_entry()).

// The subsystem (identity: its serial's tag, serial_tag()).
struct SubsystemRecord {
  static constexpr std::string_view kOp = "subsystem";
  std::string nqn;
  nlohmann::json identity;  // {"serial"}

  nlohmann::json to_args() const { return {{"op", kOp}, {"subsystem", nqn}}; }
  static Result<SubsystemRecord> read(JournalArgs& a) {
    SubsystemRecord r{a.text("subsystem"), a.identity()};
    if (a.ok() && !valid_nqn(r.nqn)) a.refuse("subsystem", "an NQN");
    if (!a.ok()) return a.error();
    return r;
  }
};

// A host NQN the step added to the target's hosts.
struct TargetHostRecord {
  static constexpr std::string_view kOp = "host";
  std::string host;

  nlohmann::json to_args() const { return {{"op", kOp}, {"host", host}}; }
  static Result<TargetHostRecord> read(JournalArgs& a) {
    TargetHostRecord r{a.text("host")};
    if (a.ok() && !valid_nqn(r.host)) a.refuse("host", "a host NQN");
    if (!a.ok()) return a.error();
    return r;
  }
};

// A host the subsystem lets in (the link in its allowed_hosts).
struct AllowedHostRecord {
  static constexpr std::string_view kOp = "allowed_host";
  std::string host;
  std::string nqn;
  std::uint64_t serial = 0;  // the subsystem's serial_tag()

  nlohmann::json to_args() const {
    return {{"op", kOp}, {"allowed_host", host}, {"subsystem", nqn}, {"serial", serial}};
  }
  static Result<AllowedHostRecord> read(JournalArgs& a) {
    AllowedHostRecord r{a.text("allowed_host"), a.text("subsystem"), a.number("serial")};
    if (a.ok() && !valid_nqn(r.nqn)) a.refuse("subsystem", "an NQN");
    if (a.ok() && !valid_nqn(r.host)) a.refuse("allowed_host", "a host NQN");
    if (!a.ok()) return a.error();
    return r;
  }
};

// The subsystem's namespace.
struct NamespaceRecord {
  static constexpr std::string_view kOp = "namespace";
  std::uint64_t nsid = 0;
  std::string nqn;
  std::uint64_t serial = 0;  // the subsystem's serial_tag()

  nlohmann::json to_args() const { return {{"op", kOp}, {"namespace", nsid}, {"subsystem", nqn}, {"serial", serial}}; }
  static Result<NamespaceRecord> read(JournalArgs& a) {
    NamespaceRecord r{a.number("namespace", 0xfffffffe), a.text("subsystem"), a.number("serial")};
    if (a.ok() && !valid_nqn(r.nqn)) a.refuse("subsystem", "an NQN");
    if (!a.ok()) return a.error();
    return r;
  }
};

// A port the step made, known by the address it wrote into it.
struct NvmetPortRecord {
  static constexpr std::string_view kOp = "port";
  std::uint64_t id = 0;
  std::string transport;
  std::string address;
  std::string service;

  nlohmann::json to_args() const {
    return {{"op", kOp}, {"port", id}, {"transport", transport}, {"address", address}, {"service", service}};
  }
  static Result<NvmetPortRecord> read(JournalArgs& a) {
    NvmetPortRecord r{a.number("port", 65535), a.text("transport"), a.address("address"), a.text("service")};
    if (!a.ok()) return a.error();
    return r;
  }
};

// The port's link to the subsystem: the port offers it.
struct PortLinkRecord {
  static constexpr std::string_view kOp = "port_link";
  std::uint64_t id = 0;
  std::string nqn;
  std::string address;
  std::string service;
  std::string transport;  // for a person reading the journal: the port is told by its address

  nlohmann::json to_args() const {
    return {{"op", kOp},          {"port_link", id},    {"subsystem", nqn},
            {"address", address}, {"service", service}, {"transport", transport}};
  }
  static Result<PortLinkRecord> read(JournalArgs& a) {
    PortLinkRecord r{a.number("port_link", 65535), a.text("subsystem"), a.address("address"), a.text("service")};
    if (a.ok() && !valid_nqn(r.nqn)) a.refuse("subsystem", "an NQN");
    if (a.has("transport")) r.transport = a.text("transport");
    if (!a.ok()) return a.error();
    return r;
  }
};

// ---- run ----------------------------------------------------------------

// The serial as a number for the journal's identity: its last 15 hex digits
// (the kernel's serial has up to 20; 15 fit every JSON reader). 0 when it
// is not hex (never compared).
std::uint64_t serial_tag(const std::string& serial) {
  const std::string tail = serial.size() > 15 ? serial.substr(serial.size() - 15) : serial;
  std::uint64_t n = 0;
  auto [end, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), n, 16);
  return ec == std::errc() && end == tail.data() + tail.size() ? n : 0;
}

const sys::NvmetSubsystem* subsystem_named(const std::vector<sys::NvmetSubsystem>& all, const std::string& nqn) {
  auto it = std::find_if(all.begin(), all.end(), [&](const sys::NvmetSubsystem& s) { return s.nqn == nqn; });
  return it == all.end() ? nullptr : &*it;
}

StepResult subsystem_exists(const std::string& nqn) {
  StepResult r = StepResult::error("NVMe target subsystem " + nqn +
                                   " exists already: this step makes its own and leaves others' alone; choose "
                                   "another nqn, or remove that one");
  r.hints.push_back("a run of this scenario that was killed leaves it: rxerun cleanup SCENARIO removes what it made");
  return r;
}

std::string adrfam_of(const std::string& address) {
  return address.find(':') == std::string::npos ? "ipv4" : "ipv6";
}

// configfs first (loaded, then mounted), then what lives in it: so that
// cleanup unloads nvmet while the tree is still visible, then unmounts.
Result<void> load_target_modules(StepContext& ctx, const std::string& transport, bool file,
                                 std::vector<std::string>& hints) {
  RXERUN_TRY(load_modules(ctx, {{.name = "configfs"}}, "once configfs is unmounted", &hints));
  RXERUN_TRY(ensure_configfs(ctx));
  const std::vector<ModuleRequest> wanted = {{.name = "nvmet_" + transport}, {.name = "nvmet"}};
  RXERUN_TRY(load_modules(ctx, wanted, "once no NVMe target subsystem is left", &hints));
  if (!file)
    RXERUN_TRY(
        load_modules(ctx, {{.name = "null_blk", .params = "nr_devices=0"}}, "once no null_blk device is left", &hints));
  return {};
}

// A file on overlayfs gives an nvmet namespace a block size of 0.
Result<void> refuse_overlayfs(StepContext& ctx, const std::string& path) {
  RXERUN_TRY_ASSIGN(const auto fs, ctx.sys().storage.file_system(path));
  if (fs != "overlayfs") return {};
  return make_error(path +
                        " is on overlayfs, whose files give an nvmet namespace a block size of 0: the host "
                        "skips such a namespace (docs/kernel-notes.md, \"NVMe over Fabrics\"); put the file on "
                        "tmpfs (/run, /dev/shm) or a disk's file system",
                    EINVAL);
}

// Makes the subsystem and records its serial. Its serial; none when a
// subsystem of that NQN appeared meanwhile (mkdir says EEXIST).
Result<std::optional<std::string>> make_subsystem(StepContext& ctx, const std::string& nqn) {
  auto& nvme = ctx.sys().nvme;
  RXERUN_TRY(ctx.will_change(SubsystemRecord{nqn, nullptr}.to_args(), "remove NVMe target subsystem " + nqn));
  if (auto r = nvme.add_subsystem(nqn); !r) {
    if (r.error().code == EEXIST) return std::optional<std::string>();
    return r.error();
  }
  RXERUN_TRY_ASSIGN(const auto made, nvme.subsystems());
  const auto* sub = subsystem_named(made, nqn);
  if (!sub) return make_error("subsystem " + nqn + " vanished after mkdir");
  RXERUN_TRY(ctx.identify({{"serial", serial_tag(sub->serial)}}));
  return std::optional<std::string>(sub->serial);
}

// Any host, or only `hosts` (added to the target's hosts when new).
Result<void> allow_hosts(StepContext& ctx, const std::string& nqn, std::uint64_t tag,
                         const std::vector<std::string>& hosts) {
  auto& nvme = ctx.sys().nvme;
  if (hosts.empty()) return nvme.set_allow_any_host(nqn, true);
  RXERUN_TRY_ASSIGN(const auto known, nvme.hosts());
  for (const auto& h : hosts) {
    if (std::find(known.begin(), known.end(), h) == known.end()) {
      RXERUN_TRY(ctx.will_change(TargetHostRecord{h}.to_args(), "remove NVMe target host " + h));
      if (auto r = nvme.add_host(h); !r && r.error().code != EEXIST) return r.error();
    }
    RXERUN_TRY(ctx.will_change(AllowedHostRecord{h, nqn, tag}.to_args(), "stop allowing host " + h + " in " + nqn));
    RXERUN_TRY(nvme.allow_host(nqn, h));
  }
  return {};
}

// device_path and enable. A file system without O_DIRECT (tmpfs before
// Linux 6.6) refuses a file with EINVAL: it is then served buffered.
Result<bool> open_namespace(StepContext& ctx, const std::string& nqn, unsigned nsid, const Backing& backing,
                            bool file) {
  auto& nvme = ctx.sys().nvme;
  RXERUN_TRY(nvme.set_namespace_device(nqn, nsid, backing.device, false));
  auto enabled = nvme.enable_namespace(nqn, nsid, true);
  if (enabled) return false;
  if (!file || enabled.error().code != EINVAL) return enabled.error();
  RXERUN_TRY(nvme.set_namespace_device(nqn, nsid, backing.device, true));
  RXERUN_TRY(nvme.enable_namespace(nqn, nsid, true));
  return true;
}

// Adds the namespace and opens its backing; whether it is served buffered.
Result<bool> make_namespace(StepContext& ctx, const std::string& nqn, unsigned nsid, std::uint64_t tag,
                            const Backing& backing, bool file) {
  RXERUN_TRY(ctx.will_change(NamespaceRecord{nsid, nqn, tag}.to_args(),
                             "disable and remove namespace " + std::to_string(nsid) + " of " + nqn));
  RXERUN_TRY(ctx.sys().nvme.add_namespace(nqn, nsid));
  auto buffered = open_namespace(ctx, nqn, nsid, backing, file);
  if (!buffered)
    return make_error("namespace " + std::to_string(nsid) + " cannot open " + backing.device + ": " +
                      buffered.error().message);
  return *buffered;
}

struct PortChoice {
  unsigned id = 0;
  bool created = false;
};

// A port with that address is shared (the kernel lets one listener serve
// many subsystems); else a new one, with the ID asked for or the lowest
// free one.
Result<PortChoice> make_port(StepContext& ctx, const Params& port, const std::string& transport,
                             const std::string& address, const std::string& trsvcid) {
  auto& nvme = ctx.sys().nvme;
  RXERUN_TRY_ASSIGN(const auto all_ports, nvme.ports());
  auto taken = [&](unsigned id) {
    return std::any_of(all_ports.begin(), all_ports.end(), [&](const sys::NvmetPort& p) { return p.id == id; });
  };
  auto same = std::find_if(all_ports.begin(), all_ports.end(), [&](const sys::NvmetPort& p) {
    return p.trtype == transport && p.traddr == address && p.trsvcid == trsvcid;
  });
  if (same != all_ports.end() && !port.has("id")) return PortChoice{same->id, false};
  unsigned port_id = 1;
  if (port.has("id")) {
    port_id = static_cast<unsigned>(port.integer("id"));
    if (taken(port_id))
      return make_error("NVMe target port " + std::to_string(port_id) +
                        " exists already: choose another id, or leave it out");
  } else {
    while (taken(port_id)) ++port_id;
  }
  const sys::NvmetPort wanted{
      .id = port_id, .trtype = transport, .adrfam = adrfam_of(address), .traddr = address, .trsvcid = trsvcid};
  RXERUN_TRY(ctx.will_change(NvmetPortRecord{port_id, transport, address, trsvcid}.to_args(),
                             "remove NVMe target port " + std::to_string(port_id)));
  RXERUN_TRY(nvme.add_port(wanted));
  return PortChoice{port_id, true};
}

StepResult port_refused(const Error& e, const std::string& address, long long service) {
  const std::string where = address + " service " + std::to_string(service);
  switch (e.code) {
    case EADDRNOTAVAIL: {
      StepResult r = StepResult::error("the port cannot listen on " + where +
                                       ": no RDMA device holds that address (EADDRNOTAVAIL)");
      r.hints.push_back("add an rxe (or siw) device over the interface that has " + address +
                        ", in the initial network namespace, before this step");
      return r;
    }
    case EADDRINUSE:
      return StepResult::error("the port cannot listen on " + where +
                               ": another NVMe target port or rdma_cm listener has it (EADDRINUSE)");
    default: return StepResult::error(e);
  }
}

// The target, piece by piece in the order the kernel needs, each piece
// journalled before it is made. Hints found on the way go to `hints`.
StepResult build_target(const Params& params, StepContext& ctx, std::vector<std::string>& hints) {
  auto& nvme = ctx.sys().nvme;
  const std::string nqn = params.str("nqn");
  const Params ns = params.object("namespace");
  const Params port = params.object("port");
  const unsigned nsid = static_cast<unsigned>(ns.integer("nsid"));
  const std::string transport = port.str("transport");
  const std::string address = port.str("address");
  const long long service = port.integer("service");
  const std::string trsvcid = std::to_string(service);
  const bool file = ns.has("file");
  std::vector<std::string> hosts;
  if (params.has("hosts"))
    for (const auto& h : params.at("hosts")) hosts.push_back(h.get<std::string>());

  // Nothing is changed for a subsystem that is there already.
  RXERUN_TRY_ASSIGN(const auto before, nvme.subsystems());
  if (subsystem_named(before, nqn)) return subsystem_exists(nqn);
  RXERUN_TRY(load_target_modules(ctx, transport, file, hints));
  RXERUN_TRY_ASSIGN(const auto loaded, nvme.subsystems());
  if (subsystem_named(loaded, nqn)) return subsystem_exists(nqn);

  nlohmann::json facts = {{"nqn", nqn}, {"nsid", nsid}};
  if (file) RXERUN_TRY(refuse_overlayfs(ctx, ns.object("file").str("path")));
  RXERUN_TRY_ASSIGN(const Backing backing, make_backing(ns, ctx, &hints));
  facts["device"] = backing.device;
  facts["size"] = backing.size;
  facts["file_created"] = backing.file_created;

  RXERUN_TRY_ASSIGN(const auto serial, make_subsystem(ctx, nqn));
  if (!serial) return subsystem_exists(nqn);
  const std::uint64_t tag = serial_tag(*serial);
  facts["serial"] = *serial;
  RXERUN_TRY(allow_hosts(ctx, nqn, tag, hosts));

  RXERUN_TRY_ASSIGN(const bool buffered, make_namespace(ctx, nqn, nsid, tag, backing, file));
  facts["buffered_io"] = buffered;
  if (buffered)
    hints.push_back(backing.device +
                    "'s file system has no O_DIRECT: the namespace reads and writes it through the "
                    "page cache (buffered_io)");

  RXERUN_TRY_ASSIGN(const PortChoice chosen, make_port(ctx, port, transport, address, trsvcid));
  facts["port_id"] = chosen.id;
  facts["port_created"] = chosen.created;
  RXERUN_TRY(ctx.will_change(PortLinkRecord{chosen.id, nqn, address, trsvcid, transport}.to_args(),
                             "withdraw " + nqn + " from port " + std::to_string(chosen.id)));
  if (auto r = nvme.link_port(chosen.id, nqn); !r) {
    StepResult refused = port_refused(r.error(), address, service);
    refused.facts = facts;
    return refused;
  }
  return StepResult::ok(facts);
}

StepResult run_nvmet(const Params& params, StepContext& ctx) {
  if (auto refused = refuse_other_netns(ctx, "nvmet")) return *refused;
  std::vector<std::string> hints;
  StepResult r = build_target(params, ctx, hints);
  return with_hints(std::move(r), hints);
}

// ---- undo, one kind of record at a time --------------------------------

// The subsystem the record names, when it is still the one this run made
// (serial tag 0: not compared). nullptr when it is gone.
Result<const sys::NvmetSubsystem*> same_subsystem(const std::vector<sys::NvmetSubsystem>& all, const std::string& nqn,
                                                  std::uint64_t tag) {
  const auto* s = subsystem_named(all, nqn);
  if (!s) return nullptr;
  const std::uint64_t now = serial_tag(s->serial);
  if (tag != 0 && now != 0 && now != tag)
    return make_error("NVMe target subsystem " + nqn + " is another one than this run made (serial " + s->serial +
                      "): left alone");
  return s;
}

Result<nlohmann::json> undo_port_link(const PortLinkRecord& link, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto ports, ctx.sys().nvme.ports());
  for (const auto& p : ports) {
    if (p.id != link.id) continue;
    if (p.traddr != link.address || p.trsvcid != link.service)
      return nlohmann::json::object();  // another port: no link of ours
    if (std::find(p.subsystems.begin(), p.subsystems.end(), link.nqn) == p.subsystems.end())
      return nlohmann::json::object();
    if (auto r = ctx.sys().nvme.unlink_port(static_cast<unsigned>(link.id), link.nqn); !r && r.error().code != ENOENT)
      return r.error();
  }
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_port(const NvmetPortRecord& port, UndoContext& ctx) {
  const std::uint64_t id = port.id;
  RXERUN_TRY_ASSIGN(const auto ports, ctx.sys().nvme.ports());
  for (const auto& p : ports) {
    if (p.id != id) continue;
    if (p.trtype != port.transport || p.traddr != port.address || p.trsvcid != port.service)
      return make_error("NVMe target port " + std::to_string(id) + " is another one than this run made (" + p.trtype +
                        " " + p.traddr + ":" + p.trsvcid + "): left alone");
    if (!p.subsystems.empty())
      return nlohmann::json{{"left_alone", "port " + std::to_string(id) + " still offers " + p.subsystems.front()}};
    if (auto r = ctx.sys().nvme.remove_port(static_cast<unsigned>(id)); !r && r.error().code != ENOENT)
      return r.error();
  }
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_namespace(const NamespaceRecord& record, UndoContext& ctx) {
  const std::string& nqn = record.nqn;
  const auto nsid = static_cast<unsigned>(record.nsid);
  auto& nvme = ctx.sys().nvme;
  RXERUN_TRY_ASSIGN(const auto all, nvme.subsystems());
  RXERUN_TRY_ASSIGN(const auto* s, same_subsystem(all, nqn, record.serial));
  if (!s) return nlohmann::json::object();
  const auto& nss = s->namespaces;
  auto it = std::find_if(nss.begin(), nss.end(), [&](const sys::NvmetNamespace& n) { return n.nsid == nsid; });
  if (it == nss.end()) return nlohmann::json::object();
  if (it->enabled) RXERUN_TRY(nvme.enable_namespace(nqn, nsid, false));
  if (auto r = nvme.remove_namespace(nqn, nsid); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_allowed_host(const AllowedHostRecord& record, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto all, ctx.sys().nvme.subsystems());
  RXERUN_TRY_ASSIGN(const auto* s, same_subsystem(all, record.nqn, record.serial));
  if (!s) return nlohmann::json::object();
  const auto& allowed = s->allowed_hosts;
  if (std::find(allowed.begin(), allowed.end(), record.host) == allowed.end()) return nlohmann::json::object();
  if (auto r = ctx.sys().nvme.disallow_host(record.nqn, record.host); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_host(const TargetHostRecord& record, UndoContext& ctx) {
  const std::string& host = record.host;
  auto r = ctx.sys().nvme.remove_host(host);
  if (r || r.error().code == ENOENT) return nlohmann::json::object();
  // Another subsystem, not this run's, lets it in since: it stays.
  if (r.error().code == EBUSY) return nlohmann::json{{"left_alone", "host " + host + " (another subsystem allows it)"}};
  return r.error();
}

Result<nlohmann::json> undo_subsystem(const SubsystemRecord& record, UndoContext& ctx) {
  const std::string& nqn = record.nqn;
  RXERUN_TRY_ASSIGN(const auto all, ctx.sys().nvme.subsystems());
  const std::uint64_t tag = identity_number(record.identity, "serial").value_or(0);
  RXERUN_TRY_ASSIGN(const auto* s, same_subsystem(all, nqn, tag));
  if (!s) return nlohmann::json::object();
  if (auto r = ctx.sys().nvme.remove_subsystem(nqn); !r && r.error().code != ENOENT) {
    if (r.error().code == ENOTEMPTY || r.error().code == EBUSY)
      return make_error("NVMe target subsystem " + nqn +
                            " is still in use (a namespace, an allowed host or a port someone else added): left in "
                            "place",
                        r.error().code);
    return r.error();
  }
  return nlohmann::json::object();
}

// What still needs the modules of a record: nvmet's subsystems, null_blk's devices.
Result<std::vector<std::string>> nvmet_users(const ModulesRecord& record, UndoContext& ctx) {
  std::vector<std::string> users;
  auto has = [&](const char* m) {
    return std::find(record.modules.begin(), record.modules.end(), m) != record.modules.end();
  };
  if (has("nvmet") || has("configfs")) {
    RXERUN_TRY_ASSIGN(const auto subs, ctx.sys().nvme.subsystems());
    for (const auto& s : subs) users.push_back("NVMe target subsystem " + s.nqn);
  }
  if (has("null_blk") || has("configfs")) {
    RXERUN_TRY_ASSIGN(const auto blks, null_blk_users(ctx));
    users.insert(users.end(), blks.begin(), blks.end());
  }
  return users;
}

Result<nlohmann::json> undo_nvmet_modules(const ModulesRecord& record, UndoContext& ctx) {
  return unload_modules(record, ctx, [&](UndoContext& c) { return nvmet_users(record, c); });
}

// Every record nvmet writes, with its undo. Each record's op is also the key
// of the object it names, which tells an entry without "op" (an older
// journal): its record is the first of these whose op it has as a key.
// Several records carry "subsystem", so the order matters.
const RecordUndo kNvmetUndos[] = {
    undo_of<ModulesRecord, undo_nvmet_modules>(),
    undo_of<PortLinkRecord, undo_port_link>(),
    undo_of<NvmetPortRecord, undo_port>(),
    undo_of<NamespaceRecord, undo_namespace>(),
    undo_of<AllowedHostRecord, undo_allowed_host>(),
    undo_of<TargetHostRecord, undo_host>(),
    undo_of<NullBlkRecord, undo_null_blk>(),
    undo_of<BackingFileRecord, undo_backing_file>(),
    undo_of<ConfigfsMountRecord, undo_configfs_mount>(),
    undo_of<SubsystemRecord, undo_subsystem>(),
};

Result<nlohmann::json> undo_nvmet(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  std::string_view older;  // an entry without "op": the record its keys say
  for (const auto& u : kNvmetUndos)
    if (older.empty() && a.has(u.op)) older = u.op;
  if (!a.has("op") && older.empty()) {
    if (!a.ok()) return a.error();
    return make_error("journal entry" + (ctx.step().empty() ? std::string() : " for step " + ctx.step()) + " holds " +
                      excerpt(args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
                      ", not an nvmet change (port_link, port, namespace, allowed_host, host, subsystem, null_blk, "
                      "file, configfs_mount or modules): not acting on it");
  }
  return dispatch_undo(a, ctx, kNvmetUndos, older);
}

}  // namespace

}  // namespace rxerun::steps
