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
// null_blk devices are made in configfs (/sys/kernel/config/nullb), not by
// module parameters: configfs gives a device of the size asked for (in
// MiB, module parameters only in GiB), memory-backed so that what is
// written reads back, under a name of this run's, and leaves any device of
// someone else's alone; null_blk itself is loaded with nr_devices=0 so that
// it makes no device of its own.

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "base/size.h"
#include "engine/diag.h"
#include "engine/step.h"
#include "steps/common/identity.h"
#include "steps/common/journal_args.h"
#include "steps/common/modules.h"
#include "steps/common/nvme_fabrics.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr Duration kNvmetPoll{20};
constexpr const char* kNullBlkPrefix = "rxerun-nullb";

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
  const auto& ns = params.at("namespace");
  const bool file = ns.contains("file"), null_blk = ns.contains("null_blk");
  if (file == null_blk) complain("namespace", "'namespace' takes one backing: file: {path, size} or null_blk: {size}");
  if (file) {
    const auto& path = ns.at("file").at("path");
    if (path.is_string() && !path.get_ref<const std::string&>().starts_with("/"))
      complain("namespace.file.path", "'namespace.file.path' must be an absolute path (the kernel opens it)");
  }
  if (null_blk) {
    const auto& size = ns.at("null_blk").at("size");
    if (size.is_number_unsigned() && size.get<std::uint64_t>() % kMiB != 0)
      complain("namespace.null_blk.size",
               "'namespace.null_blk.size' must be a whole number of MiB (null_blk sizes its devices in MiB), got " +
                   format_size(size.get<std::uint64_t>()));
  }
}

}  // namespace

Kind nvmet_kind() {
  KindSpec spec;
  spec.name = "nvmet";
  spec.needs = {Need::NetAdmin, Need::RdmaRxe};
  spec.summary =
      "Build an NVMe over Fabrics target in configfs: a subsystem, a namespace on a file or null_blk, a port over "
      "RDMA; undo takes it apart in reverse.";
  const ParamSpec size_param{.name = "size",
                             .type = ParamType::Size,
                             .required = true,
                             .help = "bytes, or with a binary unit: 64MiB, 1GiB",
                             .min = 4096};
  spec.params = {
      {.name = "nqn",
       .type = ParamType::String,
       .required = true,
       .help = "the subsystem's NQN: nqn.2026-01.io.rxerun:lab (must not exist yet)"},
      {.name = "namespace",
       .type = ParamType::Object,
       .required = true,
       .help = "what the namespace serves: file: {path, size} or null_blk: {size}",
       .fields =
           {
               {.name = "file",
                .type = ParamType::Object,
                .help = "a file, created with that size (sparse) when absent and then deleted at cleanup",
                .fields = {{.name = "path",
                            .type = ParamType::String,
                            .required = true,
                            .help = "absolute: /run/nvme-lab.img (not on overlayfs; see the docs)"},
                           size_param}},
               {.name = "null_blk",
                .type = ParamType::Object,
                .help = "a memory-backed null_blk device of that size (whole MiB), made for the step",
                .fields = {size_param}},
               {.name = "nsid",
                .type = ParamType::Int,
                .default_value = 1,
                .help = "the namespace ID",
                .min = 1,
                .max = 0xfffffffeLL},
           }},
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

// Mounts configfs when it is not, journalled first with its mount ID.
Result<void> ensure_configfs(StepContext& ctx) {
  auto& nvme = ctx.sys().nvme;
  auto mounted = nvme.configfs_mount();
  if (!mounted) return mounted.error();
  if (*mounted) return {};
  if (auto r = ctx.will_change({{"configfs_mount", sys::kConfigfsPath}},
                               std::string("unmount configfs from ") + sys::kConfigfsPath + " (mounted by this run)");
      !r)
    return r;
  auto id = nvme.mount_configfs();
  if (!id) return id.error();
  return ctx.identify({{"mount_id", *id}});
}

struct Backing {
  std::string device;  // what device_path gets
  std::uint64_t size = 0;
  bool file_created = false;
};

Result<Backing> make_file_backing(const Params& file, StepContext& ctx, std::vector<std::string>* hints) {
  auto& nvme = ctx.sys().nvme;
  const std::string path = file.str("path");
  const std::uint64_t size = file.size("size");
  auto fs = nvme.file_system(path);
  if (!fs) return fs.error();
  if (*fs == "overlayfs")
    return make_error(path +
                          " is on overlayfs, whose files give an nvmet namespace a block size of 0: the host "
                          "skips such a namespace (docs/kernel-notes.md, \"NVMe over Fabrics\"); put the file on "
                          "tmpfs (/run, /dev/shm) or a disk's file system",
                      EINVAL);
  auto found = nvme.file_id(path);
  if (!found) return found.error();
  if (*found) {
    if ((*found)->size != size)
      hints->push_back(path + " was there already with " + std::to_string((*found)->size) +
                       " bytes: served as it is (and left in place)");
    return Backing{path, (*found)->size, false};
  }
  if (auto r = ctx.will_change({{"file", path}}, "delete " + path + " (created by this run)"); !r) return r.error();
  auto made = nvme.create_file(path, size);
  if (!made) return made.error();
  if (auto r = ctx.identify({{"dev", made->dev}, {"ino", made->ino}}); !r) return r.error();
  return Backing{path, size, true};
}

Result<Backing> make_null_blk_backing(const Params& null_blk, StepContext& ctx) {
  auto& nvme = ctx.sys().nvme;
  const std::uint64_t size = null_blk.size("size");
  auto existing = nvme.null_blks();
  if (!existing) return existing.error();
  // The lowest free name of ours; the disk is named after it (at most 31 bytes).
  std::string name;
  for (unsigned n = 0; name.empty(); ++n) {
    const std::string candidate = kNullBlkPrefix + std::to_string(n);
    if (std::none_of(existing->begin(), existing->end(), [&](const sys::NullBlk& b) { return b.name == candidate; }))
      name = candidate;
  }
  if (auto r = ctx.will_change({{"null_blk", name}}, "remove null_blk device " + name); !r) return r.error();
  if (auto r = nvme.add_null_blk(name, size / kMiB); !r) return r.error();
  auto now = nvme.null_blks();
  if (!now) return now.error();
  auto it = std::find_if(now->begin(), now->end(), [&](const sys::NullBlk& b) { return b.name == name; });
  if (it == now->end() || !it->powered) return make_error("null_blk device " + name + " did not power on", EIO);
  if (auto r = ctx.identify({{"index", it->index}}); !r) return r.error();
  // devtmpfs makes the node as the disk is added; wait for it all the same.
  const std::string disk = it->disk.substr(it->disk.rfind('/') + 1);
  for (;;) {
    auto there = nvme.block_device(disk);
    if (!there) return there.error();
    if (*there) break;
    if (ctx.sleep_for(kNvmetPoll) != WaitStatus::Done)
      return make_error("the block device " + it->disk + " did not appear", ETIMEDOUT);
  }
  return Backing{it->disk, size, false};
}

// device_path and enable. A file system without O_DIRECT (tmpfs before
// Linux 6.6) refuses a file with EINVAL: it is then served buffered.
Result<bool> open_namespace(StepContext& ctx, const std::string& nqn, unsigned nsid, const Backing& backing,
                            bool file) {
  auto& nvme = ctx.sys().nvme;
  if (auto r = nvme.set_namespace_device(nqn, nsid, backing.device, false); !r) return r.error();
  auto enabled = nvme.enable_namespace(nqn, nsid, true);
  if (enabled) return false;
  if (!file || enabled.error().code != EINVAL) return enabled.error();
  if (auto r = nvme.set_namespace_device(nqn, nsid, backing.device, true); !r) return r.error();
  if (auto r = nvme.enable_namespace(nqn, nsid, true); !r) return r.error();
  return true;
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

StepResult run_nvmet(const Params& params, StepContext& ctx) {
  if (auto refused = refuse_other_netns(ctx, "nvmet")) return *refused;
  auto& nvme = ctx.sys().nvme;
  const std::string nqn = params.str("nqn");
  const Params ns = params.object("namespace");
  const Params port = params.object("port");
  const unsigned nsid = static_cast<unsigned>(ns.integer("nsid"));
  const std::string transport = port.str("transport");
  const std::string address = port.str("address");
  const long long service = port.integer("service");
  const bool file = ns.has("file");
  std::vector<std::string> hosts;
  if (params.has("hosts"))
    for (const auto& h : params.at("hosts")) hosts.push_back(h.get<std::string>());
  std::vector<std::string> hints;
  auto finish = [&](StepResult r) {
    r.hints.insert(r.hints.end(), hints.begin(), hints.end());
    return r;
  };

  // Nothing is changed for a subsystem that is there already.
  auto before = nvme.subsystems();
  if (!before) return StepResult::error(before.error());
  if (subsystem_named(*before, nqn)) return subsystem_exists(nqn);

  // configfs first (loaded, then mounted), then what lives in it: so that
  // cleanup unloads nvmet while the tree is still visible, then unmounts.
  if (auto r = load_modules(ctx, {{.name = "configfs"}}, "once configfs is unmounted", &hints); !r)
    return finish(StepResult::error(r.error()));
  if (auto r = ensure_configfs(ctx); !r) return finish(StepResult::error(r.error()));
  std::vector<ModuleRequest> wanted = {{.name = "nvmet_" + transport}, {.name = "nvmet"}};
  auto loaded = load_modules(ctx, wanted, "once no NVMe target subsystem is left", &hints);
  if (!loaded) return finish(StepResult::error(loaded.error()));
  if (!file) {
    auto nb =
        load_modules(ctx, {{.name = "null_blk", .params = "nr_devices=0"}}, "once no null_blk device is left", &hints);
    if (!nb) return finish(StepResult::error(nb.error()));
  }
  before = nvme.subsystems();
  if (!before) return finish(StepResult::error(before.error()));
  if (subsystem_named(*before, nqn)) return finish(subsystem_exists(nqn));

  nlohmann::json facts = {{"nqn", nqn}, {"nsid", nsid}};
  auto backing =
      file ? make_file_backing(ns.object("file"), ctx, &hints) : make_null_blk_backing(ns.object("null_blk"), ctx);
  if (!backing) return finish(StepResult::error(backing.error()));
  facts["device"] = backing->device;
  facts["size"] = backing->size;
  facts["file_created"] = backing->file_created;

  if (auto r = ctx.will_change({{"subsystem", nqn}}, "remove NVMe target subsystem " + nqn); !r)
    return finish(StepResult::error(r.error()));
  if (auto r = nvme.add_subsystem(nqn); !r) {
    if (r.error().code == EEXIST) return finish(subsystem_exists(nqn));
    return finish(StepResult::error(r.error()));
  }
  auto made = nvme.subsystems();
  if (!made) return finish(StepResult::error(made.error()));
  const auto* sub = subsystem_named(*made, nqn);
  if (!sub) return finish(StepResult::error("subsystem " + nqn + " vanished after mkdir"));
  const std::string serial = sub->serial;
  const std::uint64_t tag = serial_tag(serial);
  facts["serial"] = serial;
  if (auto r = ctx.identify({{"serial", tag}}); !r) return finish(StepResult::error(r.error()));

  if (hosts.empty()) {
    if (auto r = nvme.set_allow_any_host(nqn, true); !r) return finish(StepResult::error(r.error()));
  } else {
    auto known = nvme.hosts();
    if (!known) return finish(StepResult::error(known.error()));
    for (const auto& h : hosts) {
      if (std::find(known->begin(), known->end(), h) == known->end()) {
        if (auto r = ctx.will_change({{"host", h}}, "remove NVMe target host " + h); !r)
          return finish(StepResult::error(r.error()));
        if (auto r = nvme.add_host(h); !r && r.error().code != EEXIST) return finish(StepResult::error(r.error()));
      }
      if (auto r = ctx.will_change({{"allowed_host", h}, {"subsystem", nqn}, {"serial", tag}},
                                   "stop allowing host " + h + " in " + nqn);
          !r)
        return finish(StepResult::error(r.error()));
      if (auto r = nvme.allow_host(nqn, h); !r) return finish(StepResult::error(r.error()));
    }
  }

  if (auto r = ctx.will_change({{"namespace", nsid}, {"subsystem", nqn}, {"serial", tag}},
                               "disable and remove namespace " + std::to_string(nsid) + " of " + nqn);
      !r)
    return finish(StepResult::error(r.error()));
  if (auto r = nvme.add_namespace(nqn, nsid); !r) return finish(StepResult::error(r.error()));
  auto buffered = open_namespace(ctx, nqn, nsid, *backing, file);
  if (!buffered) {
    const auto& e = buffered.error();
    return finish(
        StepResult::error("namespace " + std::to_string(nsid) + " cannot open " + backing->device + ": " + e.message));
  }
  facts["buffered_io"] = *buffered;
  if (*buffered)
    hints.push_back(backing->device +
                    "'s file system has no O_DIRECT: the namespace reads and writes it through the "
                    "page cache (buffered_io)");

  // A port with that address is shared (the kernel lets one listener serve
  // many subsystems); else a new one.
  auto all_ports = nvme.ports();
  if (!all_ports) return finish(StepResult::error(all_ports.error()));
  const std::string trsvcid = std::to_string(service);
  unsigned port_id = 0;
  bool port_created = false;
  auto same = std::find_if(all_ports->begin(), all_ports->end(), [&](const sys::NvmetPort& p) {
    return p.trtype == transport && p.traddr == address && p.trsvcid == trsvcid;
  });
  if (same != all_ports->end() && !port.has("id")) {
    port_id = same->id;
  } else {
    if (port.has("id")) {
      port_id = static_cast<unsigned>(port.integer("id"));
      if (std::any_of(all_ports->begin(), all_ports->end(), [&](const sys::NvmetPort& p) { return p.id == port_id; }))
        return finish(StepResult::error("NVMe target port " + std::to_string(port_id) +
                                        " exists already: choose another id, or leave it out"));
    } else {
      for (port_id = 1;
           std::any_of(all_ports->begin(), all_ports->end(), [&](const sys::NvmetPort& p) { return p.id == port_id; });
           ++port_id) {
      }
    }
    const sys::NvmetPort wanted_port{
        .id = port_id, .trtype = transport, .adrfam = adrfam_of(address), .traddr = address, .trsvcid = trsvcid};
    if (auto r =
            ctx.will_change({{"port", port_id}, {"transport", transport}, {"address", address}, {"service", trsvcid}},
                            "remove NVMe target port " + std::to_string(port_id));
        !r)
      return finish(StepResult::error(r.error()));
    if (auto r = nvme.add_port(wanted_port); !r) return finish(StepResult::error(r.error()));
    port_created = true;
  }
  facts["port_id"] = port_id;
  facts["port_created"] = port_created;
  if (auto r = ctx.will_change({{"port_link", port_id},
                                {"subsystem", nqn},
                                {"transport", transport},
                                {"address", address},
                                {"service", trsvcid}},
                               "withdraw " + nqn + " from port " + std::to_string(port_id));
      !r)
    return finish(StepResult::error(r.error()));
  if (auto r = nvme.link_port(port_id, nqn); !r) {
    StepResult refused = port_refused(r.error(), address, service);
    refused.facts = facts;
    return finish(refused);
  }
  return finish(StepResult::ok(facts));
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

Result<nlohmann::json> undo_port_link(JournalArgs& a, const nlohmann::json& args, UndoContext& ctx) {
  const std::uint64_t id = a.number("port_link", 65535);
  const std::string nqn = a.text("subsystem");
  const std::string address = a.address("address");
  const std::string service = a.text("service");
  if (a.ok() && !valid_nqn(nqn)) a.refuse("subsystem", "an NQN");
  if (!a.ok()) return a.error();
  (void)args;
  auto ports = ctx.sys().nvme.ports();
  if (!ports) return ports.error();
  for (const auto& p : *ports) {
    if (p.id != id) continue;
    if (p.traddr != address || p.trsvcid != service) return nlohmann::json::object();  // another port: no link of ours
    if (std::find(p.subsystems.begin(), p.subsystems.end(), nqn) == p.subsystems.end()) return nlohmann::json::object();
    if (auto r = ctx.sys().nvme.unlink_port(static_cast<unsigned>(id), nqn); !r && r.error().code != ENOENT)
      return r.error();
  }
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_port(JournalArgs& a, UndoContext& ctx) {
  const std::uint64_t id = a.number("port", 65535);
  const std::string transport = a.text("transport");
  const std::string address = a.address("address");
  const std::string service = a.text("service");
  if (!a.ok()) return a.error();
  auto ports = ctx.sys().nvme.ports();
  if (!ports) return ports.error();
  for (const auto& p : *ports) {
    if (p.id != id) continue;
    if (p.trtype != transport || p.traddr != address || p.trsvcid != service)
      return make_error("NVMe target port " + std::to_string(id) + " is another one than this run made (" + p.trtype +
                        " " + p.traddr + ":" + p.trsvcid + "): left alone");
    if (!p.subsystems.empty())
      return nlohmann::json{{"left_alone", "port " + std::to_string(id) + " still offers " + p.subsystems.front()}};
    if (auto r = ctx.sys().nvme.remove_port(static_cast<unsigned>(id)); !r && r.error().code != ENOENT)
      return r.error();
  }
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_namespace(JournalArgs& a, UndoContext& ctx) {
  const std::uint64_t nsid = a.number("namespace", 0xfffffffe);
  const std::string nqn = a.text("subsystem");
  const std::uint64_t tag = a.number("serial");
  if (a.ok() && !valid_nqn(nqn)) a.refuse("subsystem", "an NQN");
  if (!a.ok()) return a.error();
  auto& nvme = ctx.sys().nvme;
  auto all = nvme.subsystems();
  if (!all) return all.error();
  auto s = same_subsystem(*all, nqn, tag);
  if (!s) return s.error();
  if (!*s) return nlohmann::json::object();
  const auto& nss = (*s)->namespaces;
  auto it = std::find_if(nss.begin(), nss.end(), [&](const sys::NvmetNamespace& n) { return n.nsid == nsid; });
  if (it == nss.end()) return nlohmann::json::object();
  if (it->enabled)
    if (auto r = nvme.enable_namespace(nqn, static_cast<unsigned>(nsid), false); !r) return r.error();
  if (auto r = nvme.remove_namespace(nqn, static_cast<unsigned>(nsid)); !r && r.error().code != ENOENT)
    return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_allowed_host(JournalArgs& a, UndoContext& ctx) {
  const std::string host = a.text("allowed_host");
  const std::string nqn = a.text("subsystem");
  const std::uint64_t tag = a.number("serial");
  if (a.ok() && !valid_nqn(nqn)) a.refuse("subsystem", "an NQN");
  if (a.ok() && !valid_nqn(host)) a.refuse("allowed_host", "a host NQN");
  if (!a.ok()) return a.error();
  auto all = ctx.sys().nvme.subsystems();
  if (!all) return all.error();
  auto s = same_subsystem(*all, nqn, tag);
  if (!s) return s.error();
  if (!*s) return nlohmann::json::object();
  const auto& allowed = (*s)->allowed_hosts;
  if (std::find(allowed.begin(), allowed.end(), host) == allowed.end()) return nlohmann::json::object();
  if (auto r = ctx.sys().nvme.disallow_host(nqn, host); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_host(JournalArgs& a, UndoContext& ctx) {
  const std::string host = a.text("host");
  if (a.ok() && !valid_nqn(host)) a.refuse("host", "a host NQN");
  if (!a.ok()) return a.error();
  auto r = ctx.sys().nvme.remove_host(host);
  if (r || r.error().code == ENOENT) return nlohmann::json::object();
  // Another subsystem, not this run's, lets it in since: it stays.
  if (r.error().code == EBUSY) return nlohmann::json{{"left_alone", "host " + host + " (another subsystem allows it)"}};
  return r.error();
}

Result<nlohmann::json> undo_subsystem(JournalArgs& a, UndoContext& ctx) {
  const std::string nqn = a.text("subsystem");
  const nlohmann::json id = a.identity();
  if (a.ok() && !valid_nqn(nqn)) a.refuse("subsystem", "an NQN");
  if (!a.ok()) return a.error();
  auto all = ctx.sys().nvme.subsystems();
  if (!all) return all.error();
  const std::uint64_t tag = nvme_identity_number(id, "serial").value_or(0);
  auto s = same_subsystem(*all, nqn, tag);
  if (!s) return s.error();
  if (!*s) return nlohmann::json::object();
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

Result<nlohmann::json> undo_null_blk(JournalArgs& a, UndoContext& ctx) {
  const std::string name = a.text("null_blk");
  const nlohmann::json id = a.identity();
  if (a.ok() && (!name.starts_with(kNullBlkPrefix) || name.size() > 31 || name.find('/') != std::string::npos))
    a.refuse("null_blk", "a null_blk device name of rxerun's");
  if (!a.ok()) return a.error();
  auto all = ctx.sys().nvme.null_blks();
  if (!all) return all.error();
  auto it = std::find_if(all->begin(), all->end(), [&](const sys::NullBlk& b) { return b.name == name; });
  if (it == all->end()) return nlohmann::json::object();
  if (auto index = nvme_identity_number(id, "index"); index && *index != it->index)
    return make_error("null_blk device " + name + " is another one than this run made (index " +
                      std::to_string(it->index) + "): left alone");
  if (auto r = ctx.sys().nvme.remove_null_blk(name); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_file(JournalArgs& a, UndoContext& ctx) {
  const std::string path = a.text("file");
  const nlohmann::json id = a.identity();
  if (a.ok() && !path.starts_with("/")) a.refuse("file", "an absolute path");
  if (!a.ok()) return a.error();
  auto found = ctx.sys().nvme.file_id(path);
  if (!found) return found.error();
  if (!*found) return nlohmann::json::object();
  if (id.is_null())
    // Made, but the run ended before it said which file: one there now may be someone else's.
    return nlohmann::json{{"left_alone", path + " (the journal does not say which file this run created)"}};
  const nlohmann::json now = {{"dev", (*found)->dev}, {"ino", (*found)->ino}};
  if (differs(id, now))
    return make_error(path + " is another file than the one this run created (device " + std::to_string((*found)->dev) +
                      ", inode " + std::to_string((*found)->ino) + "): left alone");
  if (auto r = ctx.sys().nvme.remove_file(path); !r && r.error().code != ENOENT) return r.error();
  return nlohmann::json::object();
}

Result<nlohmann::json> undo_configfs_mount(JournalArgs& a, UndoContext& ctx) {
  const std::string path = a.text("configfs_mount");
  const nlohmann::json id = a.identity();
  if (a.ok() && path != sys::kConfigfsPath) a.refuse("configfs_mount", sys::kConfigfsPath);
  if (!a.ok()) return a.error();
  auto mounted = ctx.sys().nvme.configfs_mount();
  if (!mounted) return mounted.error();
  if (!*mounted) return nlohmann::json::object();
  if (auto mount_id = nvme_identity_number(id, "mount_id"); mount_id && *mount_id != **mounted)
    return nlohmann::json{{"left_alone", std::string("configfs on ") + sys::kConfigfsPath + " (mounted again since)"}};
  if (auto r = ctx.sys().nvme.unmount_configfs(); !r) {
    if (r.error().code == EBUSY)
      return make_error(std::string("configfs on ") + sys::kConfigfsPath + " is in use: left mounted", EBUSY);
    if (r.error().code != EINVAL) return r.error();
  }
  return nlohmann::json::object();
}

// What still needs the modules of a record: nvmet's subsystems, null_blk's devices.
Result<std::vector<std::string>> nvmet_users(const nlohmann::json& args, UndoContext& ctx) {
  std::vector<std::string> users;
  const nlohmann::json modules = args.at("modules").is_array() ? args.at("modules") : nlohmann::json::array();
  auto has = [&](const char* m) {
    return std::any_of(modules.begin(), modules.end(), [&](const nlohmann::json& n) { return n == m; });
  };
  if (has("nvmet") || has("configfs")) {
    auto subs = ctx.sys().nvme.subsystems();
    if (!subs) return subs.error();
    for (const auto& s : *subs) users.push_back("NVMe target subsystem " + s.nqn);
  }
  if (has("null_blk") || has("configfs")) {
    auto blks = ctx.sys().nvme.null_blks();
    if (!blks) return blks.error();
    for (const auto& b : *blks) users.push_back("null_blk device " + b.name);
  }
  return users;
}

Result<nlohmann::json> undo_nvmet(const nlohmann::json& args, UndoContext& ctx) {
  if (is_modules_undo(args)) return unload_modules(args, ctx, [&](UndoContext& c) { return nvmet_users(args, c); });
  JournalArgs a(args, ctx);
  if (a.has("port_link")) return undo_port_link(a, args, ctx);
  if (a.has("port")) return undo_port(a, ctx);
  if (a.has("namespace")) return undo_namespace(a, ctx);
  if (a.has("allowed_host")) return undo_allowed_host(a, ctx);
  if (a.has("host")) return undo_host(a, ctx);
  if (a.has("null_blk")) return undo_null_blk(a, ctx);
  if (a.has("file")) return undo_file(a, ctx);
  if (a.has("configfs_mount")) return undo_configfs_mount(a, ctx);
  if (a.has("subsystem")) return undo_subsystem(a, ctx);
  if (!a.ok()) return a.error();
  return make_error("journal entry" + (ctx.step().empty() ? std::string() : " for step " + ctx.step()) + " holds " +
                    excerpt(args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
                    ", not an nvmet change (port_link, port, namespace, allowed_host, host, subsystem, null_blk, "
                    "file, configfs_mount or modules): not acting on it");
}

}  // namespace

}  // namespace rxerun::steps
