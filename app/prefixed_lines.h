#pragma once
// Output of several lab VMs at once (a suite's VMs side by side, a two-node
// lab's nodes).

#include <mutex>
#include <string>
#include <string_view>

#include "base/output.h"

namespace rxerun {

// Lines of text from several lab VMs at once, each line whole and prefixed
// with its VM's kernel ("[7.3] ") or node ("[a] "), so that two streams stay readable.
class PrefixedLines {
 public:
  explicit PrefixedLines(std::mutex& lock, std::string prefix) : lock_(lock), prefix_(std::move(prefix)) {}
  ~PrefixedLines() { flush(); }
  PrefixedLines(const PrefixedLines&) = delete;
  PrefixedLines& operator=(const PrefixedLines&) = delete;
  void operator()(std::string_view bytes) {
    partial_.append(bytes);
    std::size_t nl;
    std::string whole;
    while ((nl = partial_.find('\n')) != std::string::npos) {
      std::string line = partial_.substr(0, nl);
      // A progress line's carriage returns: only what it ended with counts.
      if (auto cr = line.rfind('\r'); cr != std::string::npos) line.erase(0, cr + 1);
      whole += prefix_ + line + "\n";
      partial_.erase(0, nl + 1);
    }
    if (whole.empty()) return;
    std::lock_guard<std::mutex> hold(lock_);
    write_out(stdout, whole);
  }
  void flush() {
    if (partial_.empty()) return;
    (*this)("\n");
  }

 private:
  std::mutex& lock_;
  std::string prefix_;
  std::string partial_;
};

}  // namespace rxerun
