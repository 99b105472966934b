// The parts of report.h that every reporter shares: status names, the cleanup
// verdict, fan-out, and writing a report file for --report FORMAT:PATH.

#include "engine/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "base/output.h"

namespace rxerun {

std::string_view to_string(StepStatus s) {
  switch (s) {
    case StepStatus::Passed: return "passed";
    case StepStatus::Flaky: return "flaky";
    case StepStatus::Failed: return "failed";
    case StepStatus::Error: return "error";
    case StepStatus::Skipped: return "skipped";
    case StepStatus::NotRun: return "not-run";
    case StepStatus::Interrupted: return "interrupted";
  }
  return "unknown";
}

bool CleanupReport::clean() const {
  if (kept) return true;  // nothing was undone on purpose; `rxerun cleanup` judges later
  return std::all_of(undos.begin(), undos.end(), [](const UndoReport& u) { return u.ok; });
}

// ---- MultiReporter -------------------------------------------------------

void MultiReporter::run_started(const Scenario& s) {
  for (auto* r : reporters_) r->run_started(s);
}
void MultiReporter::step_started(const StepSpec& s) {
  for (auto* r : reporters_) r->step_started(s);
}
void MultiReporter::step_finished(const StepReport& s) {
  for (auto* r : reporters_) r->step_finished(s);
}
void MultiReporter::cleanup_started(std::string_view phase, std::size_t pending) {
  for (auto* r : reporters_) r->cleanup_started(phase, pending);
}
void MultiReporter::undo_finished(const UndoReport& u) {
  for (auto* r : reporters_) r->undo_finished(u);
}
void MultiReporter::cleanup_finished(const CleanupReport& c) {
  for (auto* r : reporters_) r->cleanup_finished(c);
}
void MultiReporter::run_finished(const RunReport& rr) {
  for (auto* r : reporters_) r->run_finished(rr);
}
void MultiReporter::note(std::string_view text) {
  for (auto* r : reporters_) r->note(text);
}

// ---- GuardedReporter -----------------------------------------------------

template <class F>
void GuardedReporter::pass(F&& call) {
  if (silenced_) return;
  try {
    call();
  } catch (const std::exception& e) {
    silenced_ = true;
    print(stderr, "rxerun: output stopped: {}\n", e.what());
  } catch (...) {
    silenced_ = true;
    print(stderr, "rxerun: output stopped\n");
  }
}

void GuardedReporter::run_started(const Scenario& s) {
  pass([&] { inner_.run_started(s); });
}
void GuardedReporter::step_started(const StepSpec& s) {
  pass([&] { inner_.step_started(s); });
}
void GuardedReporter::step_finished(const StepReport& r) {
  pass([&] { inner_.step_finished(r); });
}
void GuardedReporter::cleanup_started(std::string_view phase, std::size_t pending) {
  pass([&] { inner_.cleanup_started(phase, pending); });
}
void GuardedReporter::undo_finished(const UndoReport& r) {
  pass([&] { inner_.undo_finished(r); });
}
void GuardedReporter::cleanup_finished(const CleanupReport& r) {
  pass([&] { inner_.cleanup_finished(r); });
}
void GuardedReporter::run_finished(const RunReport& r) {
  pass([&] { inner_.run_finished(r); });
}
void GuardedReporter::note(std::string_view text) {
  pass([&] { inner_.note(text); });
}

// ---- --report FORMAT:PATH ------------------------------------------------

std::optional<ReportTarget> parse_report_target(std::string_view spec, std::string* error) {
  auto fail = [&](std::string message) -> std::optional<ReportTarget> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) {
    return fail(fmt::format("--report '{}': expected FORMAT:PATH, e.g. json:report.json or junit:report.xml", spec));
  }
  const auto format = spec.substr(0, colon);
  const auto path = spec.substr(colon + 1);
  ReportTarget target{};
  if (format == "json") {
    target.format = ReportTarget::Format::Json;
  } else if (format == "junit") {
    target.format = ReportTarget::Format::Junit;
  } else {
    return fail(fmt::format("--report '{}': unknown format '{}' (json or junit)", spec, format));
  }
  if (path.empty()) return fail(fmt::format("--report '{}': the path is empty", spec));
  target.path = std::string(path);
  return target;
}

namespace {

// Owns the descriptor of the temporary file; closes it on every path out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closing can report a late write error (NFS), so it is checked once.
  int release_and_close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

Error io_error(std::string_view what, const std::string& path, int code) {
  return make_error(fmt::format("cannot {} report {}: {}", what, path, std::strerror(code)), code);
}

}  // namespace

Result<void> write_report(const ReportTarget& target, const RunReport& report) {
  std::string text;
  if (target.format == ReportTarget::Format::Json) {
    // Facts come from tools and may hold invalid UTF-8: replace, never throw.
    text = to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
  } else {
    text = to_junit_xml(report);
  }

  // A reader (CI) never sees a half-written report: write aside, then rename.
  const std::string tmp = target.path + ".tmp";
  FileDescriptor fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (fd.get() < 0) return io_error("create", tmp, errno);

  auto discard = [&](std::string_view what, int code) {
    ::unlink(tmp.c_str());
    return io_error(what, tmp, code);
  };
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int code = errno;
      return discard("write", code);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0 && errno != EINVAL && errno != EROFS) {
    const int code = errno;
    return discard("write", code);
  }
  if (fd.release_and_close() != 0) {
    const int code = errno;
    return discard("write", code);
  }
  if (::rename(tmp.c_str(), target.path.c_str()) != 0) {
    const int code = errno;
    ::unlink(tmp.c_str());
    return io_error("rename", fmt::format("{} to {}", tmp, target.path), code);
  }
  return {};
}

}  // namespace rxerun
