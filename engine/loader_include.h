#pragma once
// `include:` of a scenario: the files whose `vars` (defaults the including
// file and --var override) and `steps` (before the including file's) the
// scenario builds on, such as a shared topology. Paths are relative to the
// including file; an included file may include others. Refused: a missing
// or unreadable file (at the include's line), a cycle, a file included
// twice (its steps would run twice), more than kMaxIncludeDepth levels, and
// in an included file any top-level key but include, vars, steps,
// description and x-... (the including scenario owns the rest).

#include <map>
#include <string>
#include <vector>

#include "engine/loader_sink.h"
#include "engine/loader_yaml.h"

namespace rxerun::loading {

// An included file, read: its path as diagnostics name it, the note its
// diagnostics carry ("included from lab.yaml:2:12"), and its document.
struct IncludedFile {
  std::string file;
  std::string note;
  YAML::Node root;
};

inline constexpr int kMaxIncludeDepth = 8;

class IncludeReader {
 public:
  // `file`: the scenario's.
  IncludeReader(DiagnosticSink& sink, const std::string& file);

  // The value of the scenario's `include:` (a path or a list of them): the
  // files it names and theirs, each after the files it includes, which is
  // the order their vars and steps come in.
  std::vector<IncludedFile> read(const YAML::Node& value, const YAML::Node& key);

 private:
  void read_list(const YAML::Node& value, const YAML::Node& key, std::vector<IncludedFile>& out);
  void read_one(const YAML::Node& item, std::vector<IncludedFile>& out);
  // The included document's top-level keys; its own `include:`, read.
  void read_included(IncludedFile file, std::vector<IncludedFile>& out);

  DiagnosticSink& sink_;
  std::vector<std::string> chain_;           // the files being read, by canonical path, the scenario's first
  std::map<std::string, std::string> seen_;  // canonical path -> where it was included ("lab.yaml:2:12")
};

}  // namespace rxerun::loading
