#include "engine/progress_line.h"

#include <fmt/format.h>

#include "base/output.h"

namespace rxerun {

namespace {

constexpr auto kQuietFirst = std::chrono::seconds(1);  // a step shorter than this never shows the line
constexpr auto kRedraw = std::chrono::milliseconds(200);

}  // namespace

ProgressLine::ProgressLine(std::FILE* out) : out_(out) {}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard<std::mutex> hold(lock_);
    quit_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  clear();
}

void ProgressLine::show(std::string what, Duration timeout) {
  {
    std::lock_guard<std::mutex> hold(lock_);
    what_ = std::move(what);
    timeout_ = timeout;
    since_ = std::chrono::steady_clock::now();
    armed_ = true;
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }
  wake_.notify_all();
}

void ProgressLine::clear() {
  std::lock_guard<std::mutex> hold(lock_);
  armed_ = false;
  if (drawn_) write_out(out_, "\r\x1b[K");
  drawn_ = false;
}

std::string ProgressLine::text_locked() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count();
  if (timeout_ > Duration::zero()) return fmt::format("{} {:.1f}s of {}", what_, elapsed, format_duration(timeout_));
  return fmt::format("{} {:.1f}s", what_, elapsed);
}

void ProgressLine::loop() {
  std::unique_lock<std::mutex> hold(lock_);
  while (!quit_) {
    if (!armed_) {
      wake_.wait(hold, [this] { return quit_ || armed_; });
      continue;
    }
    const auto show_at = since_ + kQuietFirst;
    if (std::chrono::steady_clock::now() < show_at) {
      wake_.wait_until(hold, show_at);
      continue;
    }
    // "\r" and erase-to-end: the line is redrawn in place, never scrolled.
    write_out(out_, "\r\x1b[K" + text_locked());
    drawn_ = true;
    wake_.wait_for(hold, kRedraw);
  }
}

}  // namespace rxerun
