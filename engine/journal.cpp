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

JournalEntry entry_from(const nlohmann::json& j) {
  JournalEntry e;
  e.seq = j.at("do").get<long>();
  e.step = j.value("step", "");
  e.kind = j.at("kind").get<std::string>();
  e.netns = j.value("netns", "");
  e.summary = j.value("summary", "");
  e.args = j.value("args", nlohmann::json::object());
  return e;
}

}  // namespace

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
  {
    std::ifstream in(j.path_);
    std::string line;
    std::vector<long> undone;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      try {
        if (parsed.is_object() && parsed.contains("do")) {
          auto e = entry_from(parsed);
          j.next_seq_ = std::max(j.next_seq_, e.seq + 1);
          j.pending_.push_back(std::move(e));
        } else if (parsed.is_object() && parsed.contains("undone")) {
          undone.push_back(parsed.at("undone").get<long>());
        } else {
          ++j.skipped_lines_;
        }
      } catch (const nlohmann::json::exception&) {
        ++j.skipped_lines_;
      }
    }
    std::erase_if(j.pending_, [&](const JournalEntry& e) {
      return std::find(undone.begin(), undone.end(), e.seq) != undone.end();
    });
  }
  j.fd_ = ::open(j.path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (j.fd_ < 0) return make_error("cannot open " + j.path_, errno);
  return j;
}

Journal Journal::in_memory() { return Journal(); }

Journal::Journal(Journal&& o) noexcept
    : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)), lock_fd_(std::exchange(o.lock_fd_, -1)),
      next_seq_(o.next_seq_), skipped_lines_(o.skipped_lines_), pending_(std::move(o.pending_)) {}

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
  if (fd_ < 0) fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) return make_error("cannot open journal " + path_, errno);
  std::string text = line.dump() + "\n";
  // One write() of a whole line with O_APPEND: a crash leaves at most a torn last line.
  ssize_t n = ::write(fd_, text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) return make_error("cannot write journal " + path_, n < 0 ? errno : EIO);
  if (::fsync(fd_) != 0) return make_error("cannot fsync journal " + path_, errno);
  return {};
}

Result<long> Journal::append(JournalEntry entry) {
  entry.seq = next_seq_++;
  nlohmann::json line = {{"do", entry.seq},         {"step", entry.step},       {"kind", entry.kind},
                         {"netns", entry.netns},    {"summary", entry.summary}, {"args", entry.args}};
  if (auto r = write_line(line); !r) return r.error();
  pending_.push_back(std::move(entry));
  return pending_.back().seq;
}

Result<void> Journal::mark_undone(long seq) {
  if (auto r = write_line({{"undone", seq}}); !r) return r;
  std::erase_if(pending_, [&](const JournalEntry& e) { return e.seq == seq; });
  return {};
}

void Journal::remove_if_clean() {
  if (!pending_.empty() || path_.empty()) return;
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  ::unlink(path_.c_str());
}

}  // namespace rxerun
