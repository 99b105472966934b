#include "engine/loader_include.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "base/files.h"
#include "base/utf8.h"
#include "engine/loader.h"
#include "engine/loader_document.h"

namespace rxerun::loading {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kIncludedKeys{"include", "vars", "steps", "description"};

std::string canonical_path(const fs::path& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? fs::absolute(p).lexically_normal().string() : c.string();
}

}  // namespace

IncludeReader::IncludeReader(DiagnosticSink& sink, const std::string& file) : sink_(sink) {
  chain_.push_back(canonical_path(file));
}

std::vector<IncludedFile> IncludeReader::read(const YAML::Node& value, const YAML::Node& key) {
  std::vector<IncludedFile> out;
  read_list(value, key, out);
  return out;
}

void IncludeReader::read_list(const YAML::Node& value, const YAML::Node& key, std::vector<IncludedFile>& out) {
  if (value.IsScalar()) {
    read_one(value, out);
  } else if (value.IsSequence()) {
    for (const auto& item : value) read_one(item, out);
  } else {
    sink_.error(value.IsNull() ? key : value,
                fmt::format("'include' must be a file or a list of files ([topology/veth-pair.yaml]), got {}",
                            type_name(value)));
  }
}

void IncludeReader::read_one(const YAML::Node& item, std::vector<IncludedFile>& out) {
  if (!item.IsScalar() || item.Scalar().empty()) {
    sink_.error(item, fmt::format("an included file must be a path, got {}", type_name(item)));
    return;
  }
  const fs::path written(item.Scalar());
  const fs::path path = written.is_absolute() ? written : fs::path(sink_.file()).parent_path() / written;
  const std::string file = path.lexically_normal().string();
  const std::string canonical = canonical_path(path);
  const Mark at = mark_of(item);
  const std::string here = fmt::format("{}:{}:{}", sink_.file(), at.line, at.col);
  if (std::find(chain_.begin(), chain_.end(), canonical) != chain_.end()) {
    sink_.error(item, fmt::format("include cycle: '{}' is being included already ({}): a file cannot include itself",
                                  excerpt(item.Scalar()), fmt::join(chain_, " -> ")));
    return;
  }
  if (auto it = seen_.find(canonical); it != seen_.end()) {
    sink_.error(item, fmt::format("'{}' is included already, at {}: its steps would run twice", excerpt(item.Scalar()),
                                  it->second));
    return;
  }
  if (static_cast<int>(chain_.size()) > kMaxIncludeDepth) {
    sink_.error(item, fmt::format("includes nest deeper than {} levels", kMaxIncludeDepth));
    return;
  }
  seen_.emplace(canonical, here);
  auto text = read_file_capped(path, kMaxScenarioBytes, "included file");
  if (!text) {
    sink_.error(item, fmt::format("cannot include '{}': {}", excerpt(item.Scalar()), text.error().message));
    return;
  }
  IncludedFile included{file, "included from " + here + (sink_.note().empty() ? "" : ", " + sink_.note()), {}};
  ReadingFile reading(sink_, included.file, included.note);
  auto root = DocumentReader(sink_, "empty file: an included file is a mapping with 'vars' or 'steps'").read(*text);
  if (!root) return;
  included.root = *root;
  chain_.push_back(canonical);
  read_included(std::move(included), out);
  chain_.pop_back();
}

void IncludeReader::read_included(IncludedFile file, std::vector<IncludedFile>& out) {
  if (!file.root.IsMap()) {
    sink_.error(file.root,
                fmt::format("an included file must be a mapping with 'vars' or 'steps', got {}", type_name(file.root)));
    return;
  }
  for_each_pair(file.root, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (key == "include")
      read_list(value, key_node, out);
    else if (std::find(kIncludedKeys.begin(), kIncludedKeys.end(), key) == kIncludedKeys.end() &&
             !key.starts_with("x-"))
      sink_.error(key_node, fmt::format("'{}' has no place in an included file, which holds include, vars, steps and "
                                        "description: the including scenario names the rest{}",
                                        excerpt(key), did_you_mean(key, kIncludedKeys)));
  });
  out.push_back(std::move(file));
}

}  // namespace rxerun::loading
