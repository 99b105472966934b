#include "engine/journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>
#include <string_view>
#include <utility>

#include "base/files.h"

namespace rxerun {

namespace {

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

// A line of a journal file as it is read in pieces: all of it up to
// kMaxLineBytes, of a longer one only its start.
struct LineSoFar {
  std::string start;
  std::size_t size = 0;  // bytes of the line, kept or not

  void add(std::string_view piece) {
    if (start.size() + piece.size() <= kMaxLineBytes) {
      start += piece;
    } else if (start.size() < kShownDamageBytes) {
      start += piece.substr(0, kShownDamageBytes - start.size());
    }
    size += piece.size();
  }
  void clear() {
    start.clear();
    size = 0;
  }
};

}  // namespace

Result<Journal> Journal::open(const std::string& dir, const std::string& scenario) {
  if (scenario.empty() || scenario.find('/') != std::string::npos || scenario == "." || scenario == "..")
    return make_error("'" + scenario + "' cannot name a journal");
  auto state = open_state_dir(dir);
  if (!state) return state.error();
  Journal j;
  j.dir_ = std::move(*state);
  if (auto r = j.lock(scenario); !r) return r.error();
  j.name_ = scenario + ".journal";
  j.path_ = j.dir_.path + "/" + j.name_;
  auto fd = open_state_file(j.dir_, j.name_, O_RDWR | O_CREAT | O_APPEND);
  if (!fd) return fd.error();
  j.fd_ = std::move(*fd);
  j.boot_ = kernel_boot_id();
  if (auto r = j.load(); !r) return r.error();
  return j;
}

Journal Journal::in_memory() {
  return Journal();
}

Result<void> Journal::lock(const std::string& scenario) {
  const std::string lock_path = dir_.path + "/" + scenario + ".lock";
  auto lock = open_state_file(dir_, scenario + ".lock", O_RDWR | O_CREAT);
  if (!lock) return lock.error();
  lock_fd_ = std::move(*lock);
  const int lock_fd = lock_fd_.get();
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
  return {};
}

Result<void> Journal::load() {
  JournalReader reader(boot_);
  if (auto r = read_lines(reader); !r) return r;
  JournalContents read = std::move(reader).finish();
  next_seq_ = read.next_seq;
  pending_ = std::move(read.pending);
  damaged_ = std::move(read.damaged);
  // Everything a run changes is the running kernel's state, which a reboot
  // takes away: what a journal of an earlier boot lists is gone already, and
  // undoing it now could touch what someone made since. Its damage went too.
  if (read.earlier_boot) {
    dropped_from_earlier_boot_ = static_cast<int>(pending_.size());
    pending_.clear();
    damaged_.clear();
    if (::ftruncate(fd_.get(), 0) != 0) return make_error("cannot empty " + path_, errno);
    boot_written_ = false;
    needs_newline_ = false;
    lines_ = 0;
  }
  return {};
}

Result<void> Journal::read_lines(JournalReader& reader) {
  LineSoFar line;
  off_t offset = 0, line_start = 0;
  long number = 0;
  char chunk[65536];
  while (true) {
    const ssize_t n = ::pread(fd_.get(), chunk, sizeof chunk, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("cannot read " + path_, errno);
    if (n == 0) break;
    std::string_view rest(chunk, static_cast<std::size_t>(n));
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      line.add(rest.substr(0, nl));
      if (nl == std::string_view::npos) break;
      reader.line(line.start, line.size, ++number, true);
      line.clear();
      rest.remove_prefix(nl + 1);
      line_start = offset + static_cast<off_t>(static_cast<std::size_t>(n) - rest.size());
    }
    offset += n;
  }
  lines_ = number;  // newlines, not counting a last line without one
  if (line.size > 0) {
    // A last line without its newline: a whole line (edited by hand) is
    // read, and the next write ends it first; anything else is a write cut
    // short by a crash, whose change was never made: cut off.
    if (reader.line(line.start, line.size, number + 1, false)) {
      needs_newline_ = true;
    } else if (::ftruncate(fd_.get(), line_start) == 0) {
      cut_torn_line_ = true;
      offset = line_start;
    } else {
      needs_newline_ = true;
    }
  }
  boot_written_ = offset > 0;
  return {};
}

Result<void> Journal::reopen() {
  auto fd = open_state_file(dir_, name_, O_RDWR | O_CREAT | O_APPEND);
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

Result<void> Journal::write_line(const std::string& line) {
  if (path_.empty()) return {};  // in memory
  auto r = write_text(line);
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
  if (!boot_written_ && !boot_.empty()) text += boot_line(boot_) + "\n";
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
  if (next_seq_ > kMaxJournalSeq) return make_error("journal " + path_ + " has run out of sequence numbers; remove it");
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
  if (auto r = write_line(identity_line(seq, identity)); !r) return r;
  it->identity = std::move(identity);
  return {};
}

Result<void> Journal::mark_undone(long seq) {
  if (auto r = write_line(undone_line(seq)); !r) return r;
  std::erase_if(pending_, [&](const JournalEntry& e) { return e.seq == seq; });
  return {};
}

Result<void> Journal::mark_undone(const std::vector<long>& seqs) {
  if (seqs.empty()) return {};
  if (seqs.size() == 1) return mark_undone(seqs.front());
  if (auto r = write_line(undone_line(seqs)); !r) return r;
  const std::set<long> done(seqs.begin(), seqs.end());
  std::erase_if(pending_, [&](const JournalEntry& e) { return done.count(e.seq) > 0; });
  return {};
}

void Journal::remove_if_clean() {
  if (!pending_.empty() || path_.empty()) return;
  fd_.reset();
  boot_written_ = false;
  needs_newline_ = false;
  lines_ = 0;
  ::unlinkat(dir_.fd.get(), name_.c_str(), 0);
}

Result<std::string> Journal::keep_damaged_aside() {
  if (path_.empty()) return make_error("an in-memory journal has no file to keep");
  // What is still pending goes on in a fresh file, written first under a
  // temporary name and renamed over the journal last.
  long lines = 0;
  const std::string fresh = pending_text(&lines);
  const int dir_fd = dir_.fd.get();
  const std::string tmp = name_ + ".tmp";
  UniqueFd tmp_fd;
  auto drop_tmp = [&] {
    tmp_fd.reset();
    ::unlinkat(dir_fd, tmp.c_str(), 0);
  };
  if (!pending_.empty()) {
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    tmp_fd.reset(::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!tmp_fd.valid()) return make_error("cannot create " + dir_.path + "/" + tmp, errno);
    bool torn = false;
    if (auto r = append_all(tmp_fd.get(), fresh, &torn); !r) {
      drop_tmp();
      return make_error("cannot write " + dir_.path + "/" + tmp, r.error().code);
    }
  }
  auto kept = link_damaged();
  if (!kept) {
    drop_tmp();
    return kept.error();
  }
  const int moved =
      pending_.empty() ? ::unlinkat(dir_fd, name_.c_str(), 0) : ::renameat(dir_fd, tmp.c_str(), dir_fd, name_.c_str());
  if (moved != 0) {
    const int err = errno;
    drop_tmp();
    ::unlinkat(dir_fd, kept->c_str(), 0);
    return make_error("cannot replace the damaged journal " + path_, err);
  }
  fd_ = std::move(tmp_fd);
  boot_written_ = !fresh.empty() && fd_.valid();
  needs_newline_ = false;
  lines_ = fd_.valid() ? lines : 0;
  damaged_.clear();
  return dir_.path + "/" + *kept;
}

std::string Journal::pending_text(long* lines) {
  // Each entry is its own line again (a line type that adds to an entry must
  // be written back here with it).
  std::string fresh;
  *lines = 0;
  if (!boot_.empty()) {
    fresh = boot_line(boot_) + "\n";
    *lines = 1;
  }
  for (auto& e : pending_) {
    if (e.raw.empty()) e.raw = entry_line(e);
    fresh += e.raw;
    fresh += '\n';
    e.line = ++*lines;
    if (!e.identity.is_null()) {  // what identifies what it made, on the line after it
      fresh += identity_line(e.seq, e.identity);
      fresh += '\n';
      ++*lines;
    }
  }
  return fresh;
}

Result<std::string> Journal::link_damaged() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm);
  for (int i = 1;; ++i) {
    std::string kept = name_ + ".damaged-" + stamp + (i > 1 ? "-" + std::to_string(i) : "");
    if (::linkat(dir_.fd.get(), name_.c_str(), dir_.fd.get(), kept.c_str(), 0) == 0) return kept;
    const int err = errno;
    if (err != EEXIST || i == 100)
      return make_error("cannot keep the damaged journal " + path_ + " as " + dir_.path + "/" + kept, err);
  }
}

}  // namespace rxerun
