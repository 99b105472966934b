// capture: records the packets that cross an interface while later steps
// run, into a pcap file Wireshark opens, and decodes them on the way
// (roce/packet.h) so that a `revert` of the capture can assert what crossed:
// how many packets of each opcode, ACKs and NAKs, PSN gaps, ICRC results.
// The capture runs in a thread of this process (sys/capture.h); its undo
// stops it, at `revert: NAME` or at cleanup, and reports what it counted.

#include <cerrno>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "base/files.h"
#include "base/try.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "engine/vars.h"
#include "roce/opcodes.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// Defined after the spec below, which names them.
StepResult run_capture(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_capture(const nlohmann::json& args, UndoContext& ctx);

// A relative `file` stays under --output-dir: one that climbs out with
// `..` would write where the user did not point the run (and, in the lab
// VM, outside the share that comes back).
void validate_capture(const nlohmann::json& p, const KindSpec::Complaint& complain) {
  if (!p.contains("file") || !p.at("file").is_string() || has_step_references(p.at("file"))) return;
  const std::filesystem::path file(p.at("file").get<std::string>());
  if (file.is_absolute()) return;
  const auto normal = file.lexically_normal();
  if (normal.empty() || *normal.begin() != "..") return;
  complain("file", "'" + file.string() +
                       "' climbs out of --output-dir with '..': name a file under it, or an "
                       "absolute path");
}
void picture_capture(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

namespace {

// Every name roce::opcode_name gives, what capture's OPCODE facts may be.
std::vector<std::string> opcode_names() {
  std::vector<std::string> names;
  for (unsigned op = 0; op <= 0xff; ++op) names.push_back(roce::opcode_name(static_cast<std::uint8_t>(op)));
  return names;
}

}  // namespace

Kind capture_kind() {
  KindSpec spec;
  spec.name = "capture";
  spec.needs = {Need::NetAdmin};
  spec.objects = {{.effect = LabEffect::Uses,
                   .object = LabObject::Interface,
                   .param = "dev",
                   .unless_param = "dev",
                   .unless_value = "any"}};
  spec.summary =
      "Capture packets on an interface (libpcap; RoCEv2 by default) into a pcap file while later steps run, decoding "
      "them on the way; `revert: NAME` stops it and reports what crossed (cleanup stops it too).";
  spec.params = {
      {.name = "dev",
       .type = ParamType::IfName,
       .required = true,
       .help = "the interface, in the step's namespace; `any` for all of them (Linux cooked frames)"},
      {.name = "file",
       .type = ParamType::String,
       .help = "the pcap file, created or replaced when the capture stops; a relative path is under --output-dir "
               "(default: SCENARIO-STEP.pcap there; `..` may not climb out of it); in the lab VM it comes back to "
               "the host"},
      {.name = "filter",
       .type = ParamType::String,
       .default_value = "udp port 4791",
       .help = "which packets, as a BPF filter expression (tcpdump's syntax)"},
      {.name = "snaplen",
       .type = ParamType::Int,
       .default_value = 9216,
       .help = "bytes kept of each packet: the default keeps jumbo frames (MTU 9000) whole; the ICRC is checked "
               "only on packets kept whole. Each packet takes this much of the capture's buffer",
       .min = 64,
       .max = 262144},
  };
  spec.facts = {
      {.name = "file",
       .help = "the pcap file (at the capture step and at its revert; from the lab VM: where it lands on the host, "
               "relative to --output-dir)",
       .when = kAtStep | kAtRevert},
      {.name = "packets", .help = "at revert: RoCEv2 packets captured", .when = kAtRevert},
      {.name = "bytes", .help = "at revert: their bytes on the wire", .when = kAtRevert},
      {.name = "frames", .help = "at revert: every frame the filter passed, RoCEv2 or not", .when = kAtRevert},
      {.name = "other", .help = "at revert: frames that were not RoCEv2 (another filter, ARP, ...)", .when = kAtRevert},
      {.name = "malformed",
       .help = "at revert: frames to UDP 4791 that did not decode (truncated by snaplen, bad headers)",
       .when = kAtRevert},
      {.name = "icrc_good", .help = "at revert: RoCEv2 packets whose ICRC is right", .when = kAtRevert},
      {.name = "icrc_bad", .help = "at revert: RoCEv2 packets whose ICRC is wrong", .when = kAtRevert},
      {.name = "acks", .help = "at revert: ACKNOWLEDGE packets whose AETH says ACK", .when = kAtRevert},
      {.name = "naks",
       .help = "at revert: AETHs that say NAK (PSN sequence error, remote access error, ...)",
       .when = kAtRevert},
      {.name = "rnr_naks", .help = "at revert: AETHs that say RNR NAK (receiver not ready)", .when = kAtRevert},
      {.name = "psn_gaps",
       .help = "at revert: RC/UC requests whose PSN skipped ahead on their QP (lost before the capture point)",
       .when = kAtRevert},
      {.name = "psn_repeats",
       .help = "at revert: RC/UC requests whose PSN went back on their QP (retransmissions)",
       .when = kAtRevert},
      {.name = "qps", .help = "at revert: the destination QPs seen, 0x11,0x12", .when = kAtRevert},
      {.name = "qp_count", .help = "at revert: how many destination QPs", .when = kAtRevert},
      {.name = "dropped",
       .help = "at revert: packets the kernel dropped because the capture fell behind",
       .when = kAtRevert},
      {.name = "OPCODE",
       .help = "at revert: packets of that opcode, RC_RDMA_WRITE_ONLY, RC_ACKNOWLEDGE, UD_SEND_ONLY, CNP "
               "(every RC opcode is reported, 0 when none was seen)",
       .when = kAtRevert,
       .names = opcode_names()},
      {.name = "error", .help = "at revert: why capturing stopped early (the interface went away)", .when = kAtRevert},
  };
  spec.example =
      "- name: wire\n"
      "  netns: b\n"
      "  capture: {dev: vB, file: write.pcap}\n"
      "- verbs: {server: {addr: 10.10.0.1, netns: a}, client: {addr: 10.10.0.2, netns: b}, ops: [write]}\n"
      "- revert: wire\n"
      "  expect: {RC_RDMA_WRITE_ONLY: \"> 0\", RC_ACKNOWLEDGE: \"> 0\", icrc_bad: 0}\n";
  spec.default_timeout = Duration{10'000};
  spec.validate = validate_capture;
  Kind kind{std::move(spec), run_capture, undo_capture};
  kind.picture = picture_capture;
  return kind;
}

namespace {

// The capture's id in this process: scenario and step.
std::string capture_id(const std::string& scenario, const std::string& step) {
  return scenario + "/" + step;
}

// The capture the step started: its id in the process that runs it, the
// file it goes to (and the name to show for it), and the temporary file it
// writes until then, which cleanup renames into place after a crash.
struct CaptureRecord {
  static constexpr std::string_view kOp = "capture";
  std::string id;
  std::string file;
  std::string shown;                   // an older entry without it: `file`
  std::optional<std::string> partial;  // an older entry without it: nothing to recover

  nlohmann::json to_args() const {
    nlohmann::json args = {{"op", kOp}, {"id", id}, {"file", file}, {"shown", shown}};
    if (partial) args["partial"] = *partial;
    return args;
  }
  static Result<CaptureRecord> read(JournalArgs& a) {
    CaptureRecord r{a.text("id"), a.text("file")};
    r.shown = a.has("shown") ? a.text("shown") : r.file;
    if (a.has("partial")) r.partial = a.text("partial");
    if (!a.ok()) return a.error();
    return r;
  }
};

StepResult run_capture(const Params& params, StepContext& ctx) {
  sys::CaptureRequest request;
  request.id = capture_id(ctx.scenario(), ctx.step().name);
  request.dev = params.str("dev");
  request.filter = params.str("filter");
  request.snaplen = static_cast<int>(params.integer("snaplen"));
  const std::string file =
      params.has("file") ? params.str("file") : fmt::format("{}-{}.pcap", ctx.scenario(), ctx.step().name);
  auto path = ctx.output_path(file);
  if (!path) return StepResult::error(params.where(params.has("file") ? "file" : "") + ": " + path.error().message);
  request.file = path->path;
  // Named now so that the journal holds it: after a crash, cleanup renames
  // what the capture wrote into place (sys::Captures::recover).
  request.partial = temporary_name(request.file).string();

  // No footprint: the capture must be stopped (and its file closed) even
  // when the namespace or interface it runs on goes first.
  RXERUN_TRY(ctx.will_change(CaptureRecord{request.id, request.file, path->shown, request.partial}.to_args(),
                             "stop the capture on " + request.dev + " and close " + request.file));
  if (auto r = ctx.sys().captures.start(request); !r) {
    std::string message = r.error().message;
    if (r.error().code == ENODEV)
      message = params.where("dev") + ": no interface " + request.dev +
                (ctx.step().netns ? " in netns " + *ctx.step().netns : std::string(" in rxerun's namespace"));
    if (r.error().code == EINVAL) message = params.where("filter") + ": " + message;
    return StepResult::error(message);
  }
  return StepResult::ok({{"file", path->shown}, {"dev", request.dev}, {"filter", request.filter}});
}

// sys::Captures' facts, flat as expectations read them: the counts, then
// one fact per opcode seen named as roce::opcode_name spells it, and every
// RC opcode (what rxe's labs send) also when none was seen, so that
// `RC_NAK...: 0`-style expectations of absence can be written.
nlohmann::json flat_facts(const nlohmann::json& stopped) {
  nlohmann::json facts = nlohmann::json::object();
  for (const auto& [key, value] : stopped.items()) {
    if (key == "opcodes" || key == "qps") continue;
    facts[key] = value;
  }
  for (unsigned op = 0x00; op <= 0x14; ++op) facts[roce::opcode_name(static_cast<std::uint8_t>(op))] = 0;
  if (stopped.contains("opcodes"))
    for (const auto& [name, count] : stopped["opcodes"].items()) facts[name] = count;
  if (stopped.contains("qps")) {
    std::string qps;
    for (const auto& qp : stopped["qps"])
      qps += (qps.empty() ? "" : ",") + fmt::format("{:#x}", qp.get<std::uint32_t>());
    facts["qps"] = qps;
    facts["qp_count"] = stopped["qps"].size();
  }
  return facts;
}

Result<nlohmann::json> undo_capture(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<CaptureRecord>(args, ctx));
  auto stopped = ctx.sys().captures.stop(record.id);
  if (!stopped) {
    // It ended with the process that started it (a crash, --keep): nothing
    // is left running; what it wrote goes to its file.
    if (stopped.error().code == ENOENT) {
      if (record.partial) RXERUN_TRY(ctx.sys().captures.recover(*record.partial, record.file));
      return nlohmann::json::object();
    }
    return stopped.error();
  }
  auto facts = flat_facts(*stopped);
  facts["file"] = record.shown;
  return facts;
}

}  // namespace

namespace {

// A marker on the interface (on the namespace for `any`): its filter and file.
void picture_capture(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  std::string dev = picture_param(p, "dev");
  if (dev == "any") dev.clear();
  PictureFault f{.kind = "capture", .step = step.name, .place = place_of(step), .dev = dev};
  f.details.push_back(picture_param(p, "filter"));
  if (const std::string file = picture_param(p, "file"); !file.empty()) f.details.push_back(file);
  picture.add_fault(std::move(f));
}

}  // namespace

}  // namespace rxerun::steps
