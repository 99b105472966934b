#pragma once
// The live status line of a step that runs longer than a second, on a
// terminal: what it waits for, the time it has taken and its timeout,
// redrawn in place until the step's result line replaces it.
//
//   ..    server               exec      3.4s of 10s
//
// A thread of its own redraws it, since the step blocks the runner's. Only
// for a terminal: in a pipe or a log, a line that rewrites itself is noise.

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "base/duration.h"

namespace rxerun {

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // A step started waiting: `what` is the line's text before the times;
  // `timeout` zero when the step has none.
  void show(std::string what, Duration timeout);
  // The step ended: the line, if drawn, is erased, so the next line takes
  // its place.
  void clear();

 private:
  void loop();
  std::string text_locked() const;

  std::FILE* out_;
  std::mutex lock_;
  std::condition_variable wake_;
  std::thread thread_;
  bool quit_ = false;
  bool armed_ = false;
  bool drawn_ = false;
  std::string what_;
  Duration timeout_{0};
  std::chrono::steady_clock::time_point since_;
};

}  // namespace rxerun
