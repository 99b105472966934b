#include "engine/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <fstream>
#include <set>
#include <sstream>

namespace rxerun {

namespace {

Result<void> make_dirs(const std::string& dir) {
  std::string partial;
  std::stringstream ss(dir);
  std::string part;
  if (!dir.empty() && dir[0] == '/') partial = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    partial += part + "/";
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      return make_error("cannot create " + partial, errno);
  }
  return {};
}

// The kernel's id of this boot; "" where /proc does not say.
std::string current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

JournalEntry entry_from(const nlohmann::json& j) {
  JournalEntry e;
  e.seq = j.at("do").get<long>();
  e.step = j.value("step", "");
  e.kind = j.at("kind").get<std::string>();
  e.netns = j.value("netns", "");
  e.summary = j.value("summary", "");
  e.args = j.value("args", nlohmann::json::object());
  e.footprint.on = j.value("on", std::vector<std::string>{});
  e.footprint.makes = j.value("makes", std::vector<std::string>{});
  return e;
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

Result<Journal> Journal::open(const std::string& dir, const std::string& scenario) {
  if (auto r = make_dirs(dir); !r) return r.error();
  Journal j;
  std::string lock_path = dir + "/" + scenario + ".lock";
  j.lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (j.lock_fd_ < 0) return make_error("cannot open " + lock_path, errno);
  if (::flock(j.lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[32] = {};
    [[maybe_unused]] auto n = ::pread(j.lock_fd_, buf, sizeof buf - 1, 0);
    std::string holder = buf[0] ? " (pid " + std::string(buf, std::strlen(buf)) + ")" : "";
    if (err == EWOULDBLOCK)
      return make_error("another run of scenario '" + scenario + "' is in progress" + holder + "; lock " + lock_path);
    return make_error("cannot lock " + lock_path, err);
  }
  std::string pid = std::to_string(::getpid());
  if (::ftruncate(j.lock_fd_, 0) == 0) [[maybe_unused]] auto n = ::pwrite(j.lock_fd_, pid.data(), pid.size(), 0);

  j.path_ = dir + "/" + scenario + ".journal";
  const std::string boot = current_boot_id();
  bool earlier_boot = false;
  {
    std::ifstream in(j.path_);
    std::string line;
    std::set<long> undone;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      try {
        if (parsed.is_object() && parsed.contains("boot")) {
          earlier_boot = parsed.at("boot").get<std::string>() != boot;
        } else if (parsed.is_object() && parsed.contains("do")) {
          auto e = entry_from(parsed);
          j.next_seq_ = std::max(j.next_seq_, e.seq + 1);
          j.pending_.push_back(std::move(e));
        } else if (parsed.is_object() && parsed.contains("is")) {
          const long seq = parsed.at("is").get<long>();
          for (auto& e : j.pending_)
            if (e.seq == seq) e.identity = parsed.value("identity", nlohmann::json());
        } else if (parsed.is_object() && parsed.contains("undone")) {
          const auto& u = parsed.at("undone");
          if (u.is_array())
            for (const auto& seq : u) undone.insert(seq.get<long>());
          else
            undone.insert(u.get<long>());
        } else {
          ++j.skipped_lines_;
        }
      } catch (const nlohmann::json::exception&) {
        ++j.skipped_lines_;
      }
    }
    std::erase_if(j.pending_, [&](const JournalEntry& e) { return undone.count(e.seq) > 0; });
  }
  // Everything a run changes is the running kernel's state, which a reboot
  // takes away: what a journal of an earlier boot lists is gone already, and
  // undoing it now could touch what someone made since.
  if (earlier_boot) {
    j.dropped_from_earlier_boot_ = static_cast<int>(j.pending_.size());
    j.pending_.clear();
  }
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (earlier_boot ? O_TRUNC : 0);
  j.fd_ = ::open(j.path_.c_str(), flags, 0600);
  if (j.fd_ < 0) return make_error("cannot open " + j.path_, errno);
  j.boot_ = boot;
  struct stat st{};
  j.boot_written_ = ::fstat(j.fd_, &st) == 0 && st.st_size > 0;
  return j;
}

Journal Journal::in_memory() { return Journal(); }

Journal::Journal(Journal&& o) noexcept
    : path_(std::move(o.path_)), boot_(std::move(o.boot_)), boot_written_(o.boot_written_),
      fd_(std::exchange(o.fd_, -1)), lock_fd_(std::exchange(o.lock_fd_, -1)), next_seq_(o.next_seq_),
      skipped_lines_(o.skipped_lines_),
      dropped_from_earlier_boot_(o.dropped_from_earlier_boot_), pending_(std::move(o.pending_)) {}

Journal& Journal::operator=(Journal&& o) noexcept {
  if (this != &o) {
    this->~Journal();
    new (this) Journal(std::move(o));
  }
  return *this;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

Result<void> Journal::write_line(const nlohmann::json& line) {
  if (path_.empty()) return {};  // in memory
  return write_text(dump(line));
}

Result<void> Journal::write_text(const std::string& line) {
  if (path_.empty()) return {};  // in memory
  if (fd_ < 0) fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) return make_error("cannot open journal " + path_, errno);
  std::string text;
  // A file that starts now says which boot it belongs to.
  if (!boot_written_ && !boot_.empty()) text = nlohmann::json{{"boot", boot_}}.dump() + "\n";
  text += line;
  text += "\n";
  // One write() with O_APPEND: a killed process leaves at most a torn last
  // line. No fsync: the page cache outlives the process, and what the
  // journal protects (interfaces, namespaces, rules, sysctl values) does not
  // outlive the kernel, so the crashes only fsync guards against take the
  // changes along with them (see the boot line).
  ssize_t n = ::write(fd_, text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) return make_error("cannot write journal " + path_, n < 0 ? errno : EIO);
  boot_written_ = true;
  return {};
}

Result<long> Journal::append(JournalEntry entry) {
  entry.seq = next_seq_++;
  if (!path_.empty())
    if (auto r = write_text(entry_line(entry)); !r) return r.error();
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

std::string link_object(const std::string& netns, const std::string& dev) { return "link:" + netns + "/" + dev; }
std::string netns_object(const std::string& name) { return "netns:" + name; }

void Journal::remove_if_clean() {
  if (!pending_.empty() || path_.empty()) return;
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  boot_written_ = false;
  ::unlink(path_.c_str());
}

}  // namespace rxerun
