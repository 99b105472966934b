#include "engine/journal_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "base/strings.h"

namespace rxerun {

namespace {

// Deeper JSON than any entry a kind writes is damage: nlohmann::json copies
// and writes values recursively, and a line nested a million deep would
// overflow the stack.
constexpr int kMaxJournalDepth = 64;

// JSON text that never throws: bytes that are not UTF-8 (the loader refuses
// them in what users write, but kernel names are bytes) become U+FFFD.
std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `s` as a JSON string, as nlohmann::json writes it. Printable ASCII (names,
// summaries) is escaped here; anything else goes through nlohmann::json,
// whose dump() costs a serializer and a localeconv() call each time.
void append_quoted(std::string& out, const std::string& s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
  if (!plain) {
    out += dump(nlohmann::json(s));
    return;
  }
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// The start of a damaged line as a report can show it: printable ASCII as
// is, every other byte as \xNN (the line may hold anything).
std::string escaped_start(std::string_view s, std::size_t full_size) {
  std::string out;
  for (const char c : s.substr(0, kShownDamageBytes)) {
    if (c >= 0x20 && c <= 0x7e && c != '\\') {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  if (full_size > kShownDamageBytes) out += fmt::format("... ({} bytes in all)", full_size);
  return out;
}

// The deepest nesting of arrays and objects in JSON text (strings skipped),
// counted before parsing so that a hostile line cannot exhaust the stack.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escape = false;
  for (const char c : text) {
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

std::optional<long> seq_of(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u >= 1 && u <= static_cast<std::uint64_t>(kMaxJournalSeq)) return static_cast<long>(u);
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= 1 && i <= kMaxJournalSeq) return static_cast<long>(i);
  }
  return std::nullopt;
}

// The fields of a "do" line other than its seq, each read on its own: what
// is wrong with any of them makes the entry unreadable, not the line damage.
class DoFields {
 public:
  explicit DoFields(const nlohmann::json& line) : line_(line) {}

  void text(const char* key, std::string& out, bool required) {
    auto it = line_.find(key);
    if (it == line_.end()) {
      if (required) problems_.push_back(fmt::format("\"{}\" is missing", key));
    } else if (!it->is_string()) {
      problems_.push_back(fmt::format("\"{}\" is not a string", key));
    } else {
      out = it->get<std::string>();
    }
  }

  void list(const char* key, std::vector<std::string>& out) {
    auto it = line_.find(key);
    if (it == line_.end()) return;
    const bool strings =
        it->is_array() && std::all_of(it->begin(), it->end(), [](const nlohmann::json& x) { return x.is_string(); });
    if (!strings) {
      problems_.push_back(fmt::format("\"{}\" is not a list of strings", key));
      return;
    }
    for (const auto& x : *it) out.push_back(x.get<std::string>());
  }

  void args(nlohmann::json& out) {
    if (auto it = line_.find("args"); it == line_.end()) {
      out = nlohmann::json::object();
    } else if (!it->is_object()) {
      problems_.push_back("\"args\" is not an object");
    } else if (!integers_only(*it)) {
      problems_.push_back("\"args\" holds a number that is not an integer");
    } else {
      out = *it;
    }
  }

  std::string problems() const { return join(problems_, "; "); }

 private:
  const nlohmann::json& line_;
  std::vector<std::string> problems_;
};

}  // namespace

bool integers_only(const nlohmann::json& v) {
  if (v.is_number_float()) return false;
  if (v.is_structured())
    return std::all_of(v.begin(), v.end(), [](const nlohmann::json& x) { return integers_only(x); });
  return true;
}

std::string entry_line(const JournalEntry& entry) {
  std::string line = "{\"args\":";
  line += dump(entry.args);
  line += ",\"do\":";
  line += std::to_string(entry.seq);
  line += ",\"kind\":";
  append_quoted(line, entry.kind);
  if (!entry.footprint.makes.empty()) {
    line += ",\"makes\":";
    line += dump(nlohmann::json(entry.footprint.makes));
  }
  line += ",\"netns\":";
  append_quoted(line, entry.netns);
  if (!entry.footprint.on.empty()) {
    line += ",\"on\":";
    line += dump(nlohmann::json(entry.footprint.on));
  }
  if (!entry.plugin.empty()) {
    line += ",\"plugin\":";
    append_quoted(line, entry.plugin);
  }
  line += ",\"step\":";
  append_quoted(line, entry.step);
  line += ",\"summary\":";
  append_quoted(line, entry.summary);
  line += "}";
  return line;
}

std::string identity_line(long seq, const nlohmann::json& identity) {
  return dump(nlohmann::json{{"is", seq}, {"identity", identity}});
}

std::string undone_line(long seq) {
  return dump(nlohmann::json{{"undone", seq}});
}

std::string undone_line(const std::vector<long>& seqs) {
  return dump(nlohmann::json{{"undone", seqs}});
}

std::string boot_line(const std::string& boot) {
  return nlohmann::json{{"boot", boot}}.dump();
}

bool JournalReader::line(std::string_view start, std::size_t size, long number, bool ended) {
  if (size == 0) return true;  // blank lines say nothing
  std::optional<std::string> why;
  if (size > kMaxLineBytes) {
    why = fmt::format("longer than {} bytes", kMaxLineBytes);
  } else {
    why = take(start, number);
  }
  // Torn: not even JSON, as a write cut short leaves it. A whole line is
  // read (or is damage) like any other.
  if (why && !ended && (size > kMaxLineBytes || !nlohmann::json::accept(start))) return false;
  if (why) damaged_.push_back({number, *why, escaped_start(start, size)});
  return true;
}

JournalContents JournalReader::finish() && {
  std::erase_if(entries_, [&](const JournalEntry& e) { return undone_.count(e.seq) > 0; });
  return {std::move(entries_), std::move(damaged_), next_seq_, earlier_boot_};
}

std::optional<std::string> JournalReader::take(std::string_view text, long number) {
  if (nesting_depth(text) > kMaxJournalDepth) return fmt::format("nested deeper than {}", kMaxJournalDepth);
  auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::string("not JSON");
  if (!parsed.is_object()) return std::string("not a JSON object");
  if (auto it = parsed.find("do"); it != parsed.end()) return take_do(parsed, *it, text, number);
  if (auto it = parsed.find("undone"); it != parsed.end()) return take_undone(*it);
  if (auto it = parsed.find("is"); it != parsed.end()) return take_is(parsed, *it);
  if (auto it = parsed.find("boot"); it != parsed.end()) return take_boot(*it);
  return std::string("not a line rxerun writes (no \"do\", \"is\", \"undone\" or \"boot\")");
}

std::optional<std::string> JournalReader::take_do(const nlohmann::json& line, const nlohmann::json& seq_value,
                                                  std::string_view text, long number) {
  const auto seq = seq_of(seq_value);
  if (!seq) return std::string("\"do\" is not a sequence number (1 to 2^53)");
  if (auto seen = first_line_.find(*seq); seen != first_line_.end())
    return fmt::format("\"do\" repeats sequence number {} of line {}", *seq, seen->second);
  JournalEntry e;
  e.seq = *seq;
  e.raw = std::string(text);
  e.line = number;
  DoFields fields(line);
  fields.text("kind", e.kind, true);
  fields.text("step", e.step, false);
  fields.text("netns", e.netns, false);
  fields.text("summary", e.summary, false);
  fields.text("plugin", e.plugin, false);
  fields.args(e.args);
  fields.list("on", e.footprint.on);
  fields.list("makes", e.footprint.makes);
  e.unreadable = fields.problems();
  // What an entry that cannot be trusted lives on or makes is not trusted either.
  if (!e.unreadable.empty()) e.footprint = {};
  first_line_.emplace(e.seq, number);
  next_seq_ = std::max(next_seq_, e.seq + 1);
  entries_.push_back(std::move(e));
  return std::nullopt;
}

std::optional<std::string> JournalReader::take_is(const nlohmann::json& line, const nlohmann::json& seq_value) {
  const auto seq = seq_of(seq_value);
  if (!seq) return std::string("\"is\" is not a sequence number (1 to 2^53)");
  const auto identity = line.find("identity");
  if (identity == line.end() || !identity->is_object() || !integers_only(*identity))
    return std::string("\"identity\" is not an object of names and integers");
  for (auto& e : entries_)
    if (e.seq == *seq) e.identity = *identity;
  return std::nullopt;
}

std::optional<std::string> JournalReader::take_undone(const nlohmann::json& value) {
  std::vector<long> seqs;
  if (value.is_array()) {
    for (const auto& v : value) {
      const auto seq = seq_of(v);
      if (!seq) return std::string("\"undone\" holds something that is not a sequence number");
      seqs.push_back(*seq);
    }
  } else {
    const auto seq = seq_of(value);
    if (!seq) return std::string("\"undone\" is not a sequence number");
    seqs.push_back(*seq);
  }
  for (const long seq : seqs) {
    // Only an entry read before it: "undone" of an unknown seq changes nothing.
    if (first_line_.count(seq)) undone_.insert(seq);
    next_seq_ = std::max(next_seq_, seq + 1);
  }
  return std::nullopt;
}

std::optional<std::string> JournalReader::take_boot(const nlohmann::json& value) {
  if (!value.is_string()) return std::string("\"boot\" is not a string");
  // Without a boot id of its own, this process cannot tell: it keeps the entries.
  earlier_boot_ = !boot_.empty() && value.get<std::string>() != boot_;
  return std::nullopt;
}

}  // namespace rxerun
