#include "app/cli_decode.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/output.h"
#include "engine/exit_code.h"
#include "roce/opcodes.h"
#include "roce/packet.h"
#include "roce/summary.h"
#include "sys/pcap_file.h"

namespace rxerun {

namespace {

// Output goes through one large buffer, written out in big pieces: a
// capture of a million packets is a million lines.
class Output {
 public:
  explicit Output(std::FILE* file) : file_(file) {}
  ~Output() { flush(); }
  fmt::memory_buffer& buffer() { return buffer_; }
  // Writes out the buffer once it holds more than `threshold` bytes; with
  // no threshold, everything, through to the file. False once a write failed.
  bool flush(std::size_t threshold = 0) {
    if (failed_) return false;
    if (buffer_.size() > threshold) {
      if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) failed_ = true;
      buffer_.clear();
    }
    if (threshold == 0 && std::fflush(file_) != 0) failed_ = true;
    return !failed_;
  }

 private:
  std::FILE* file_;
  fmt::memory_buffer buffer_;
  bool failed_ = false;
};

constexpr std::size_t kFlushAt = 1 << 20;

// The opcode names, made once: the per-packet path allocates nothing for them.
struct OpcodeNames {
  std::array<std::string, 256> name, display;
  OpcodeNames() {
    for (unsigned i = 0; i < 256; ++i) {
      name[i] = roce::opcode_name(static_cast<std::uint8_t>(i));
      display[i] = roce::opcode_display_name(static_cast<std::uint8_t>(i));
    }
  }
};

// Nanoseconds since the epoch.
std::int64_t frame_time(const sys::PcapFrame& f) {
  return f.seconds * 1'000'000'000 + f.nanoseconds;
}

void json_packet(fmt::memory_buffer& b, std::uint64_t frame, std::int64_t time_ns, const roce::Packet& p,
                 const std::string& name) {
  const auto sec = time_ns / 1'000'000'000, nsec = time_ns % 1'000'000'000;
  fmt::format_to(fmt::appender(b),
                 FMT_COMPILE(R"({{"frame":{},"time":{}.{:09},"src":"{}","dst":"{}","opcode":{},"opcode_name":"{}",)"
                             R"("dest_qp":{},"psn":{},"ack_req":{})"),
                 frame, sec, nsec, p.ip_src, p.ip_dst, p.bth.opcode, name, p.bth.dest_qp, p.bth.psn, p.bth.ack_req);
  if (p.reth)
    fmt::format_to(fmt::appender(b), FMT_COMPILE(R"(,"reth":{{"va":{},"rkey":{},"length":{}}})"), p.reth->va,
                   p.reth->rkey, p.reth->dma_length);
  if (p.aeth)
    fmt::format_to(fmt::appender(b), FMT_COMPILE(R"(,"aeth":{{"syndrome":{},"msn":{}}})"), p.aeth->syndrome,
                   p.aeth->msn);
  if (p.deth)
    fmt::format_to(fmt::appender(b), FMT_COMPILE(R"(,"deth":{{"qkey":{},"src_qp":{}}})"), p.deth->qkey, p.deth->src_qp);
  fmt::format_to(fmt::appender(b),
                 FMT_COMPILE(R"(,"payload_length":{},"icrc_ok":{}}})"
                             "\n"),
                 p.payload_length, p.icrc_ok);
}

void text_aeth(fmt::memory_buffer& b, const roce::Aeth& a) {
  auto out = fmt::appender(b);
  switch (a.kind) {
    case roce::AethKind::ack: fmt::format_to(out, " AETH(ACK credits={} MSN={})", a.value, a.msn); break;
    case roce::AethKind::rnr_nak: fmt::format_to(out, " AETH(RNR NAK timer={} MSN={})", a.value, a.msn); break;
    case roce::AethKind::nak:
      fmt::format_to(out, " AETH(NAK code={} {} MSN={})", a.value, roce::nak_code_name(a.nak), a.msn);
      break;
    case roce::AethKind::reserved:
      fmt::format_to(out, " AETH(reserved syndrome=0x{:02x} MSN={})", a.syndrome, a.msn);
      break;
  }
}

// The frame number and its time since the first frame, in seconds.
void text_start(fmt::memory_buffer& b, std::uint64_t frame, std::int64_t since_first_ns) {
  const char* sign = since_first_ns < 0 ? "-" : "";
  const std::int64_t t = since_first_ns < 0 ? -since_first_ns : since_first_ns;
  fmt::format_to(fmt::appender(b), "{:>7} {}{}.{:06}", frame, sign, t / 1'000'000'000, t % 1'000'000'000 / 1000);
}

void text_packet(fmt::memory_buffer& b, std::uint64_t frame, std::int64_t since_first_ns, const roce::Packet& p,
                 const std::string& name) {
  auto out = fmt::appender(b);
  text_start(b, frame, since_first_ns);
  fmt::format_to(out, " {} → {} {} QP=0x{:06x} PSN={}{}", p.ip_src, p.ip_dst, name, p.bth.dest_qp, p.bth.psn,
                 p.bth.ack_req ? " AckReq" : "");
  if (p.reth)
    fmt::format_to(out, " RETH(va=0x{:x} rkey=0x{:08x} len={})", p.reth->va, p.reth->rkey, p.reth->dma_length);
  if (p.aeth) text_aeth(b, *p.aeth);
  if (p.deth) fmt::format_to(out, " DETH(qkey=0x{:08x} srcQP=0x{:06x})", p.deth->qkey, p.deth->src_qp);
  fmt::format_to(out, " ICRC {}\n", p.icrc_ok ? "ok" : "BAD");
}

void text_summary(fmt::memory_buffer& b, std::uint64_t frames, const nlohmann::json& f) {
  auto out = fmt::appender(b);
  const auto n = [&](const char* key) { return f[key].get<std::uint64_t>(); };
  fmt::format_to(out, "\n{} frame{}: {} RoCEv2 packet{} ({} bytes), {} other, {} malformed\n", frames,
                 frames == 1 ? "" : "s", n("packets"), n("packets") == 1 ? "" : "s", n("bytes"), n("other"),
                 n("malformed"));
  if (!f["opcodes"].empty()) {
    fmt::format_to(out, "  opcodes:");
    for (const auto& [name, count] : f["opcodes"].items())
      fmt::format_to(out, " {} {}", name, count.get<std::uint64_t>());
    fmt::format_to(out, "\n");
  }
  fmt::format_to(out, "  ACKs {}, NAKs {}, RNR NAKs {}\n", n("acks"), n("naks"), n("rnr_naks"));
  fmt::format_to(out, "  PSN gaps {}, repeats {}\n", n("psn_gaps"), n("psn_repeats"));
  fmt::format_to(out, "  ICRC good {}, bad {}\n", n("icrc_good"), n("icrc_bad"));
  fmt::format_to(out, "  QPs:");
  if (f["qps"].empty()) fmt::format_to(out, " none");
  for (const auto& qp : f["qps"]) fmt::format_to(out, " 0x{:06x}", qp.get<std::uint32_t>());
  fmt::format_to(out, "\n");
}

}  // namespace

int cmd_decode(const DecodeOptions& o, std::FILE* out_file, std::FILE* err) {
  auto file = sys::PcapFile::open(o.file);
  if (!file) {
    print(err, "rxerun: decode {}: {}\n", o.file, file.error().message);
    return kExitUsage;
  }
  const int link_type = file->link_type();
  if (!roce::decodable_link_type(link_type)) {
    print(err,
          "rxerun: decode {}: link type {} is not one decode reads (Ethernet 1, raw IP 101 or 12, "
          "Linux cooked 113 or 276)\n",
          o.file, link_type);
    return kExitUsage;
  }

  static const OpcodeNames names;
  Output out(out_file);
  fmt::memory_buffer& b = out.buffer();
  roce::Summary summary;
  const bool count = !o.json || o.summary;
  std::uint64_t frame = 0;
  std::int64_t first_ns = 0;
  int code = kExitOk;

  while (true) {
    auto next = file->next();
    if (!next) {
      // What libpcap says of a file cut short in the middle of a frame.
      print(err, "rxerun: decode {}: after frame {}: {}\n", o.file, frame, next.error().message);
      code = kExitFailed;
      break;
    }
    if (!*next) break;
    const sys::PcapFrame& f = **next;
    ++frame;
    const std::int64_t time_ns = frame_time(f);
    if (frame == 1) first_ns = time_ns;

    auto decoded = roce::decode(f.data.data(), f.data.size(), link_type);
    if (count) summary.add(decoded, f.wire_length);
    if (!decoded) {
      if (o.json)
        fmt::format_to(fmt::appender(b), "{{\"frame\":{},\"error\":{}}}\n", frame,
                       nlohmann::json(decoded.error().message).dump());
      else {
        text_start(b, frame, time_ns - first_ns);
        fmt::format_to(fmt::appender(b), " malformed: {}\n", decoded.error().message);
      }
    } else if (const auto* p = std::get_if<roce::Packet>(&*decoded)) {
      if (o.json)
        json_packet(b, frame, time_ns, *p, names.name[p->bth.opcode]);
      else
        text_packet(b, frame, time_ns - first_ns, *p, names.display[p->bth.opcode]);
    }
    if (!out.flush(kFlushAt)) break;
  }

  if (o.json && o.summary)
    fmt::format_to(fmt::appender(b), "{{\"summary\":{}}}\n", summary.facts().dump());
  else if (!o.json)
    text_summary(b, frame, summary.facts());
  if (!out.flush()) {
    print(err, "rxerun: decode {}: cannot write the output: {}\n", o.file, std::strerror(errno));
    return kExitEnvironment;
  }
  return code;
}

}  // namespace rxerun
