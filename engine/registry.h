#pragma once
// The step kinds known to this binary. Built once from the explicit list in
// steps/ (by app/main.cpp, or by a test from its own fakes); sorted by name,
// duplicates rejected at construction.

#include <span>
#include <string>
#include <vector>

#include "engine/kind.h"

namespace rxerun {

class Registry {
 public:
  // Throws std::logic_error on a duplicate or empty name: a programming error.
  explicit Registry(std::vector<Kind> kinds);

  const Kind* find(std::string_view name) const;
  const std::vector<Kind>& kinds() const { return kinds_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<Kind> kinds_;
  std::vector<std::string> names_;
};

}  // namespace rxerun
