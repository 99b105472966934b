#pragma once
// The step kinds known to this run: built from the explicit list in steps/
// (by app/main.cpp, or by a test from its own fakes), sorted by name,
// duplicates rejected at construction; then the kinds of plugins, added
// before any scenario is loaded (a Kind* from find() is good until the next
// add()).

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/kind.h"

namespace rxerun {

class Registry {
 public:
  // Throws std::logic_error on a duplicate or empty name: a programming error.
  explicit Registry(std::vector<Kind> kinds);

  // A plugin's kinds, all or none: refused when a name is empty or taken
  // (by a built-in kind or another plugin's), with a message saying which.
  Result<void> add(std::vector<Kind> kinds);

  // A plugin file that could not be loaded (cleanup goes on without it), and
  // why; its journal entries are then reported with that reason.
  void note_plugin_failure(const std::string& plugin, std::string why);
  std::optional<std::string> plugin_failure(const std::string& plugin) const;

  const Kind* find(std::string_view name) const;
  const std::vector<Kind>& kinds() const { return kinds_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<Kind> kinds_;
  std::vector<std::string> names_;
  std::map<std::string, std::string> plugin_failures_;
};

}  // namespace rxerun
