#pragma once
// Output to a terminal or a pipe that never throws and never ends rxerun.
// When the reader is gone (`rxerun lab.yaml | head -n 3`), or the stream was
// closed or cannot take more, the stream is pointed at /dev/null: the run
// goes on to its cleanup, its reports and its exit code, printing nothing
// more there.

#include <cstdio>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace rxerun {

// Writes `text` to `out` and flushes it, so that every line leaves at once
// (users watch long runs through tee and CI logs).
void write_out(std::FILE* out, std::string_view text);

template <class... Args>
void print(std::FILE* out, fmt::format_string<Args...> format, Args&&... args) {
  write_out(out, fmt::format(format, std::forward<Args>(args)...));
}

// Called first thing in main: opens /dev/null on any of fds 0, 1 and 2 that
// is closed, so that no file rxerun opens later (a journal, a lock) becomes
// a standard stream and receives its output; and ignores SIGPIPE, so that a
// closed pipe is an error of one write (handled above), not a lethal signal.
// Children get SIGPIPE back (sys/process.cpp resets it before exec).
void protect_standard_streams();

}  // namespace rxerun
