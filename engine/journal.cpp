#include "engine/journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "base/fd.h"
#include "base/files.h"
#include "base/strings.h"

namespace rxerun {

namespace {

// Sequence numbers are positive and stay exact as JSON numbers in any
// reader, and one more than the largest still fits a long.
constexpr long kMaxSeq = 1L << 53;
// Deeper JSON than any entry a kind writes is damage: nlohmann::json copies
// and writes values recursively, and a line nested a million deep would
// overflow the stack.
constexpr int kMaxDepth = 64;
// How much of a damaged line, and of an entry, a report shows.
constexpr std::size_t kShownDamageBytes = 300;
constexpr std::size_t kShownEntryBytes = 4096;
constexpr std::size_t kShownDamagedLines = 10;

// `s` cut to `max` bytes at a UTF-8 character boundary, saying so.
std::string cut(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return fmt::format("{}... ({} bytes in all)", s.substr(0, end), s.size());
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

// Whether every number in `v` is an integer. Kinds journal names, flags and
// integers; converting a fractional or huge number (1e300) to the integer an
// undo reads is undefined behaviour, so such an entry is not taken, and
// append() never writes one.
bool integers_only(const nlohmann::json& v) {
  if (v.is_number_float()) return false;
  if (v.is_structured())
    return std::all_of(v.begin(), v.end(), [](const nlohmann::json& x) { return integers_only(x); });
  return true;
}

std::optional<long> seq_of(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u >= 1 && u <= static_cast<std::uint64_t>(kMaxSeq)) return static_cast<long>(u);
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= 1 && i <= kMaxSeq) return static_cast<long>(i);
  }
  return std::nullopt;
}

// A file in the state directory, opened relative to it and never through a
// symbolic link; O_NONBLOCK so that a FIFO planted there cannot hang the
// open (it is refused below; on regular files the flag does nothing).
Result<UniqueFd> open_in_dir(int dir_fd, const std::string& dir, const std::string& name, int flags) {
  const std::string path = dir + "/" + name;
  UniqueFd fd(::openat(dir_fd, name.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ELOOP) return make_error(path + " is a symbolic link; remove it (rxerun never writes through one)");
    if (err == EISDIR) return make_error(path + " is not a regular file; remove it");
    return make_error("cannot open " + path, err);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return make_error("cannot stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return make_error(path + " is not a regular file; remove it");
  return fd;
}

// Writes all of `text` at the end of `fd` (O_APPEND); on failure takes back
// what got written, and says in `*torn` when that failed too (the file then
// ends in part of a line).
Result<void> append_all(int fd, std::string_view text, bool* torn) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    const int err = n < 0 ? errno : EIO;
    struct stat st {};
    if (done > 0 && (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(done) ||
                     ::ftruncate(fd, st.st_size - static_cast<off_t>(done)) != 0))
      *torn = true;
    return make_error("", err);
  }
  return {};
}

// Reads a journal's lines in order: one branch per line type, each saying
// why a line is not one it takes.
class Reader {
 public:
  explicit Reader(std::string boot) : boot_(std::move(boot)) {}

  // One line, without its newline; nullopt when taken, else why not.
  std::optional<std::string> line(std::string_view text, long number) {
    if (nesting_depth(text) > kMaxDepth) return fmt::format("nested deeper than {}", kMaxDepth);
    auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return std::string("not JSON");
    if (!parsed.is_object()) return std::string("not a JSON object");
    if (auto it = parsed.find("do"); it != parsed.end()) return take_do(parsed, *it, text, number);
    if (auto it = parsed.find("undone"); it != parsed.end()) return take_undone(*it);
    if (auto it = parsed.find("is"); it != parsed.end()) return take_is(parsed, *it);
    if (auto it = parsed.find("boot"); it != parsed.end()) return take_boot(*it);
    return std::string("not a line rxerun writes (no \"do\", \"is\", \"undone\" or \"boot\")");
  }

  // Pending entries: those read, less those undone.
  std::vector<JournalEntry> pending() && {
    std::erase_if(entries_, [&](const JournalEntry& e) { return undone_.count(e.seq) > 0; });
    return std::move(entries_);
  }
  bool earlier_boot() const { return earlier_boot_; }
  long next_seq() const { return next_seq_; }

 private:
  std::optional<std::string> take_do(const nlohmann::json& line, const nlohmann::json& seq_value, std::string_view text,
                                     long number) {
    const auto seq = seq_of(seq_value);
    if (!seq) return std::string("\"do\" is not a sequence number (1 to 2^53)");
    if (auto seen = first_line_.find(*seq); seen != first_line_.end())
      return fmt::format("\"do\" repeats sequence number {} of line {}", *seq, seen->second);
    JournalEntry e;
    e.seq = *seq;
    e.raw = std::string(text);
    e.line = number;
    std::vector<std::string> problems;
    auto text_field = [&](const char* key, std::string& out, bool required) {
      auto it = line.find(key);
      if (it == line.end()) {
        if (required) problems.push_back(fmt::format("\"{}\" is missing", key));
      } else if (!it->is_string()) {
        problems.push_back(fmt::format("\"{}\" is not a string", key));
      } else {
        out = it->get<std::string>();
      }
    };
    auto list_field = [&](const char* key, std::vector<std::string>& out) {
      auto it = line.find(key);
      if (it == line.end()) return;
      const bool strings =
          it->is_array() && std::all_of(it->begin(), it->end(), [](const nlohmann::json& x) { return x.is_string(); });
      if (!strings) {
        problems.push_back(fmt::format("\"{}\" is not a list of strings", key));
        return;
      }
      for (const auto& x : *it) out.push_back(x.get<std::string>());
    };
    text_field("kind", e.kind, true);
    text_field("step", e.step, false);
    text_field("netns", e.netns, false);
    text_field("summary", e.summary, false);
    text_field("plugin", e.plugin, false);
    if (auto it = line.find("args"); it == line.end()) {
      e.args = nlohmann::json::object();
    } else if (!it->is_object()) {
      problems.push_back("\"args\" is not an object");
    } else if (!integers_only(*it)) {
      problems.push_back("\"args\" holds a number that is not an integer");
    } else {
      e.args = *it;
    }
    list_field("on", e.footprint.on);
    list_field("makes", e.footprint.makes);
    e.unreadable = join(problems, "; ");
    // What an entry that cannot be trusted lives on or makes is not trusted either.
    if (!e.unreadable.empty()) e.footprint = {};
    first_line_.emplace(e.seq, number);
    next_seq_ = std::max(next_seq_, e.seq + 1);
    entries_.push_back(std::move(e));
    return std::nullopt;
  }

  // {"is":SEQ,"identity":{...}}: what identifies the object entry SEQ made,
  // written once it existed. For an entry read before it only (as "undone").
  std::optional<std::string> take_is(const nlohmann::json& line, const nlohmann::json& seq_value) {
    const auto seq = seq_of(seq_value);
    if (!seq) return std::string("\"is\" is not a sequence number (1 to 2^53)");
    const auto identity = line.find("identity");
    if (identity == line.end() || !identity->is_object() || !integers_only(*identity))
      return std::string("\"identity\" is not an object of names and integers");
    for (auto& e : entries_)
      if (e.seq == *seq) e.identity = *identity;
    return std::nullopt;
  }

  std::optional<std::string> take_undone(const nlohmann::json& value) {
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

  std::optional<std::string> take_boot(const nlohmann::json& value) {
    if (!value.is_string()) return std::string("\"boot\" is not a string");
    // Without a boot id of its own, this process cannot tell: it keeps the entries.
    earlier_boot_ = !boot_.empty() && value.get<std::string>() != boot_;
    return std::nullopt;
  }

  std::string boot_;
  std::vector<JournalEntry> entries_;
  std::map<long, long> first_line_;  // seq -> the line of its "do"
  std::set<long> undone_;
  long next_seq_ = 1;
  bool earlier_boot_ = false;
};

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string plural_lines(std::size_t n) {
  return n == 1 ? "line" : "lines";
}

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

}  // namespace

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

std::string default_state_dir() {
  if (const char* d = std::getenv("RXERUN_STATE_DIR"); d && *d) return d;
  if (::geteuid() == 0) return "/run/rxerun";
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return std::string(x) + "/rxerun";
  return "/tmp/rxerun-" + std::to_string(::geteuid());
}

Result<UniqueFd> open_state_dir(const std::string& given) {
  // "DIR/" would follow DIR when it is a symbolic link, O_NOFOLLOW or not.
  const std::string dir = without_trailing_slashes(given);
  const std::string elsewhere = "or set RXERUN_STATE_DIR to a directory of your own";
  if (dir.empty()) return make_error("no state directory: set RXERUN_STATE_DIR to a directory of your own");
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(dir.c_str(), flags);
  bool made = false;
  if (fd < 0 && errno == ENOENT) {
    // The last component only: a missing parent is not rxerun's to make.
    if (::mkdir(dir.c_str(), 0700) == 0) {
      made = true;
    } else if (errno == ENOENT) {
      return make_error("cannot create state directory " + dir + ": its parent directory does not exist (rxerun " +
                        "creates only the last component); create it, " + elsewhere);
    } else if (errno != EEXIST) {
      return make_error("cannot create state directory " + dir, errno);
    }
    fd = ::open(dir.c_str(), flags);
  }
  const uid_t me = ::geteuid();
  auto foreign = [&](uid_t owner) {
    return make_error(
        fmt::format("state directory {} belongs to uid {}, not to uid {} that runs rxerun (its owner could "
                    "change what cleanup undoes); remove it, {}",
                    dir, owner, me, elsewhere));
  };
  if (fd < 0) {
    // Say what is wrong with it rather than how opening it failed.
    const int err = errno;
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode))
        return make_error("state directory " + dir + " is a symbolic link; remove it, " + elsewhere);
      if (!S_ISDIR(st.st_mode))
        return make_error("state directory " + dir + " is not a directory; remove it, " + elsewhere);
      if (st.st_uid != me) return foreign(st.st_uid);
    }
    return make_error("cannot open state directory " + dir, err);
  }
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(owned.get(), &st) != 0) return make_error("cannot stat state directory " + dir, errno);
  if (st.st_uid != me) return foreign(st.st_uid);
  // A umask can take the owner's own bits from a directory just made.
  if (made && (st.st_mode & 07777) != 0700 && ::fchmod(owned.get(), 0700) == 0)
    st.st_mode = (st.st_mode & ~07777) | 0700;
  if ((st.st_mode & 077) != 0) {
    return make_error(
        fmt::format("state directory {} has mode {:04o}, open to others (they could change what cleanup "
                    "undoes); chmod 700 {}",
                    dir, st.st_mode & 07777, dir));
  }
  return owned;
}

Result<Journal> Journal::open(const std::string& given_dir, const std::string& scenario) {
  const std::string dir = without_trailing_slashes(given_dir);
  if (scenario.empty() || scenario.find('/') != std::string::npos || scenario == "." || scenario == "..")
    return make_error("'" + scenario + "' cannot name a journal");
  auto dir_fd = open_state_dir(dir);
  if (!dir_fd) return dir_fd.error();
  Journal j;
  j.dir_fd_ = std::move(*dir_fd);
  j.dir_ = dir;
  const std::string lock_path = dir + "/" + scenario + ".lock";
  auto lock = open_in_dir(j.dir_fd_.get(), dir, scenario + ".lock", O_RDWR | O_CREAT);
  if (!lock) return lock.error();
  j.lock_fd_ = std::move(*lock);
  const int lock_fd = j.lock_fd_.get();
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[32] = {};
    [[maybe_unused]] auto n = ::pread(lock_fd, buf, sizeof buf - 1, 0);
    std::string holder = buf[0] ? " (pid " + std::string(buf, std::strlen(buf)) + ")" : "";
    if (err == EWOULDBLOCK)
      return make_error("another run of scenario '" + scenario + "' is in progress" + holder + "; lock " + lock_path);
    return make_error("cannot lock " + lock_path, err);
  }
  std::string pid = std::to_string(::getpid());
  if (::ftruncate(lock_fd, 0) == 0) [[maybe_unused]]
    auto n = ::pwrite(lock_fd, pid.data(), pid.size(), 0);

  j.name_ = scenario + ".journal";
  j.path_ = dir + "/" + j.name_;
  auto fd = open_in_dir(j.dir_fd_.get(), dir, j.name_, O_RDWR | O_CREAT | O_APPEND);
  if (!fd) return fd.error();
  j.fd_ = std::move(*fd);
  j.boot_ = kernel_boot_id();

  // Line by line, in pieces: a line longer than kMaxLineBytes is not held
  // in memory, only its start.
  Reader reader(j.boot_);
  std::string line;
  std::size_t line_size = 0;  // bytes of the current line, kept or not
  off_t offset = 0, line_start = 0;
  long number = 0;
  auto finish_line = [&](bool complete) -> bool {
    ++number;
    if (line_size == 0) return true;  // blank lines say nothing
    std::optional<std::string> why;
    if (line_size > kMaxLineBytes) {
      why = fmt::format("longer than {} bytes", kMaxLineBytes);
    } else {
      why = reader.line(line, number);
    }
    // Torn: not even JSON, as a write cut short leaves it; the caller cuts
    // it off. A whole line is read (or is damage) like any other.
    if (why && !complete && (line_size > kMaxLineBytes || !nlohmann::json::accept(line))) return false;
    if (why) j.damaged_.push_back({number, *why, escaped_start(line, line_size)});
    return true;
  };
  char chunk[65536];
  while (true) {
    const ssize_t n = ::pread(j.fd_.get(), chunk, sizeof chunk, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("cannot read " + j.path_, errno);
    if (n == 0) break;
    std::string_view rest(chunk, static_cast<std::size_t>(n));
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      const auto piece = rest.substr(0, nl);
      if (line.size() + piece.size() <= kMaxLineBytes) {
        line += piece;
      } else if (line.size() < kShownDamageBytes) {
        line += piece.substr(0, kShownDamageBytes - line.size());
      }
      line_size += piece.size();
      if (nl == std::string_view::npos) break;
      finish_line(true);
      line.clear();
      line_size = 0;
      rest.remove_prefix(nl + 1);
      line_start = offset + static_cast<off_t>(static_cast<std::size_t>(n) - rest.size());
    }
    offset += n;
  }
  j.lines_ = number;  // newlines, not counting a last line without one
  if (line_size > 0) {
    // A last line without its newline: a whole line (edited by hand) is
    // read, and the next write ends it first; anything else is a write cut
    // short by a crash, whose change was never made: cut off.
    if (finish_line(false)) {
      j.needs_newline_ = true;
    } else if (::ftruncate(j.fd_.get(), line_start) == 0) {
      j.cut_torn_line_ = true;
      offset = line_start;
    } else {
      j.needs_newline_ = true;
    }
  }
  const bool earlier_boot = reader.earlier_boot();
  j.next_seq_ = reader.next_seq();
  j.pending_ = std::move(reader).pending();
  j.boot_written_ = offset > 0;
  // Everything a run changes is the running kernel's state, which a reboot
  // takes away: what a journal of an earlier boot lists is gone already, and
  // undoing it now could touch what someone made since. Its damage went too.
  if (earlier_boot) {
    j.dropped_from_earlier_boot_ = static_cast<int>(j.pending_.size());
    j.pending_.clear();
    j.damaged_.clear();
    if (::ftruncate(j.fd_.get(), 0) != 0) return make_error("cannot empty " + j.path_, errno);
    j.boot_written_ = false;
    j.needs_newline_ = false;
    j.lines_ = 0;
  }
  return j;
}

Journal Journal::in_memory() {
  return Journal();
}

Result<void> Journal::reopen() {
  auto fd = open_in_dir(dir_fd_.get(), dir_, name_, O_RDWR | O_CREAT | O_APPEND);
  if (!fd) return fd.error();
  fd_ = std::move(*fd);
  struct stat st {};
  if (::fstat(fd_.get(), &st) == 0 && st.st_size == 0) {
    boot_written_ = false;
    needs_newline_ = false;
    lines_ = 0;
  }
  return {};
}

Result<void> Journal::write_line(const nlohmann::json& line) {
  if (path_.empty()) return {};  // in memory
  auto r = write_text(dump(line));
  if (!r) return r.error();
  return {};
}

Result<long> Journal::write_text(const std::string& lines) {
  if (path_.empty()) return 0;  // in memory
  if (!fd_.valid())
    if (auto r = reopen(); !r) return r.error();
  std::string text;
  // A last line without its newline must not swallow this one.
  if (needs_newline_) text = "\n";
  // A file that starts now says which boot it belongs to.
  if (!boot_written_ && !boot_.empty()) text += nlohmann::json{{"boot", boot_}}.dump() + "\n";
  text += lines;
  text += "\n";
  const long first = lines_ + static_cast<long>(std::count(text.begin(), text.end() - 1 - lines.size(), '\n')) + 1;
  // One write() with O_APPEND: a killed process leaves at most a torn last
  // line, which the next open cuts off. No fsync: the page cache outlives the
  // process, and what the journal protects (interfaces, namespaces, rules,
  // sysctl values) does not outlive the kernel, so the crashes only fsync
  // guards against take the changes along with them (see the boot line).
  bool torn = false;
  if (auto r = append_all(fd_.get(), text, &torn); !r) {
    if (torn) needs_newline_ = true;
    return make_error("cannot write journal " + path_, r.error().code);
  }
  lines_ += static_cast<long>(std::count(text.begin(), text.end(), '\n'));
  boot_written_ = true;
  needs_newline_ = false;
  return first;
}

Result<long> Journal::append(JournalEntry entry) {
  if (next_seq_ > kMaxSeq) return make_error("journal " + path_ + " has run out of sequence numbers; remove it");
  entry.seq = next_seq_;
  if (!integers_only(entry.args))
    return make_error("cannot record the change in the journal: its args hold a number that is not an integer");
  if (!path_.empty()) {
    std::string line;
    try {
      line = entry_line(entry);
    } catch (const nlohmann::json::exception& e) {
      return make_error(std::string("cannot record the change in the journal: ") + e.what());
    }
    if (line.size() > kMaxLineBytes)
      return make_error(fmt::format("cannot record the change in the journal: its line would be {} bytes, more than {}",
                                    line.size(), kMaxLineBytes));
    auto written = write_text(line);
    if (!written) return written.error();
    entry.line = *written;
    entry.raw = std::move(line);
  }
  ++next_seq_;
  pending_.push_back(std::move(entry));
  return pending_.back().seq;
}

Result<void> Journal::identify(long seq, nlohmann::json identity) {
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const JournalEntry& e) { return e.seq == seq; });
  if (it == pending_.end()) return make_error("no pending change " + std::to_string(seq) + " to identify");
  if (auto r = write_line({{"is", seq}, {"identity", identity}}); !r) return r;
  it->identity = std::move(identity);
  return {};
}

Result<void> Journal::mark_undone(long seq) {
  if (auto r = write_line({{"undone", seq}}); !r) return r;
  std::erase_if(pending_, [&](const JournalEntry& e) { return e.seq == seq; });
  return {};
}

Result<void> Journal::mark_undone(const std::vector<long>& seqs) {
  if (seqs.empty()) return {};
  if (seqs.size() == 1) return mark_undone(seqs.front());
  if (auto r = write_line({{"undone", seqs}}); !r) return r;
  const std::set<long> done(seqs.begin(), seqs.end());
  std::erase_if(pending_, [&](const JournalEntry& e) { return done.count(e.seq) > 0; });
  return {};
}

std::string link_object(const std::string& netns, const std::string& dev) {
  return "link:" + netns + "/" + dev;
}
std::string netns_object(const std::string& name) {
  return "netns:" + name;
}

void Journal::remove_if_clean() {
  if (!pending_.empty() || path_.empty()) return;
  fd_.reset();
  boot_written_ = false;
  needs_newline_ = false;
  lines_ = 0;
  ::unlinkat(dir_fd_.get(), name_.c_str(), 0);
}

Result<std::string> Journal::keep_damaged_aside() {
  if (path_.empty()) return make_error("an in-memory journal has no file to keep");
  // What is still pending goes on in a fresh file, written first under a
  // temporary name and renamed over the journal last. Each entry is its own
  // line again (a line type that adds to an entry must be written back here
  // with it).
  std::string fresh;
  long lines = 0;
  if (!boot_.empty()) {
    fresh = nlohmann::json{{"boot", boot_}}.dump() + "\n";
    lines = 1;
  }
  for (auto& e : pending_) {
    if (e.raw.empty()) e.raw = entry_line(e);
    fresh += e.raw;
    fresh += '\n';
    e.line = ++lines;
    if (!e.identity.is_null()) {  // what identifies what it made, on the line after it
      fresh += dump(nlohmann::json{{"is", e.seq}, {"identity", e.identity}});
      fresh += '\n';
      ++lines;
    }
  }
  const std::string tmp = name_ + ".tmp";
  UniqueFd tmp_fd;
  auto drop_tmp = [&] {
    tmp_fd.reset();
    ::unlinkat(dir_fd_.get(), tmp.c_str(), 0);
  };
  if (!pending_.empty()) {
    ::unlinkat(dir_fd_.get(), tmp.c_str(), 0);
    tmp_fd.reset(
        ::openat(dir_fd_.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!tmp_fd.valid()) return make_error("cannot create " + dir_ + "/" + tmp, errno);
    bool torn = false;
    if (auto r = append_all(tmp_fd.get(), fresh, &torn); !r) {
      drop_tmp();
      return make_error("cannot write " + dir_ + "/" + tmp, r.error().code);
    }
  }
  // The damaged file under a name of its own; link() never replaces a file.
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm);
  std::string kept;
  for (int i = 1;; ++i) {
    kept = name_ + ".damaged-" + stamp + (i > 1 ? "-" + std::to_string(i) : "");
    if (::linkat(dir_fd_.get(), name_.c_str(), dir_fd_.get(), kept.c_str(), 0) == 0) break;
    if (errno != EEXIST || i == 100) {
      const int err = errno;
      drop_tmp();
      return make_error("cannot keep the damaged journal " + path_ + " as " + dir_ + "/" + kept, err);
    }
  }
  const int moved = pending_.empty() ? ::unlinkat(dir_fd_.get(), name_.c_str(), 0)
                                     : ::renameat(dir_fd_.get(), tmp.c_str(), dir_fd_.get(), name_.c_str());
  if (moved != 0) {
    const int err = errno;
    drop_tmp();
    ::unlinkat(dir_fd_.get(), kept.c_str(), 0);
    return make_error("cannot replace the damaged journal " + path_, err);
  }
  fd_ = std::move(tmp_fd);
  boot_written_ = !fresh.empty() && fd_.valid();
  needs_newline_ = false;
  lines_ = fd_.valid() ? lines : 0;
  damaged_.clear();
  return dir_ + "/" + kept;
}

std::string journal_text(const JournalEntry& entry) {
  std::string raw = entry.raw;
  if (raw.empty()) {
    try {
      raw = entry_line(entry);
    } catch (const nlohmann::json::exception&) {
      raw = "(not shown: not UTF-8)";
    }
  }
  raw = cut(raw, kShownEntryBytes);
  return entry.line > 0 ? fmt::format("line {}: {}", entry.line, raw) : raw;
}

std::string journal_text(const std::vector<DamagedLine>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < kShownDamagedLines; ++i)
    out += fmt::format("{}line {} ({}): {}", out.empty() ? "" : "\n", lines[i].number, lines[i].why, lines[i].text);
  if (lines.size() > kShownDamagedLines)
    out += fmt::format("\n... and {} more damaged {}", lines.size() - kShownDamagedLines,
                       plural_lines(lines.size() - kShownDamagedLines));
  return out;
}

std::string damaged_line_numbers(const std::vector<DamagedLine>& lines) {
  std::string out = "journal " + plural_lines(lines.size()) + " ";
  for (std::size_t i = 0; i < lines.size() && i < kShownDamagedLines; ++i)
    out += (i ? ", " : "") + std::to_string(lines[i].number);
  if (lines.size() > kShownDamagedLines) out += fmt::format(" and {} more", lines.size() - kShownDamagedLines);
  return out;
}

}  // namespace rxerun
