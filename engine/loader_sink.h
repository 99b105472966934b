#pragma once
// The one place every reader of a scenario file writes its problems to:
// errors, each a Diagnostic at FILE:LINE:COL, and warnings (a plugin that
// could not be loaded, when that is allowed). Readers go on after an error,
// so that a single run names all of them.

#include <string>

#include "engine/diag.h"
#include "engine/loader_yaml.h"

namespace rxerun::loading {

class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  void error(Mark m, std::string message) { errors_.push_back({file_, m, std::move(message)}); }
  void error(const YAML::Node& n, std::string message) { error(mark_of(n), std::move(message)); }
  // Diagnostics made elsewhere (check_params, the checks of the text).
  void add(Diagnostic d) { errors_.push_back(std::move(d)); }
  void add(const Diagnostics& ds) { errors_.insert(errors_.end(), ds.begin(), ds.end()); }
  void warning(const YAML::Node& n, std::string message) {
    warnings_.push_back({file_, mark_of(n), std::move(message)});
  }

  // The errors sorted by place (stable: two at one place keep the order
  // they were found in), each once: a node reached twice through an alias
  // would report the same problem twice.
  Diagnostics take_errors();
  Diagnostics take_warnings() { return std::move(warnings_); }

 private:
  std::string file_;
  Diagnostics errors_;
  Diagnostics warnings_;
};

}  // namespace rxerun::loading
