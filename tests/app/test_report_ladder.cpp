// The packet ladder of the HTML report (app/report_ladder.h), on captures
// made by tests/tools/roce_pcap.py, whose ground truth (--truth) is
// independent of rxerun's decoder: one data-packet element per frame with its
// kind, NAKs and the retransmissions after them, PSN gaps, bad ICRCs,
// malformed frames, the JSON the panel is built from, escaping, errors, the
// cap on drawn frames and the size per packet.

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/report_ladder.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "support/shell.h"

using namespace rxerun;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A directory of its own per case, removed at its end.
struct LadderDir {
  fs::path path;
  LadderDir() {
    std::string name = (fs::temp_directory_path() / "rxerun-ladder-XXXXXX").string();
    REQUIRE(::mkdtemp(name.data()) != nullptr);
    path = name;
  }
  ~LadderDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// A capture written by roce_pcap.py with `args`, and what it wrote, one JSON
// object per frame.
struct Generated {
  std::string pcap;
  std::vector<json> truth;
};

Generated generate(const LadderDir& dir, const std::string& args) {
  Generated g{dir.file("cap.pcap"), {}};
  const std::string truth = dir.file("cap.truth");
  testing::sh(fmt::format("/usr/bin/python3 {} {} {} --truth {}",
                          shell_quote(RXERUN_SOURCE_DIR "/tests/tools/roce_pcap.py"), shell_quote(g.pcap), args,
                          shell_quote(truth)));
  std::ifstream in(truth);
  for (std::string line; std::getline(in, line);) g.truth.push_back(json::parse(line));
  return g;
}

std::string render(const std::string& pcap, LadderOptions options = {}) {
  if (options.shown_name.empty()) options.shown_name = "cap.pcap";
  auto html = render_ladder_html(pcap, options);
  REQUIRE_MESSAGE(html.ok(), html.error().message);
  return *html;
}

// An element that carries data-packet: its frame, classes and content.
struct LadderRow {
  std::uint64_t frame = 0;
  std::set<std::string> classes;
  std::string body;  // up to its </g>
  bool has(const std::string& c) const { return classes.count(c) > 0; }
};

// Every element of `html` that carries data-packet, in document order. Each
// must be a <g class="..." data-packet="N">, which holds no other <g>.
std::vector<LadderRow> rows_of(const std::string& html) {
  std::vector<LadderRow> rows;
  for (auto at = html.find("data-packet"); at != std::string::npos; at = html.find("data-packet", at + 1)) {
    const auto open = html.rfind('<', at), close = html.find('>', at);
    const std::string tag = html.substr(open, close + 1 - open);
    const auto class_end = tag.find('"', 10);
    REQUIRE_MESSAGE(tag.rfind("<g class=\"", 0) == 0, tag);
    REQUIRE_MESSAGE(tag.substr(class_end, 15) == "\" data-packet=\"", tag);
    LadderRow row;
    row.frame = std::stoull(tag.substr(class_end + 15));
    std::istringstream words(tag.substr(10, class_end - 10));
    for (std::string word; words >> word;) row.classes.insert(word);
    const auto end = html.find("</g>", close);
    row.body = html.substr(close + 1, end - close - 1);
    REQUIRE_MESSAGE(row.body.find("<g") == std::string::npos, row.body);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::map<std::uint64_t, LadderRow> by_frame(const std::vector<LadderRow>& rows) {
  std::map<std::uint64_t, LadderRow> map;
  for (const LadderRow& r : rows) CHECK_MESSAGE(map.emplace(r.frame, r).second, "frame ", r.frame, " twice");
  return map;
}

const std::string kJsonStart = R"(<script type="application/json" id="cap0-packets">)";

// The text of the ladder's JSON script element.
std::string json_text(const std::string& html) {
  const auto start = html.find(kJsonStart);
  REQUIRE(start != std::string::npos);
  const auto end = html.find("</script>", start);
  REQUIRE(end != std::string::npos);
  return html.substr(start + kJsonStart.size(), end - start - kJsonStart.size());
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The kind class a frame of the ground truth must have.
std::string kind_of(const json& t) {
  if (t.contains("other")) return "other";
  if (t.contains("malformed")) return "malformed";
  const int op = t["opcode"];
  if (t.contains("aeth")) {
    const int kind = t["aeth"]["syndrome"].get<int>() >> 5;
    if (kind == 3) return "nak";
    if (kind == 1) return "rnr-nak";
    return op == 0x11 ? "ack" : "response";
  }
  return op >= 0x0d && op <= 0x12 ? "response" : "request";
}

const std::set<std::string> kKinds = {"request", "response", "ack", "nak", "rnr-nak", "cnp", "other", "malformed"};

// Pcap records: a 24-byte file header, then per frame 16 bytes (the third
// word the captured length) and the bytes.
std::vector<std::pair<std::size_t, std::size_t>> pcap_records(const std::string& bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> records;
  for (std::size_t at = 24; at + 16 <= bytes.size();) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at + 8);
    const std::size_t caplen = p[0] | p[1] << 8 | p[2] << 16 | static_cast<std::size_t>(p[3]) << 24;
    records.emplace_back(at, 16 + caplen);
    at += 16 + caplen;
  }
  return records;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The capture without its frame `frame` (1-based).
void drop_frame(const std::string& path, std::size_t frame) {
  const std::string bytes = read_bytes(path);
  const auto records = pcap_records(bytes);
  REQUIRE(frame <= records.size());
  const auto [at, length] = records[frame - 1];
  write_bytes(path, bytes.substr(0, at) + bytes.substr(at + length));
}

}  // namespace

TEST_CASE("report ladder: one data-packet element per frame, in capture order, of its kind") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 150 --seed 3 --ipv6 0.25 --other 0.1");
  REQUIRE(g.truth.size() == 150);
  const std::string html = render(g.pcap);

  const auto rows = rows_of(html);
  REQUIRE(rows.size() == 150);
  std::size_t acks = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& t = g.truth[i];
    const LadderRow& row = rows[i];
    CHECK(row.frame == i + 1);
    CHECK_MESSAGE(row.has(kind_of(t)), "frame ", row.frame, ": ", t.dump());
    std::size_t kinds = 0;
    for (const auto& c : row.classes) kinds += kKinds.count(c);
    CHECK_MESSAGE(kinds == 1, "frame ", row.frame, " has ", kinds, " kinds");
    // RoCEv2 packets have an arrow, other frames a grey row with their reason.
    CHECK((row.body.find("<path") != std::string::npos) == !t.contains("other"));
    if (t.contains("other")) CHECK(row.body.find("<rect") != std::string::npos);
    if (t.contains("opcode") && t["opcode"] == 0x11 && t["aeth"]["syndrome"].get<int>() >> 5 == 0) ++acks;
  }
  CHECK(count_of(html, "data-packet") == 150);

  // The lifelines are the four addresses; the summary counts as the truth does.
  const std::string head = html.substr(html.find("<svg class=\"ladder-head\""));
  for (const char* address : {">10.0.0.1<", ">10.0.0.2<", ">fd00::1<", ">fd00::2<"})
    CHECK_MESSAGE(head.substr(0, head.find("</svg>")).find(address) != std::string::npos, address);
  CHECK(html.find("150 frames:") != std::string::npos);
  CHECK(html.find(fmt::format("ACKs {}<", acks)) != std::string::npos);

  // One PSN strip per request flow (destination address and QP of RC requests).
  std::set<std::string> flows;
  for (const json& t : g.truth)
    if (t.contains("opcode") && kind_of(t) == "request" && t["opcode"] != 0x64)
      flows.insert(fmt::format("{}/0x{:06x}", t["dst"].get<std::string>(), t["dest_qp"].get<int>()));
  std::set<std::string> strips;
  for (auto at = html.find("<figure class=\"psn-strip\" data-flow=\""); at != std::string::npos;
       at = html.find("<figure class=\"psn-strip\" data-flow=\"", at + 1)) {
    const auto start = at + 37;
    strips.insert(html.substr(start, html.find('"', start) - start));
  }
  CHECK(strips == flows);
}

TEST_CASE("report ladder: a NAK and the retransmission after it are marked, in the diagram and the strip") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 300 --seed 3");
  const std::string html = render(g.pcap);
  const auto rows = by_frame(rows_of(html));
  REQUIRE(rows.size() == 300);

  // roce_pcap.py answers a NAK (PSN sequence error) by sending again from
  // the request's first PSN: the very next frame.
  std::set<std::uint64_t> naks, want_retransmit, retransmit;
  for (const json& t : g.truth)
    if (t.contains("aeth") && t["aeth"]["syndrome"].get<int>() >> 5 == 3) naks.insert(t["frame"].get<std::uint64_t>());
  REQUIRE_MESSAGE(!naks.empty(), "the generated capture should hold a NAK");
  for (std::uint64_t n : naks) {
    CHECK(rows.at(n).has("nak"));
    CHECK_MESSAGE(rows.at(n).body.find(">NAK PSN seq err PSN ") != std::string::npos, rows.at(n).body);
    if (n == 300) continue;
    const json& again = g.truth[n];  // frame n + 1
    CHECK(again["psn"].get<std::uint32_t>() <= g.truth[n - 1]["psn"].get<std::uint32_t>());
    want_retransmit.insert(n + 1);
  }
  for (const auto& [frame, row] : rows) {
    if (row.has("retransmit")) retransmit.insert(frame);
    CHECK_MESSAGE(!row.has("gap"), "frame ", frame, ": no PSN is skipped in a generated capture");
  }
  CHECK(retransmit == want_retransmit);
  const LadderRow& first = rows.at(*want_retransmit.begin());
  CHECK(first.body.find(" retransmit</text>") != std::string::npos);

  // The strip of that flow shows the retransmission in its own colour.
  const json& t = g.truth[*want_retransmit.begin() - 1];
  const std::string flow =
      fmt::format("data-flow=\"{}/0x{:06x}\"", t["dst"].get<std::string>(), t["dest_qp"].get<int>());
  const auto strip = html.find(flow);
  REQUIRE(strip != std::string::npos);
  const std::string figure = html.substr(strip, html.find("</figure>", strip) - strip);
  CHECK(figure.find("<path class=\"r\"") != std::string::npos);
  CHECK(figure.find("<path class=\"d\"") != std::string::npos);
}

TEST_CASE("report ladder: a PSN gap is marked where a frame of a multi-packet write is left out") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 300 --seed 3");
  // The first RDMA WRITE MIDDLE followed by another packet of its write.
  std::size_t middle = 0;
  for (std::size_t i = 1; i + 1 < g.truth.size() && !middle; ++i) {
    const json &t = g.truth[i], &next = g.truth[i + 1];
    if (t.value("opcode", 0) == 0x07 && (next.value("opcode", 0) == 0x07 || next.value("opcode", 0) == 0x08))
      middle = i + 1;
  }
  REQUIRE_MESSAGE(middle > 0, "the generated capture should hold a write of three packets or more");
  drop_frame(g.pcap, middle);

  const auto rows = rows_of(render(g.pcap));
  REQUIRE(rows.size() == 299);
  std::vector<std::uint64_t> gaps;
  for (const LadderRow& row : rows)
    if (row.has("gap")) gaps.push_back(row.frame);
  // The packet after the one left out is now frame `middle`.
  CHECK(gaps == std::vector<std::uint64_t>{middle});
  CHECK(rows[middle - 1].body.find(" PSN GAP</text>") != std::string::npos);
  CHECK(rows[middle - 1].has("request"));
}

TEST_CASE("report ladder: a bad ICRC is marked icrc-bad and its record holds both values") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 40 --seed 5 --bad-icrc 5,17");
  const std::string html = render(g.pcap);
  std::set<std::uint64_t> bad;
  for (const LadderRow& row : rows_of(html))
    if (row.has("icrc-bad")) bad.insert(row.frame);
  CHECK(bad == std::set<std::uint64_t>{5, 17});

  const json data = json::parse(json_text(html));
  const json& five = data["p"][4];
  const json& six = data["p"][5];
  REQUIRE(five[0] == 5);
  REQUIRE(five[4] == 2);
  CHECK(five[11] != five[12]);
  CHECK(five[13] == 0);
  CHECK(six[11] == six[12]);
  CHECK(six[13] == 1);
}

TEST_CASE("report ladder: a frame captured in part is a grey malformed row with the decoder's words") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 30 --seed 2 --truncate 9");
  REQUIRE(g.truth[8].value("malformed", false));
  const std::string html = render(g.pcap);
  const auto rows = by_frame(rows_of(html));
  REQUIRE(rows.size() == 30);
  const LadderRow& nine = rows.at(9);
  CHECK(nine.has("malformed"));
  CHECK(nine.body.find("<path") == std::string::npos);
  CHECK(nine.body.find("<rect") != std::string::npos);
  CHECK(nine.body.find("malformed: truncated") != std::string::npos);
  for (const auto& [frame, row] : rows) CHECK(row.has("malformed") == (frame == 9));
  CHECK(html.find("<span class=\"warn\">malformed 1</span>") != std::string::npos);

  const json data = json::parse(json_text(html));
  const json& record = data["p"][8];
  CHECK(record[4] == 1);
  CHECK(data["s"][record[5].get<std::size_t>()].get<std::string>().rfind("truncated", 0) == 0);
}

TEST_CASE(
    "report ladder: the packets' JSON parses, holds the fields of every drawn frame, and cannot end its element") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 60 --seed 3 --other 0.1");
  LadderOptions options;
  options.shown_name = "</script><!-- a&b.pcap";
  const std::string html = render(g.pcap, options);
  const std::string text = json_text(html);
  CHECK(text.find("</") == std::string::npos);
  CHECK(text.find("<!--") == std::string::npos);
  const json data = json::parse(text);
  CHECK(data["name"] == options.shown_name);
  REQUIRE(data["p"].size() == 60);

  const json& s = data["s"];
  for (std::size_t i = 0; i < 60; ++i) {
    const json &t = g.truth[i], &r = data["p"][i];
    CHECK(r[0] == i + 1);
    if (t.contains("other")) {
      CHECK(r[4] == 0);
      continue;
    }
    REQUIRE(r[4] == 2);
    CHECK(s[r[6][1].get<std::size_t>()] == t["src"]);
    CHECK(s[r[6][2].get<std::size_t>()] == t["dst"]);
    CHECK(r[8][0] == t["opcode"]);
    CHECK(r[8][9] == t["dest_qp"]);
    CHECK(r[8][10] == (t["ack_req"] ? 1 : 0));
    CHECK(r[8][11] == t["psn"]);
    CHECK(r[13] == (t["icrc_ok"] ? 1 : 0));
    CHECK(r[9].contains("R") == t.contains("reth"));
    if (t.contains("reth")) {
      CHECK(r[9]["R"][0] == fmt::format("0x{:x}", t["reth"]["va"].get<std::uint64_t>()));
      CHECK(r[9]["R"][2] == t["reth"]["length"]);
    }
    CHECK(r[9].contains("A") == t.contains("aeth"));
    if (t.contains("aeth")) CHECK(r[9]["A"][1] == t["aeth"]["msn"]);
  }
}

TEST_CASE("report ladder: a hostile file name and id prefix are escaped everywhere") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 12 --seed 1");
  LadderOptions options;
  options.shown_name = "a\"b'<script>alert(1)</script>&\xff\xfe.pcap";
  options.id_prefix = "p\" onclick=\"x";
  options.max_packets = 5;  // so that the note, with its command, names the file too
  const auto html = render_ladder_html(g.pcap, options);
  REQUIRE(html.ok());
  CHECK(html->find("<script>alert") == std::string::npos);
  CHECK(html->find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html->find("\" onclick=\"") == std::string::npos);
  CHECK(html->find("p&quot; onclick=&quot;x-rows") != std::string::npos);
  CHECK(html->find("\\xff\\xfe") != std::string::npos);
  CHECK(first_invalid_utf8(*html) == std::nullopt);
  CHECK(html->find("7 more frames not drawn; <code>rxerun decode &apos;a&quot;b&apos;\\&apos;&apos;&lt;script&gt;") !=
        std::string::npos);
  CHECK(count_of(*html, "<script") == 1);  // the JSON's own
}

TEST_CASE("report ladder: a missing file, a file that is no capture and an unknown link type are errors") {
  LadderDir dir;
  const auto missing = render_ladder_html(dir.file("missing.pcap"), {});
  REQUIRE(!missing.ok());
  CHECK(missing.error().message.find("No such file") != std::string::npos);

  write_bytes(dir.file("notes.txt"), "this is not a capture file\n");
  const auto text = render_ladder_html(dir.file("notes.txt"), {});
  REQUIRE(!text.ok());
  CHECK(!text.error().message.empty());

  // A pcap header of link type 105 (802.11), no frame.
  const unsigned char wifi[24] = {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 105};
  write_bytes(dir.file("wifi.pcap"), std::string(reinterpret_cast<const char*>(wifi), sizeof wifi));
  const auto radio = render_ladder_html(dir.file("wifi.pcap"), {});
  REQUIRE(!radio.ok());
  CHECK(radio.error().message.find("link type 105") != std::string::npos);

  // A capture without frames is no error: it says so.
  const Generated g = generate(dir, "--packets 3");
  write_bytes(dir.file("empty.pcap"), read_bytes(g.pcap).substr(0, 24));
  const std::string empty = render(dir.file("empty.pcap"));
  CHECK(empty.find("holds no frame") != std::string::npos);
  CHECK(count_of(empty, "data-packet") == 0);
}

TEST_CASE("report ladder: beyond max_packets the first ones are drawn and a note says how many are not") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 50 --seed 4");
  LadderOptions options;
  options.max_packets = 20;
  const std::string html = render(g.pcap, options);
  const auto rows = rows_of(html);
  REQUIRE(rows.size() == 20);
  CHECK(rows.front().frame == 1);
  CHECK(rows.back().frame == 20);
  CHECK(html.find("30 more frames not drawn; <code>rxerun decode cap.pcap</code> lists them all") != std::string::npos);
  CHECK(html.find("50 frames:") != std::string::npos);  // the summary counts them all
  CHECK(json::parse(json_text(html))["p"].size() == 20);

  options.max_packets = 50;
  const std::string all = render(g.pcap, options);
  CHECK(rows_of(all).size() == 50);
  CHECK(all.find("not drawn") == std::string::npos);
}

TEST_CASE("report ladder: a file cut in the middle of a frame shows the frames before it and says so") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 10 --seed 6");
  const std::string bytes = read_bytes(g.pcap);
  write_bytes(g.pcap, bytes.substr(0, pcap_records(bytes)[3].first + 16 + 10));
  const std::string html = render(g.pcap);
  CHECK(rows_of(html).size() == 3);
  CHECK(html.find("The file ends in the middle of the frame after frame 3: ") != std::string::npos);
}

TEST_CASE("report ladder: 3000 packets take less than 500 bytes of HTML each") {
  LadderDir dir;
  const Generated g = generate(dir, "--packets 3000 --seed 11 --ipv6 0.3 --other 0.05 --bad-icrc 10,20,30");
  const std::string html = render(g.pcap);
  CHECK(rows_of(html).size() == 3000);
  MESSAGE(fmt::format("{} bytes, {} per frame", html.size(), html.size() / 3000));
  CHECK(html.size() < 3000 * 500);
}

TEST_CASE("report ladder: the CSS and the script fetch nothing and can be inlined") {
  const std::string_view css = ladder_css(), script = ladder_script();
  CHECK(css.find(".ladder-scroll") != std::string_view::npos);
  CHECK(script.find("data-packet") != std::string_view::npos);
  for (std::string_view text : {css, script}) {
    for (const char* bad : {"</script", "</style", "<!--", "http:", "https:", "@import", "url(", "import ", "export ",
                            "fetch(", "XMLHttpRequest"})
      CHECK_MESSAGE(text.find(bad) == std::string_view::npos, bad);
  }
}
