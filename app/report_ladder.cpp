#include "app/report_ladder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/html.h"
#include "base/strings.h"
#include "base/try.h"
#include "base/utf8.h"
#include "roce/opcodes.h"
#include "roce/packet.h"
#include "roce/summary.h"
#include "sys/pcap_file.h"

namespace rxerun {

namespace {

// The diagram's geometry, in pixels: the time column, the distance between
// two lifelines (room for a label such as "READ_RESP_MIDDLE PSN 16777215
// 1024 B retransmit"), a row, the lifelines' heading.
constexpr int kLadderTimeWidth = 84;
constexpr int kLadderColumn = 250;
constexpr int kLadderRow = 20;
constexpr int kLadderHeadHeight = 36;
constexpr int kLadderStripWidth = 320;
constexpr int kLadderStripHeight = 64;
constexpr std::uint32_t kLadderPsnMask = 0xffffff;
// QPs named in a lifeline's heading; its <title> names them all.
constexpr std::size_t kLadderHeadQps = 4;

enum class LadderKind { request, response, ack, nak, rnr_nak, cnp, other, malformed };

// One frame of the file as the ladder draws it.
struct LadderFrame {
  std::uint64_t number = 0;  // 1-based, as pcap tools count
  std::int64_t since_first_ns = 0;
  std::uint32_t wire_length = 0;
  std::size_t captured = 0;
  LadderKind kind = LadderKind::other;
  std::optional<roce::Packet> packet;  // when it is a RoCEv2 packet
  std::string reason;                  // other traffic or malformed: why there is no arrow
  bool retransmit = false;             // a PSN repeat of its request flow, as roce::Summary counts them
  bool gap = false;                    // a PSN gap of its request flow, likewise
};

struct LadderCapture {
  std::size_t max_drawn = 0;
  std::vector<LadderFrame> drawn;  // the first max_drawn frames
  std::uint64_t frames = 0;        // whole frames in the file
  roce::Summary summary;           // of all of them, not only the drawn
  std::string cut;                 // libpcap's words when the file ends in the middle of a frame
};

// NAKs and RNR NAKs by the AETH, ACKs by the opcode and the AETH, as
// roce::Summary counts them, so that the classes agree with the summary line
// (an ACKNOWLEDGE with a reserved syndrome, which it does not count, is an
// "ack" here all the same).
LadderKind ladder_kind_of(const roce::Packet& p) {
  const std::uint8_t transport = p.bth.opcode & 0xe0;
  const std::uint8_t operation = p.bth.opcode & 0x1f;
  if (transport == 0x80) return LadderKind::cnp;
  if (p.aeth && p.aeth->kind == roce::AethKind::nak) return LadderKind::nak;
  if (p.aeth && p.aeth->kind == roce::AethKind::rnr_nak) return LadderKind::rnr_nak;
  if (p.aeth && operation == 0x11) return LadderKind::ack;
  // RDMA READ responses and atomic acknowledgements of RC, RD and XRC.
  const bool has_responses = transport == 0x00 || transport == 0x40 || transport == 0xa0;
  if (p.aeth || (has_responses && operation >= 0x0d && operation <= 0x12)) return LadderKind::response;
  return LadderKind::request;
}

const char* ladder_kind_class(LadderKind kind) {
  switch (kind) {
    case LadderKind::request: return "request";
    case LadderKind::response: return "response";
    case LadderKind::ack: return "ack";
    case LadderKind::nak: return "nak";
    case LadderKind::rnr_nak: return "rnr-nak";
    case LadderKind::cnp: return "cnp";
    case LadderKind::other: return "other";
    case LadderKind::malformed: return "malformed";
  }
  return "other";
}

std::int64_t ladder_frame_ns(const sys::PcapFrame& f) {
  return f.seconds * 1'000'000'000 + f.nanoseconds;
}

// One frame decoded and counted; `drawn` when it is kept for the diagram.
void ladder_add_frame(LadderCapture& c, const sys::PcapFrame& f, int link_type, std::int64_t since_first_ns) {
  auto decoded = roce::decode(f.data, link_type);
  if (c.drawn.size() >= c.max_drawn) {
    c.summary.add(decoded, f.wire_length);
    return;
  }
  LadderFrame& row = c.drawn.emplace_back();
  row.number = c.frames;
  row.since_first_ns = since_first_ns;
  row.wire_length = f.wire_length;
  row.captured = f.data.size();
  // The summary's own counts say whether this packet repeated or skipped a
  // PSN of its flow: one rule for the line above the diagram and the marks in it.
  const std::uint64_t repeats = c.summary.psn_repeats(), gaps = c.summary.psn_gaps();
  c.summary.add(decoded, f.wire_length);
  row.retransmit = c.summary.psn_repeats() > repeats;
  row.gap = c.summary.psn_gaps() > gaps;
  if (!decoded) {
    row.kind = LadderKind::malformed;
    row.reason = decoded.error().message;
  } else if (auto* packet = std::get_if<roce::Packet>(&*decoded)) {
    row.kind = ladder_kind_of(*packet);
    row.packet = std::move(*packet);
  } else {
    row.kind = LadderKind::other;
    row.reason = std::get<roce::NotRoce>(*decoded).reason;
  }
}

Result<LadderCapture> ladder_read(const std::string& path, std::size_t max_packets) {
  RXERUN_TRY_ASSIGN(sys::PcapFile file, sys::PcapFile::open(path));
  const int link_type = file.link_type();
  if (!roce::decodable_link_type(link_type))
    return make_error(fmt::format(
        "link type {} is not one the ladder reads (Ethernet 1, raw IP 101 or 12, Linux cooked 113 or 276)", link_type));
  LadderCapture c;
  c.max_drawn = max_packets;
  std::int64_t first_ns = 0;
  while (true) {
    auto next = file.next();
    if (!next) {
      c.cut = next.error().message;
      break;
    }
    if (!*next) break;
    const sys::PcapFrame& f = **next;
    if (++c.frames == 1) first_ns = ladder_frame_ns(f);
    ladder_add_frame(c, f, link_type, ladder_frame_ns(f) - first_ns);
  }
  return c;
}

// Seconds since the first frame, as `rxerun decode` shows them.
std::string ladder_time(std::int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  const std::int64_t t = ns < 0 ? -ns : ns;
  return fmt::format("{}{}.{:06}", sign, t / 1'000'000'000, t % 1'000'000'000 / 1000);
}

std::string ladder_qp(std::uint32_t qp) {
  return fmt::format("0x{:06x}", qp);
}

const char* ladder_nak_short(roce::NakCode code) {
  switch (code) {
    case roce::NakCode::psn_sequence_error: return "PSN seq err";
    case roce::NakCode::invalid_request: return "inv req";
    case roce::NakCode::remote_access_error: return "rem access err";
    case roce::NakCode::remote_operational_error: return "rem op err";
    case roce::NakCode::invalid_rd_request: return "inv RD req";
    case roce::NakCode::reserved: return "reserved";
  }
  return "reserved";
}

void ladder_replace(std::string& text, std::string_view from, std::string_view to) {
  if (const auto at = text.find(from); at != std::string::npos) text.replace(at, from.size(), to);
}

// The arrow's label: the operation without what the lifelines already say
// ("WRITE_FIRST", "READ_RESP_LAST", "SEND_ONLY_IMM"), the transport named
// when it is not RC, the AETH's verdict for acknowledgements.
std::string ladder_short_name(const roce::Packet& p) {
  const std::uint8_t operation = p.bth.opcode & 0x1f;
  if (p.aeth && operation == 0x11) {
    switch (p.aeth->kind) {
      case roce::AethKind::ack: return "ACK";
      case roce::AethKind::rnr_nak: return "RNR NAK";
      case roce::AethKind::nak: return std::string("NAK ") + ladder_nak_short(p.aeth->nak);
      case roce::AethKind::reserved: return "ACK (reserved AETH)";
    }
  }
  std::string name = roce::operation_name(p.bth.opcode);
  if (name.empty()) return roce::opcode_name(p.bth.opcode);
  if (name == "CNP") return name;
  ladder_replace(name, "RDMA_", "");
  ladder_replace(name, "READ_REQUEST", "READ_REQ");
  ladder_replace(name, "READ_RESPONSE", "READ_RESP");
  ladder_replace(name, "ATOMIC_ACKNOWLEDGE", "ATOMIC_ACK");
  ladder_replace(name, "_WITH_IMMEDIATE", "_IMM");
  ladder_replace(name, "_WITH_INVALIDATE", "_INV");
  const std::string transport = roce::transport_name(p.bth.opcode);
  return transport == "RC" ? name : transport + " " + name;
}

// The lifelines: one per IP address, in the order the addresses first
// appear, each with the destination QPs of the packets sent to it.
struct LadderColumns {
  std::vector<std::string> addresses;
  std::vector<std::set<std::uint32_t>> qps;
  std::map<std::string, std::size_t> index;

  std::size_t at(const std::string& address) {
    const auto [it, added] = index.emplace(address, addresses.size());
    if (added) {
      addresses.push_back(address);
      qps.emplace_back();
    }
    return it->second;
  }
  static int x(std::size_t column) {
    return kLadderTimeWidth + kLadderColumn / 2 + static_cast<int>(column) * kLadderColumn;
  }
  // At least two columns wide, so that a capture without RoCEv2 has room for its rows' reasons.
  int width() const {
    return kLadderTimeWidth + static_cast<int>(std::max<std::size_t>(addresses.size(), 2)) * kLadderColumn;
  }
};

LadderColumns ladder_columns(const std::vector<LadderFrame>& drawn) {
  LadderColumns columns;
  for (const LadderFrame& f : drawn) {
    if (!f.packet) continue;
    columns.at(f.packet->ip_src);
    columns.qps[columns.at(f.packet->ip_dst)].insert(f.packet->bth.dest_qp);
  }
  return columns;
}

void ladder_head(std::string& out, const LadderColumns& columns) {
  const int width = columns.width();
  fmt::format_to(std::back_inserter(out),
                 R"(<svg class="ladder-head" xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" )"
                 R"(viewBox="0 0 {0} {1}"><text class="th" x="4" y="22">time (s)</text>)",
                 width, kLadderHeadHeight);
  for (std::size_t i = 0; i < columns.addresses.size(); ++i) {
    std::string shown, all;
    std::size_t n = 0;
    for (std::uint32_t qp : columns.qps[i]) {
      all += " " + ladder_qp(qp);
      if (n++ < kLadderHeadQps) shown += " " + ladder_qp(qp);
    }
    if (n > kLadderHeadQps) shown += fmt::format(" +{}", n - kLadderHeadQps);
    const std::string address = html_attr(columns.addresses[i]);
    fmt::format_to(std::back_inserter(out),
                   R"(<g><title>{0}{1}</title><text class="addr" x="{2}" y="15">{0}</text>)"
                   R"(<text class="qps" x="{2}" y="30">{3}</text></g>)",
                   address, all.empty() ? "" : ": QP" + all, LadderColumns::x(i), shown.empty() ? "" : "QP" + shown);
  }
  out += "</svg>";
}

// The marks a packet's row carries, as classes and as words.
std::string ladder_classes(const LadderFrame& f) {
  std::string classes = std::string("pk ") + ladder_kind_class(f.kind);
  if (f.retransmit) classes += " retransmit";
  if (f.gap) classes += " gap";
  if (f.packet && !f.packet->icrc_ok) classes += " icrc-bad";
  return classes;
}

std::string ladder_marks(const LadderFrame& f) {
  std::string marks;
  if (f.retransmit) marks += " retransmit";
  if (f.gap) marks += " PSN GAP";
  if (f.packet && !f.packet->icrc_ok) marks += " ICRC BAD";
  return marks;
}

void ladder_packet_row(std::string& out, const LadderFrame& f, const LadderColumns& columns, int top) {
  const roce::Packet& p = *f.packet;
  const int from = LadderColumns::x(columns.index.at(p.ip_src));
  const int to = LadderColumns::x(columns.index.at(p.ip_dst));
  const int y = top + 14;
  const std::string length = p.payload_length ? fmt::format(" {} B", p.payload_length) : "";
  const std::string marks = ladder_marks(f);
  auto o = std::back_inserter(out);
  fmt::format_to(o, R"(<g class="{}" data-packet="{}"><title>frame {}: {} → {} {} QP {} PSN {}{}{}{}</title>)",
                 ladder_classes(f), f.number, f.number, html_attr(p.ip_src), html_attr(p.ip_dst),
                 roce::opcode_display_name(p.bth.opcode), ladder_qp(p.bth.dest_qp), p.bth.psn, length,
                 p.bth.ack_req ? " AckReq" : "", marks);
  fmt::format_to(o, R"(<text class="t" x="4" y="{}">{}</text>)", y, ladder_time(f.since_first_ns));
  if (from == to) {
    // To an address of its own (a loopback capture): a small loop back to the lifeline.
    fmt::format_to(o, R"(<path class="loop" d="M{0} {1}h24v9h-24"/><path d="M{0} {2}l7-3v6z"/>)", from, y - 5, y + 4);
  } else {
    const int head = to > from ? -7 : 7;
    fmt::format_to(o, R"(<path d="M{} {}H{}m0 0l{}-3v6z"/>)", from, y, to, head);
  }
  fmt::format_to(o, R"(<text x="{}" y="{}">{} PSN {}{}{}</text></g>)", (from + to) / 2 + (from == to ? 60 : 0), y - 4,
                 ladder_short_name(p), p.bth.psn, length, marks);
}

// A frame without an arrow: other traffic, or one the decoder could not read.
void ladder_grey_row(std::string& out, const LadderFrame& f, int width, int top) {
  const char* what = f.kind == LadderKind::malformed ? "malformed" : "not RoCEv2";
  const std::string reason = html_attr(f.reason);
  fmt::format_to(
      std::back_inserter(out),
      R"(<g class="{}" data-packet="{}"><title>frame {}: {}: {}</title><rect y="{}" width="{}" height="{}"/>)"
      R"(<text class="t" x="4" y="{}">{}</text><text x="{}" y="{}">{}: {}</text></g>)",
      ladder_classes(f), f.number, f.number, what, reason, top, width, kLadderRow, top + 14,
      ladder_time(f.since_first_ns), (kLadderTimeWidth + width) / 2, top + 14, what, reason);
}

void ladder_diagram(std::string& out, const LadderCapture& c, const std::string& prefix) {
  const LadderColumns columns = ladder_columns(c.drawn);
  const int width = columns.width();
  const int height = static_cast<int>(c.drawn.size()) * kLadderRow + 4;
  out += R"(<div class="ladder-body"><div class="ladder-scroll" tabindex="0">)";
  ladder_head(out, columns);
  fmt::format_to(std::back_inserter(out),
                 R"(<svg class="ladder-rows" id="{0}-rows" xmlns="http://www.w3.org/2000/svg" width="{1}" )"
                 R"(height="{2}" viewBox="0 0 {1} {2}" data-row="{3}"><path class="life" d=")",
                 prefix, width, height, kLadderRow);
  for (std::size_t i = 0; i < columns.addresses.size(); ++i)
    fmt::format_to(std::back_inserter(out), "M{} 0V{}", LadderColumns::x(i), height);
  out += R"("/>)";
  int top = 0;
  for (const LadderFrame& f : c.drawn) {
    if (f.packet)
      ladder_packet_row(out, f, columns, top);
    else
      ladder_grey_row(out, f, width, top);
    top += kLadderRow;
  }
  fmt::format_to(std::back_inserter(out),
                 R"(</svg></div><aside class="ladder-panel" id="{}-panel" hidden></aside></div>)", prefix);
}

// A request flow's packets for its strip: time, PSN and marks.
struct LadderFlowPoint {
  std::int64_t ns = 0;
  std::uint32_t psn = 0;
  bool retransmit = false, gap = false;
};

struct LadderFlow {
  std::string address;
  std::uint32_t qp = 0;
  std::vector<LadderFlowPoint> points;
};

// The request flows of the drawn frames, as roce::Summary keys them
// (destination address and QP), in the order they first appear.
std::vector<LadderFlow> ladder_flows(const std::vector<LadderFrame>& drawn) {
  std::vector<LadderFlow> flows;
  std::map<std::pair<std::string, std::uint32_t>, std::size_t> index;
  for (const LadderFrame& f : drawn) {
    if (!f.packet || !roce::is_rc_or_uc_request(f.packet->bth.opcode)) continue;
    const roce::Packet& p = *f.packet;
    const auto [it, added] = index.emplace(std::make_pair(p.ip_dst, p.bth.dest_qp), flows.size());
    if (added) flows.push_back({p.ip_dst, p.bth.dest_qp, {}});
    flows[it->second].points.push_back({f.since_first_ns, p.bth.psn & kLadderPsnMask, f.retransmit, f.gap});
  }
  return flows;
}

// One strip: x is the time over all drawn frames (strips of one capture
// compare), y the PSN, unwrapped across the 24-bit wrap.
void ladder_strip(std::string& out, const LadderFlow& flow, std::int64_t last_ns) {
  std::vector<std::int64_t> psn;
  psn.reserve(flow.points.size());
  for (const LadderFlowPoint& point : flow.points) {
    if (psn.empty()) {
      psn.push_back(point.psn);
      continue;
    }
    std::int64_t step = (point.psn - flow.points[psn.size() - 1].psn) & kLadderPsnMask;
    if (step >= (kLadderPsnMask + 1) / 2) step -= kLadderPsnMask + 1;
    psn.push_back(psn.back() + step);
  }
  const auto [low, high] = std::minmax_element(psn.begin(), psn.end());
  const double span_t = std::max<std::int64_t>(last_ns, 1), span_psn = std::max<std::int64_t>(*high - *low, 1);
  std::string dots[3];  // in order, marked retransmit, marked gap
  std::size_t repeats = 0, gaps = 0;
  for (std::size_t i = 0; i < psn.size(); ++i) {
    const LadderFlowPoint& point = flow.points[i];
    const double x = 4 + (kLadderStripWidth - 8) * std::clamp(point.ns / span_t, 0.0, 1.0);
    const double y = *high == *low ? kLadderStripHeight / 2.0
                                   : kLadderStripHeight - 4 - (kLadderStripHeight - 8) * ((psn[i] - *low) / span_psn);
    repeats += point.retransmit;
    gaps += point.gap;
    fmt::format_to(std::back_inserter(dots[point.retransmit ? 1 : point.gap ? 2 : 0]), "M{:.0f} {:.0f}h0", x, y);
  }
  const std::string address = html_attr(flow.address), qp = ladder_qp(flow.qp);
  const std::string caption =
      fmt::format("{} QP {}: {} packet{}, PSN {}..{}, {} retransmission{}, {} gap{}", address, qp, psn.size(),
                  psn.size() == 1 ? "" : "s", flow.points.front().psn, flow.points.back().psn, repeats,
                  repeats == 1 ? "" : "s", gaps, gaps == 1 ? "" : "s");
  fmt::format_to(std::back_inserter(out),
                 R"(<figure class="psn-strip" data-flow="{}/{}"><svg xmlns="http://www.w3.org/2000/svg" width="{}" )"
                 R"(height="{}" viewBox="0 0 {} {}"><title>{}</title><rect class="frame" width="{}" height="{}"/>)",
                 address, qp, kLadderStripWidth, kLadderStripHeight, kLadderStripWidth, kLadderStripHeight, caption,
                 kLadderStripWidth, kLadderStripHeight);
  const char* classes[3] = {"d", "r", "g"};
  for (int i = 0; i < 3; ++i)
    if (!dots[i].empty()) fmt::format_to(std::back_inserter(out), R"(<path class="{}" d="{}"/>)", classes[i], dots[i]);
  fmt::format_to(std::back_inserter(out), "</svg><figcaption>{}</figcaption></figure>", caption);
}

void ladder_strips(std::string& out, const std::vector<LadderFrame>& drawn) {
  const std::vector<LadderFlow> flows = ladder_flows(drawn);
  if (flows.empty()) return;
  const std::int64_t last_ns = drawn.back().since_first_ns;
  out += R"(<div class="psn-strips">)";
  for (const LadderFlow& flow : flows) ladder_strip(out, flow, last_ns);
  out += "</div>";
}

// A count of the summary line; those that say something went wrong stand
// out when they are not zero.
std::string ladder_count(const char* what, std::uint64_t n, bool bad) {
  return fmt::format(R"(<span class="{}">{} {}</span>)", bad && n ? "warn" : "n", what, n);
}

void ladder_summary(std::string& out, const LadderCapture& c, const std::string& name) {
  const roce::Summary& s = c.summary;
  fmt::format_to(
      std::back_inserter(out),
      R"(<p class="ladder-summary"><b class="ladder-name">{}</b>: {} frame{}: {} RoCEv2 packet{}, {} other, )"
      "{} · {} · {} · {} · {} · {} · {}</p>",
      html_attr(name), c.frames, c.frames == 1 ? "" : "s", s.packets(), s.packets() == 1 ? "" : "s", s.other(),
      ladder_count("malformed", s.malformed(), true), ladder_count("ACKs", s.acks(), false),
      ladder_count("NAKs", s.naks(), true), ladder_count("RNR NAKs", s.rnr_naks(), true),
      ladder_count("PSN repeats", s.psn_repeats(), true), ladder_count("PSN gaps", s.psn_gaps(), true),
      ladder_count("ICRC bad", s.icrc_bad(), true));
}

void ladder_notes(std::string& out, const LadderCapture& c, const std::string& name) {
  auto o = std::back_inserter(out);
  if (c.frames == 0 && c.cut.empty()) out += R"(<p class="ladder-note">The capture holds no frame.</p>)";
  if (c.frames > c.drawn.size()) {
    const std::uint64_t more = c.frames - c.drawn.size();
    fmt::format_to(o, R"(<p class="ladder-note">{} more frame{} not drawn; <code>{}</code> lists them all</p>)", more,
                   more == 1 ? "" : "s", html_attr("rxerun decode " + shell_quote(name)));
  }
  if (!c.cut.empty())
    fmt::format_to(o, R"(<p class="ladder-note">The file ends in the middle of the frame after frame {}: {}</p>)",
                   c.frames, html_attr(c.cut));
}

// Strings that repeat from packet to packet (addresses, names, reasons),
// written once in the JSON and referred to by their index.
class LadderStrings {
 public:
  int id(const std::string& text) {
    const auto [it, added] = index_.emplace(text, static_cast<int>(list_.size()));
    if (added) list_.push_back(text);
    return it->second;
  }
  const nlohmann::json& list() const { return list_; }

 private:
  std::map<std::string, int> index_;
  nlohmann::json list_ = nlohmann::json::array();
};

std::string ladder_hex(std::uint64_t value) {
  return fmt::format("0x{:x}", value);
}

std::string ladder_aeth_text(const roce::Aeth& a) {
  switch (a.kind) {
    case roce::AethKind::ack: return fmt::format("ACK, credits {}", a.value);
    case roce::AethKind::rnr_nak: return fmt::format("RNR NAK, timer {}", a.value);
    case roce::AethKind::nak: return fmt::format("NAK, {} (code {})", roce::nak_code_name(a.nak), a.value);
    case roce::AethKind::reserved: break;
  }
  return "reserved";
}

// The extension headers present, by a letter of their own (see kLadderScript).
// 64-bit values go as hex strings: JavaScript's numbers hold 53 bits.
nlohmann::json ladder_extensions(const roce::Packet& p, LadderStrings& strings) {
  nlohmann::json x = nlohmann::json::object();
  if (p.rdeth_ee_context) x["E"] = *p.rdeth_ee_context;
  if (p.deth) x["D"] = {p.deth->qkey, p.deth->src_qp};
  if (p.reth) x["R"] = {ladder_hex(p.reth->va), p.reth->rkey, p.reth->dma_length};
  if (p.atomic_eth)
    x["T"] = {ladder_hex(p.atomic_eth->va), p.atomic_eth->rkey, ladder_hex(p.atomic_eth->swap_add),
              ladder_hex(p.atomic_eth->compare)};
  if (p.aeth) x["A"] = {p.aeth->syndrome, p.aeth->msn, strings.id(ladder_aeth_text(*p.aeth))};
  if (p.atomic_ack_eth) x["K"] = ladder_hex(p.atomic_ack_eth->orig_data);
  if (p.imm) x["I"] = *p.imm;
  if (p.ieth) x["V"] = *p.ieth;
  return x;
}

// One drawn frame: [frame, ns since the first, wire length, captured length,
// kind (0 other, 1 malformed, 2 RoCEv2), ...]; the layout is kLadderScript's.
// Flags are 0 or 1.
nlohmann::json ladder_record(const LadderFrame& f, LadderStrings& strings) {
  nlohmann::json r = {f.number, f.since_first_ns, f.wire_length, f.captured};
  if (!f.packet) {
    r.push_back(f.kind == LadderKind::malformed ? 1 : 0);
    r.push_back(strings.id(f.reason));
    return r;
  }
  const roce::Packet& p = *f.packet;
  const roce::Bth& b = p.bth;
  const auto bit = [](bool flag) { return flag ? 1 : 0; };  // shorter than true and false
  nlohmann::json link = {strings.id(p.link_src), strings.id(p.link_dst)};
  for (std::uint16_t vlan : p.vlan_ids) link.push_back(vlan);
  const std::string name = roce::opcode_name(b.opcode) + " (" + roce::opcode_display_name(b.opcode) + ")";
  r.push_back(2);
  r.push_back(std::move(link));
  r.push_back({p.ip_version, strings.id(p.ip_src), strings.id(p.ip_dst), p.dscp, p.ecn, p.ttl});
  r.push_back({p.src_port, p.dst_port, p.udp_length});
  r.push_back({b.opcode, strings.id(name), bit(b.solicited), bit(b.mig_req), b.pad, b.tver, b.pkey, bit(b.fecn),
               bit(b.becn), b.dest_qp, bit(b.ack_req), b.psn, bit(p.opcode_known)});
  r.push_back(ladder_extensions(p, strings));
  r.push_back(p.payload_length);
  r.push_back(p.icrc_stored);
  r.push_back(p.icrc_computed);
  r.push_back(bit(p.icrc_ok));
  return r;
}

// The packets' fields for the panel, as the content of a <script> element:
// '<', '>' and '&' occur only inside JSON strings, where \u escapes stand
// for them, so no "</script" or "<!--" can end or confuse the element.
void ladder_json(std::string& out, const LadderCapture& c, const std::string& name, const std::string& prefix) {
  LadderStrings strings;
  nlohmann::json packets = nlohmann::json::array();
  for (const LadderFrame& f : c.drawn) packets.push_back(ladder_record(f, strings));
  const nlohmann::json data = {{"v", 1}, {"name", name}, {"s", strings.list()}, {"p", std::move(packets)}};
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  fmt::format_to(std::back_inserter(out), R"(<script type="application/json" id="{}-packets">)", prefix);
  for (char ch : text) {
    switch (ch) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += ch;
    }
  }
  out += "</script>";
}

// The page's light theme; in print the ladder loses its scroll box and the
// panel, and lists every row. A row is one target from its time to its
// arrow's head (pointer-events: bounding-box), not only where its thin line
// and its letters are.
constexpr std::string_view kLadderCss = R"css(
.ladder{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:1em 0}
.ladder-summary{margin:.3em 0}
.ladder-summary .warn{color:#b00;font-weight:600}
.ladder-note{color:#555;font-style:italic;margin:.3em 0}
.ladder-body{display:flex;gap:12px;align-items:flex-start}
.ladder-scroll{flex:1 1 auto;min-width:0;max-height:70vh;overflow:auto;border:1px solid #ccc;background:#fff}
.ladder-scroll:focus{outline:2px solid #58a}
.ladder-head{position:sticky;top:0;z-index:1;display:block;background:#f6f6f6;border-bottom:1px solid #ccc}
.ladder-rows{display:block}
.ladder svg text{font:11px ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;fill:#222}
.ladder-head text,.ladder-rows text{text-anchor:middle}
.ladder-head .addr{font-weight:700}
.ladder-head .qps,.ladder-head .th{fill:#666}
.ladder-head .th,.ladder-rows text.t{text-anchor:start}
.ladder-rows .life{stroke:#bbb;stroke-dasharray:4 3;fill:none}
.ladder .pk{cursor:pointer;pointer-events:bounding-box}
.ladder .pk path{stroke:#246;fill:#246;stroke-width:1.3}
.ladder .pk path.loop{fill:none}
.ladder .pk.ack path,.ladder .pk.response path{stroke:#286;fill:#286}
.ladder .pk.ack text,.ladder .pk.response text{fill:#264}
.ladder .pk.cnp path{stroke:#888;fill:#888}
.ladder .pk.retransmit path{stroke:#d70;fill:#d70;stroke-dasharray:6 3}
.ladder .pk.retransmit text{fill:#a50;font-weight:700}
.ladder .pk.gap path{stroke:#72c;fill:#72c;stroke-dasharray:2 2}
.ladder .pk.gap text{fill:#62a;font-weight:700}
.ladder .pk.nak path,.ladder .pk.rnr-nak path,.ladder .pk.icrc-bad path{stroke:#c00;fill:#c00}
.ladder .pk.nak text,.ladder .pk.rnr-nak text,.ladder .pk.icrc-bad text{fill:#c00;font-weight:700}
.ladder .pk.other rect,.ladder .pk.malformed rect{fill:#eee}
.ladder .pk.other text{fill:#777}
.ladder .pk.malformed text{fill:#955;font-style:italic}
.ladder .pk:hover text{text-decoration:underline}
.ladder .pk.sel path{stroke-width:3}
.ladder .pk.sel text{font-weight:700}
.ladder .pk.sel rect{fill:#dde6f3}
.ladder .pk text.t{fill:#666;font-weight:400;font-style:normal;text-decoration:none}
.ladder-panel{flex:0 0 24rem;max-width:45%;box-sizing:border-box;position:sticky;top:8px;max-height:70vh;overflow:auto;border:1px solid #ccc;background:#fcfcfc;padding:6px 8px}
.ladder-panel[hidden]{display:none}
.ladder-panel-head{display:flex;align-items:center;gap:4px;margin-bottom:4px}
.ladder-panel-head b{flex:1}
.ladder-panel button{font:inherit;padding:0 6px;cursor:pointer}
.ladder-panel table{border-collapse:collapse;width:100%;font-size:12px}
.ladder-panel th{text-align:left;background:#e8ecf4;padding:3px 4px}
.ladder-panel td{padding:1px 4px;vertical-align:top;border-bottom:1px solid #eee}
.ladder-panel td:first-child{color:#555;white-space:nowrap}
.ladder-panel td+td{font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
.ladder-panel .bad{color:#c00;font-weight:700}
.psn-strips{display:flex;flex-wrap:wrap;gap:10px;margin-top:8px}
.psn-strip{margin:0;padding:4px;border:1px solid #ddd;background:#fff}
.psn-strip svg{display:block}
.psn-strip figcaption{font-size:11px;color:#444;max-width:320px}
.psn-strip .frame{fill:#fafafa;stroke:#e4e4e4}
.psn-strip path{fill:none;stroke-width:3;stroke-linecap:round}
.psn-strip .d{stroke:#246}
.psn-strip .r{stroke:#d70}
.psn-strip .g{stroke:#72c}
@media (max-width:900px){.ladder-body{flex-direction:column}.ladder-panel{position:static;flex:none;width:100%;max-width:none}}
@media print{.ladder-scroll{max-height:none;overflow:visible;border:0}.ladder-head{position:static}.ladder-panel{display:none}.ladder .pk{cursor:auto}}
)css";

// The detail panel, built on a click from the JSON of the ladder it is in.
// Plain ES2017 without modules; every entry point is guarded, so that no
// input (an odd record, a page without panels) raises an error. The leading
// ';' keeps it one statement of its own when a page joins it to its own
// script.
constexpr std::string_view kLadderScript = R"js(
;(function () {
  'use strict';
  // A record (app/report_ladder.cpp, ladder_record): [frame, ns since the first frame, wire length,
  // captured length, kind (0 other, 1 malformed, 2 RoCEv2), ...]. Kinds 0 and 1 then hold the
  // reason; kind 2: link [source, destination, VLAN ids...], IP [version, source, destination,
  // DSCP, ECN, TTL], UDP [source port, destination port, length], BTH [opcode, name, SE, M,
  // PadCnt, TVer, P_Key, FECN, BECN, DestQP, AckReq, PSN, opcode known], extension headers
  // {E: RDETH, D: DETH, R: RETH, T: AtomicETH, A: AETH, K: AtomicAckETH, I: ImmDt, V: IETH},
  // payload length, ICRC stored, ICRC computed, ICRC ok. Flags are 0 or 1; addresses, names and
  // reasons are indices into the string table `s`.
  function guard(f) {
    try { f(); } catch (err) { /* a report that cannot show a panel still shows the ladder */ }
  }
  function arr(v) { return Array.isArray(v) ? v : []; }
  function num(v) { return typeof v === 'number' && isFinite(v) ? v : 0; }
  function hex(v, width) {
    if (typeof v === 'string') return v;
    var s = Math.max(0, Math.floor(num(v))).toString(16);
    while (s.length < width) s = '0' + s;
    return '0x' + s;
  }
  function flag(v) { return v ? '1' : '0'; }
  function seconds(ns) {
    var n = num(ns);
    var sign = n < 0 ? '-' : '';
    n = Math.abs(n);
    var fraction = String(Math.floor((n % 1e9) / 1e3));
    while (fraction.length < 6) fraction = '0' + fraction;
    return sign + Math.floor(n / 1e9) + '.' + fraction;
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  function extensions(x, str, out) {
    if ('E' in x) out.push(['RDETH', [['EE context', num(x.E)]]]);
    var d = arr(x.D), r = arr(x.R), t = arr(x.T), a = arr(x.A);
    if (x.D) out.push(['DETH', [['Q_Key', hex(d[0], 8)], ['source QP', hex(d[1], 6)]]]);
    if (x.R) out.push(['RETH', [['VA', hex(r[0], 1)], ['R_Key', hex(r[1], 8)], ['DMA length', num(r[2])]]]);
    if (x.T) {
      out.push(['AtomicETH', [['VA', hex(t[0], 1)], ['R_Key', hex(t[1], 8)], ['swap or add', hex(t[2], 1)],
        ['compare', hex(t[3], 1)]]]);
    }
    if (x.A) out.push(['AETH', [['syndrome', hex(a[0], 2)], ['meaning', str(a[2])], ['MSN', num(a[1])]]]);
    if ('K' in x) out.push(['AtomicAckETH', [['original data', hex(x.K, 1)]]]);
    if ('I' in x) out.push(['ImmDt', [['immediate data', hex(x.I, 8)]]]);
    if ('V' in x) out.push(['IETH', [['R_Key to invalidate', hex(x.V, 8)]]]);
  }

  // The packet's headers as [section, [[field, value, class]...]].
  function sections(rec, s) {
    function str(i) { return typeof i === 'number' && typeof s[i] === 'string' ? s[i] : ''; }
    var out = [['Frame', [['number', num(rec[0])], ['time since the first', seconds(rec[1]) + ' s'],
      ['length on the wire', num(rec[2]) + ' bytes'], ['captured', num(rec[3]) + ' bytes']]]];
    if (rec[4] !== 2) {
      out.push([rec[4] === 1 ? 'Malformed' : 'Not RoCEv2', [['reason', str(rec[5])]]]);
      return out;
    }
    var l = arr(rec[5]), ip = arr(rec[6]), u = arr(rec[7]), b = arr(rec[8]);
    var x = rec[9] && typeof rec[9] === 'object' ? rec[9] : {};
    if (str(l[0]) || str(l[1])) {
      var eth = [['source', str(l[0]) || '-'], ['destination', str(l[1]) || '-']];
      if (l.length > 2) eth.push(['VLANs', l.slice(2).map(num).join(', ')]);
      out.push(['Ethernet', eth]);
    }
    var v = num(ip[0]), ecn = num(ip[4]);
    out.push(['IPv' + v, [['version', v], ['source', str(ip[1])], ['destination', str(ip[2])],
      ['DSCP', num(ip[3])], ['ECN', ecn + (ecn === 3 ? ' (congestion experienced)' : '')],
      [v === 6 ? 'hop limit' : 'TTL', num(ip[5])]]]);
    out.push(['UDP', [['source port', num(u[0])], ['destination port', num(u[1])], ['length', num(u[2])]]]);
    out.push(['BTH', [['opcode', hex(b[0], 2) + ' ' + str(b[1])], ['SE', flag(b[2])], ['M', flag(b[3])],
      ['PadCnt', num(b[4])], ['TVer', num(b[5])], ['P_Key', hex(b[6], 4)], ['FECN', flag(b[7])],
      ['BECN', flag(b[8])], ['DestQP', hex(b[9], 6)], ['AckReq', flag(b[10])], ['PSN', num(b[11])]]]);
    if (b[12] === 0) out.push(['Extension headers', [['', 'not decoded (unknown opcode): in the payload']]]);
    extensions(x, str, out);
    var ok = rec[13] === 1;
    out.push(['Payload', [['length', num(rec[10]) + ' bytes']]]);
    out.push(['ICRC', [['stored', hex(rec[11], 8)], ['computed', hex(rec[12], 8)],
      ['verdict', ok ? 'ok' : 'BAD', ok ? '' : 'bad']]]);
    return out;
  }

  var MARKS = [['retransmit', 'retransmission: a PSN repeat of its flow'],
    ['gap', 'PSN gap: packets of its flow missing before it'], ['nak', 'NAK'], ['rnr-nak', 'RNR NAK'],
    ['icrc-bad', 'ICRC does not match'], ['malformed', 'malformed frame']];

  function button(text, title, action) {
    var b = el('button', '', text);
    b.type = 'button';
    b.title = title;
    b.addEventListener('click', function () { guard(action); });
    return b;
  }

  function render(state, g) {
    var frame = g.getAttribute('data-packet') || '';
    var rec = state.records[frame];
    var panel = state.panel;
    while (panel.firstChild) panel.removeChild(panel.firstChild);
    var head = el('div', 'ladder-panel-head');
    head.appendChild(el('b', '', (state.name ? state.name + ', ' : '') + 'frame ' + frame));
    head.appendChild(button('\u2191', 'previous frame (\u2191)', function () { move(state, -1); }));
    head.appendChild(button('\u2193', 'next frame (\u2193)', function () { move(state, 1); }));
    head.appendChild(button('\u00d7', 'close (Esc)', function () { close(state); }));
    panel.appendChild(head);
    var marks = MARKS.filter(function (m) { return g.classList.contains(m[0]); }).map(function (m) { return m[1]; });
    if (marks.length) panel.appendChild(el('p', 'bad', marks.join('; ')));
    if (!Array.isArray(rec)) {
      panel.appendChild(el('p', '', 'No fields were recorded for this frame.'));
    } else {
      var table = el('table');
      sections(rec, state.strings).forEach(function (section) {
        var row = el('tr');
        var th = el('th', '', section[0]);
        th.colSpan = 2;
        row.appendChild(th);
        table.appendChild(row);
        section[1].forEach(function (field) {
          var tr = el('tr');
          tr.appendChild(el('td', '', field[0]));
          tr.appendChild(el('td', field[2] || '', field[1]));
          table.appendChild(tr);
        });
      });
      panel.appendChild(table);
    }
    panel.hidden = false;
  }

  function select(state, index) {
    if (!(index >= 0 && index < state.rows.length)) return;
    if (state.current >= 0 && state.rows[state.current]) state.rows[state.current].classList.remove('sel');
    state.current = index;
    var g = state.rows[index];
    g.classList.add('sel');
    render(state, g);
  }

  function move(state, step) {
    if (state.current < 0) return;
    select(state, state.current + step);
    var g = state.rows[state.current];
    if (g && g.scrollIntoView) g.scrollIntoView({block: 'nearest'});
  }

  function close(state) {
    if (state.current >= 0 && state.rows[state.current]) state.rows[state.current].classList.remove('sel');
    state.current = -1;
    state.panel.hidden = true;
  }

  // A click on an arrow or its label selects its row; a click between
  // them, the row at that height.
  function click(state, e) {
    var g = e.target && e.target.closest ? e.target.closest('[data-packet]') : null;
    var index = g ? state.index[g.getAttribute('data-packet')] : undefined;
    if (typeof index !== 'number') {
      var box = state.svg.getBoundingClientRect();
      var height = parseFloat(state.svg.getAttribute('height')) || box.height;
      index = Math.floor((e.clientY - box.top) * (height / (box.height || 1)) / state.rowHeight);
    }
    select(state, index);
  }

  function key(state, e) {
    if (state.current < 0) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      move(state, e.key === 'ArrowDown' ? 1 : -1);
      e.preventDefault();
    } else if (e.key === 'Escape') {
      close(state);
    }
  }

  function init(root) {
    if (root.getAttribute('data-ladder-ready')) return;
    root.setAttribute('data-ladder-ready', '1');
    var svg = root.querySelector('svg.ladder-rows');
    var panel = root.querySelector('.ladder-panel');
    if (!svg || !panel) return;
    var holder = root.querySelector('script[type="application/json"]');
    var data = null;
    try { data = JSON.parse(holder ? holder.textContent : 'null'); } catch (err) { data = null; }
    if (!data || typeof data !== 'object') data = {};
    var state = {
      svg: svg, panel: panel, current: -1, strings: arr(data.s), records: Object.create(null),
      index: Object.create(null), name: typeof data.name === 'string' ? data.name : '',
      rows: Array.prototype.slice.call(svg.querySelectorAll('[data-packet]')),
      rowHeight: parseFloat(svg.getAttribute('data-row')) || 20
    };
    arr(data.p).forEach(function (r) { if (Array.isArray(r)) state.records[String(r[0])] = r; });
    state.rows.forEach(function (g, i) { state.index[g.getAttribute('data-packet')] = i; });
    svg.addEventListener('click', function (e) { guard(function () { click(state, e); }); });
    root.addEventListener('keydown', function (e) { guard(function () { key(state, e); }); });
  }

  function start() {
    guard(function () {
      var roots = document.querySelectorAll('div.ladder');
      for (var i = 0; i < roots.length; i++) {
        var root = roots[i];
        guard(function () { init(root); });
      }
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
)js";

}  // namespace

Result<std::string> render_ladder_html(const std::string& pcap_path, const LadderOptions& options) {
  RXERUN_TRY_ASSIGN(const LadderCapture capture, ladder_read(pcap_path, options.max_packets));
  const std::string name =
      options.shown_name.empty() ? std::filesystem::path(pcap_path).filename().string() : options.shown_name;
  const std::string prefix = html_attr(options.id_prefix);
  std::string out;
  out.reserve(4096 + capture.drawn.size() * 480);
  fmt::format_to(std::back_inserter(out), R"(<div class="ladder" id="{0}" data-ladder="{0}">)", prefix);
  ladder_summary(out, capture, name);
  if (!capture.drawn.empty()) ladder_diagram(out, capture, prefix);
  ladder_notes(out, capture, name);
  ladder_strips(out, capture.drawn);
  ladder_json(out, capture, name, prefix);
  out += "</div>\n";
  return out;
}

std::string_view ladder_css() {
  return kLadderCss;
}

std::string_view ladder_script() {
  return kLadderScript;
}

}  // namespace rxerun
