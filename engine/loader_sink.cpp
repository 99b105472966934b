#include "engine/loader_sink.h"

#include <algorithm>
#include <tuple>

namespace rxerun::loading {

Diagnostics DiagnosticSink::take_errors() {
  std::stable_sort(errors_.begin(), errors_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.mark.line, a.mark.col) < std::tie(b.mark.line, b.mark.col);
  });
  errors_.erase(std::unique(errors_.begin(), errors_.end(),
                            [](const Diagnostic& a, const Diagnostic& b) {
                              return a.mark.line == b.mark.line && a.mark.col == b.mark.col && a.message == b.message;
                            }),
                errors_.end());
  return std::move(errors_);
}

}  // namespace rxerun::loading
