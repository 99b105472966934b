// srp_login: the initiator side of SRP, natively: one write of
// "id_ext=...,ioc_guid=...,dest=ADDR:PORT,src=ADDR" to ib_srp's add_target
// for an RDMA device's port (what srp_daemon or a hand script does), then a
// wait until the SCSI disk of LUN 0 is there (/dev/sdb), within the step's
// timeout. Loads ib_srp and sd_mod (the SCSI disk driver: without udev
// nothing else loads it) when the kernel has not.
//
// The login is over RDMA/CM from the step's network namespace (the kernel
// takes the writer's). A login the kernel refuses is `fail`, with the errno
// and the SCSI and SRP stack's own kernel messages about it. The login is
// journalled before the write; undo logs out (the remote port's delete)
// only while the SCSI host of that number is the one this run made: same
// RDMA device and target identifier.

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

constexpr Duration kDiskPoll{50};
constexpr Duration kLogoutWait{10'000};

StepResult run_srp_login(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_srp_login(const nlohmann::json& args, UndoContext& ctx);

bool is_hex_guid(const std::string& text) {
  const std::string_view digits = std::string_view(text).substr(text.starts_with("0x") ? 2 : 0);
  return !digits.empty() && digits.size() <= 16 &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

void validate_srp_login(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  // A {{steps.X.Y}} reference (an srpt step's service_guid) is checked once it is read.
  if (params.contains("target_id") && params.at("target_id").is_string() &&
      params.at("target_id").get_ref<const std::string&>().find("{{") == std::string::npos &&
      !is_hex_guid(params.at("target_id").get_ref<const std::string&>()))
    complain("target_id",
             "'target_id' must be a GUID in hex, as ib_srpt's srpt_service_guid reads: 0x505400fffe123401");
}

}  // namespace

Kind srp_login_kind() {
  KindSpec spec;
  spec.name = "srp_login";
  spec.needs = {Need::NetAdmin, Need::RdmaRxe};
  spec.summary =
      "Log in to an SRP target over RDMA/CM through ib_srp's add_target and wait for its SCSI disk; undo logs out.";
  spec.params = {
      {.name = "device",
       .type = ParamType::String,
       .required = true,
       .help = "the local RDMA device to log in through (its port 1): rxe1"},
      {.name = "address", .type = ParamType::Address, .required = true, .help = "the target's address: 10.10.0.1"},
      {.name = "rdma_cm_port",
       .type = ParamType::Int,
       .default_value = 5555,
       .help = "the target's RDMA/CM port (an srpt step's rdma_cm_port)",
       .min = 1,
       .max = 65535},
      {.name = "source",
       .type = ParamType::Address,
       .help = "the address the login comes from, which the target's ACL names; default the first address of the "
               "device's interface of the target's family"},
      {.name = "target_id",
       .type = ParamType::String,
       .help = "ib_srpt's service GUID (id_ext and ioc_guid), an srpt step's service_guid; default the one of "
               "ib_srpt on this machine"},
  };
  spec.facts = {
      {"disk", "the SCSI disk of LUN 0: /dev/sda"},
      {"size", "the disk's size in bytes"},
      {"host", "the SCSI host the login made: host0"},
      {"remote_port", "its SRP remote port: port-0:1"},
      {"source", "the address the login came from"},
      {"target_id", "the target identifier the login gave"},
      {"errno", "when the kernel refused the login: its errno (ECONNRESET: nobody listens there, or no ACL)"},
      {"error", "when the kernel refused the login: what the errno means"},
  };
  spec.example =
      "- srp_login: {device: rxe1, address: 10.10.0.1}\n"
      "  expect: {disk: \"~ ^/dev/sd[a-z]+$\"}\n";
  spec.default_timeout = Duration{60'000};
  spec.validate = validate_srp_login;
  return Kind{std::move(spec), run_srp_login, undo_srp_login};
}

namespace {

// The login (its identity: the SCSI host number, once the kernel made it).
struct LoginRecord {
  static constexpr std::string_view kOp = "login";
  std::string device;
  std::string address;
  std::uint64_t port = 0;
  std::string target_id;
  nlohmann::json identity;  // {"host"}; null when not recorded

  nlohmann::json to_args() const {
    return {{"op", kOp}, {"login", device}, {"address", address}, {"rdma_cm_port", port}, {"target_id", target_id}};
  }
  static Result<LoginRecord> read(JournalArgs& a) {
    LoginRecord r{a.text("login"), a.address("address"), a.number("rdma_cm_port", 65535), a.text("target_id"),
                  a.identity()};
    if (a.ok() && !is_hex_guid(r.target_id)) a.refuse("target_id", "a GUID in hex");
    if (!a.ok()) return a.error();
    return r;
  }
};

// ib_srp compares identifiers as numbers: "0x0050..." and "50..." are one.
std::string guid_digits(std::string text) {
  if (text.starts_with("0x")) text = text.substr(2);
  const auto first = text.find_first_not_of('0');
  return first == std::string::npos ? "0" : text.substr(first);
}

const sys::SrpLogin* host_of(const std::vector<sys::SrpLogin>& all, unsigned host) {
  auto it = std::find_if(all.begin(), all.end(), [&](const sys::SrpLogin& l) { return l.host == host; });
  return it == all.end() ? nullptr : &*it;
}

// The address of `device`'s interface to log in from: the first of the
// target's family.
Result<std::string> source_of(StepContext& ctx, const std::string& device, const std::string& address) {
  RXERUN_TRY_ASSIGN(const auto found, device_addresses(ctx, device));
  if (!found) return make_error("RDMA device " + device + " has no interface here: give source", ENODEV);
  const bool v6 = address.find(':') != std::string::npos;
  for (const auto& a : found->addresses)
    if ((a.find(':') != std::string::npos) == v6) return a;
  return make_error(found->netdev + " (under " + device + ") has no address to log in from: give source",
                    EADDRNOTAVAIL);
}

// The login the kernel refused: `fail`, with the errno and its own words.
StepResult login_refused(const Error& e, const std::string& target, const std::vector<std::string>& kernel_log,
                         nlohmann::json facts) {
  const int code = e.code;
  StepResult r =
      kernel_refusal(code, "the kernel refused the login to the SRP target at " + target, kernel_log, std::move(facts));
  if (code == ECONNRESET || code == ECONNREFUSED || code == ETIMEDOUT)
    r.hints.push_back(
        "nobody listens there, or the target refused the login: is an srpt step serving on that address and "
        "rdma_cm_port, and is target_id its service_guid?");
  return r;
}

// After the login: waits until the new SCSI host's disk and its node are there.
StepResult wait_for_disk(StepContext& ctx, unsigned host, nlohmann::json facts, std::uint64_t log_since) {
  auto& srp = ctx.sys().srp;
  for (;;) {
    RXERUN_TRY_ASSIGN(const auto all, srp.logins());
    const auto* l = host_of(all, host);
    if (!l) {
      StepResult r =
          StepResult::fail("SCSI host " + std::to_string(host) + " went away before its disk showed up", facts);
      for (const auto& record : ctx.sys().kernel_log.records(log_since))
        if (record.from_kernel() && sys::is_srp_kernel_message(record.message))
          r.hints.push_back("kernel: " + sys::dmesg_line(record));
      return r;
    }
    if (!l->disks.empty()) {
      RXERUN_TRY_ASSIGN(const bool node, ctx.sys().storage.block_device(l->disks.front().name));
      if (node) {
        facts["disk"] = "/dev/" + l->disks.front().name;
        facts["size"] = l->disks.front().bytes;
        return StepResult::ok(facts);
      }
    }
    switch (ctx.sleep_for(kDiskPoll)) {
      case WaitStatus::Done: continue;
      case WaitStatus::Interrupted: return StepResult::error("interrupted");
      case WaitStatus::Deadline:
        return StepResult::timeout("SCSI host " + std::to_string(host) + " is " + l->state + " but no disk showed up",
                                   facts);
    }
  }
}

StepResult log_in(const Params& params, StepContext& ctx, std::vector<std::string>& hints) {
  auto& srp = ctx.sys().srp;
  const std::string device = params.str("device");
  const std::string address = params.str("address");
  const auto port = static_cast<unsigned>(params.integer("rdma_cm_port"));
  const std::uint64_t log_since = ctx.sys().kernel_log.now();

  RXERUN_TRY(load_modules(ctx, {{.name = "ib_srp"}, {.name = "sd_mod"}}, "once no SRP login is left", &hints));
  std::string target_id = params.has("target_id") ? params.str("target_id") : "";
  if (target_id.empty()) {
    RXERUN_TRY_ASSIGN(target_id, srp.service_guid());
    if (target_id.empty())
      return StepResult::error(
          "no target_id given, and ib_srpt is not loaded here to read it from: give target_id "
          "(the srpt step's service_guid)");
  }
  if (!is_hex_guid(target_id))
    return StepResult::error("target_id '" + target_id +
                             "' is not a GUID in hex, as ib_srpt's srpt_service_guid reads");
  std::string source = params.has("source") ? params.str("source") : "";
  if (source.empty()) {
    RXERUN_TRY_ASSIGN(source, source_of(ctx, device, address));
  }
  const std::string srp_port = "srp-" + device + "-1";
  RXERUN_TRY_ASSIGN(const auto ports, srp.srp_ports());
  if (std::find(ports.begin(), ports.end(), srp_port) == ports.end())
    return StepResult::error("ib_srp offers no port " + srp_port + ": is " + device + " an RDMA device here?");

  // ib_srp reads an IPv6 address only in brackets, in src as in dest.
  const auto bracketed = [](const std::string& a) { return a.find(':') != std::string::npos ? "[" + a + "]" : a; };
  const std::string dest = bracketed(address) + ":" + std::to_string(port);
  const std::string options =
      "id_ext=" + target_id + ",ioc_guid=" + target_id + ",dest=" + dest + ",src=" + bracketed(source);
  nlohmann::json facts = {{"source", source}, {"target_id", target_id}};
  RXERUN_TRY_ASSIGN(const auto before, srp.logins());
  const LoginRecord record{device, address, port, target_id, nullptr};
  RXERUN_TRY(ctx.will_change(record.to_args(), "log out of the SRP target at " + dest + " (through " + device + ")"));
  std::vector<std::string> kernel_log;
  if (auto r = srp.add_target(srp_port, options, &kernel_log); !r)
    return login_refused(r.error(), dest, kernel_log, facts);
  RXERUN_TRY_ASSIGN(const auto after, srp.logins());
  const sys::SrpLogin* made = nullptr;
  for (const auto& l : after)
    if (!host_of(before, l.host) && l.device == device) made = &l;
  if (!made) return StepResult::error("the kernel took the login but made no SCSI host for it");
  RXERUN_TRY(ctx.identify({{"host", made->host}}));
  facts["host"] = "host" + std::to_string(made->host);
  facts["remote_port"] = made->remote_port;
  return wait_for_disk(ctx, made->host, std::move(facts), log_since);
}

StepResult run_srp_login(const Params& params, StepContext& ctx) {
  std::vector<std::string> hints;
  StepResult r = log_in(params, ctx, hints);
  return with_hints(std::move(r), hints);
}

Result<nlohmann::json> undo_login(const LoginRecord& record, UndoContext& ctx) {
  auto& srp = ctx.sys().srp;
  const auto host = identity_number(record.identity, "host");
  if (!host)
    // The run ended between the login and its record: which SCSI host is this run's is not known.
    return nlohmann::json{{"left_alone", "an SRP login through " + record.device + " to " + record.address +
                                             " (the journal does not say which host)"}};
  RXERUN_TRY_ASSIGN(const auto all, srp.logins());
  const auto* l = host_of(all, static_cast<unsigned>(*host));
  if (!l) return nlohmann::json::object();  // logged out already
  if (l->device != record.device || (!l->id_ext.empty() && guid_digits(l->id_ext) != guid_digits(record.target_id)))
    return make_error("SCSI host " + std::to_string(l->host) + " (through " + l->device + ", target " + l->id_ext +
                      ") is another login than this run made: left alone");
  if (auto r = srp.logout(l->remote_port); !r && r.error().code != ENOENT) return r.error();
  // The kernel takes the host and its disk away in the background: gone,
  // they no longer hold ib_srp, which the modules' undo unloads next.
  auto& clock = ctx.sys().clock;
  const auto until = clock.now() + kLogoutWait;
  for (;;) {
    RXERUN_TRY_ASSIGN(const auto now, srp.logins());
    if (!host_of(now, l->host)) return nlohmann::json::object();
    if (clock.now() >= until ||
        clock.wait_until(clock.now() + kDiskPoll, ctx.sys().interrupt) == sys::WaitResult::Interrupted)
      return make_error("SCSI host " + std::to_string(l->host) + " is still there " +
                        std::to_string(kLogoutWait.count() / 1000) + " s after the logout");
  }
}

Result<std::vector<std::string>> srp_login_users(UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto all, ctx.sys().srp.logins());
  std::vector<std::string> users;
  for (const auto& l : all) users.push_back("SRP login host" + std::to_string(l.host) + " through " + l.device);
  return users;
}

// Two records: the modules the step loaded, and the login.
Result<nlohmann::json> undo_srp_login_modules(const ModulesRecord& modules, UndoContext& ctx) {
  return unload_modules(modules, ctx, srp_login_users);
}

const RecordUndo kSrpLoginUndos[] = {undo_of<LoginRecord, undo_login>(),
                                     undo_of<ModulesRecord, undo_srp_login_modules>()};

Result<nlohmann::json> undo_srp_login(const nlohmann::json& args, UndoContext& ctx) {
  JournalArgs a(args, ctx);
  return dispatch_undo(a, ctx, kSrpLoginUndos);
}

}  // namespace

}  // namespace rxerun::steps
