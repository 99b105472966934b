#pragma once
// The one place every reader of a scenario file writes its problems to:
// errors, each a Diagnostic at FILE:LINE:COL, and warnings (a plugin that
// could not be loaded, when that is allowed). Readers go on after an error,
// so that a single run names all of them. A scenario may span files (its
// `include:`, a --var-file): a ReadingFile names the file being read while
// it lives, so that marks are reported in the file they come from.

#include <string>
#include <vector>

#include "engine/diag.h"
#include "engine/loader_yaml.h"

namespace rxerun::loading {

class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file) : file_(file), files_{std::move(file)} {}

  // The file being read: the scenario's, or the one a ReadingFile names.
  const std::string& file() const { return file_; }
  // After each message about the file being read ("included from
  // lab.yaml:2:12"), or empty.
  const std::string& note() const { return note_; }

  void error(Mark m, std::string message) { errors_.push_back({file_, m, with_note(std::move(message))}); }
  void error(const YAML::Node& n, std::string message) { error(mark_of(n), std::move(message)); }
  // Diagnostics made elsewhere (check_params, the checks of the text); one
  // about the file being read gets its note.
  void add(Diagnostic d) {
    if (d.file == file_) d.message = with_note(std::move(d.message));
    errors_.push_back(std::move(d));
  }
  void add(const Diagnostics& ds) {
    for (const auto& d : ds) add(d);
  }
  void warning(const YAML::Node& n, std::string message) {
    warnings_.push_back({file_, mark_of(n), with_note(std::move(message))});
  }

  // The errors sorted by place (the files in the order they were first
  // read, then line and column; stable: two at one place keep the order
  // they were found in), each once: a node reached twice through an alias
  // would report the same problem twice.
  Diagnostics take_errors();
  Diagnostics take_warnings() { return std::move(warnings_); }

 private:
  friend class ReadingFile;
  std::string with_note(std::string message) const { return note_.empty() ? message : message + " (" + note_ + ")"; }

  std::string file_;
  std::string note_;
  std::vector<std::string> files_;  // every file read, in order: the first is the scenario's
  Diagnostics errors_;
  Diagnostics warnings_;
};

// While it lives, `sink` reports about `file`, each message followed by
// `note` (empty: nothing).
class ReadingFile {
 public:
  ReadingFile(DiagnosticSink& sink, std::string file, std::string note);
  ~ReadingFile();
  ReadingFile(const ReadingFile&) = delete;
  ReadingFile& operator=(const ReadingFile&) = delete;

 private:
  DiagnosticSink& sink_;
  std::string saved_file_;
  std::string saved_note_;
};

}  // namespace rxerun::loading
