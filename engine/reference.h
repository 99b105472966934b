#pragma once
// A step kind described for people, from its declaration (KindSpec): the
// text `rxerun steps KIND` prints, and the Markdown reference of every kind
// that ends docs/scenarios.md (`rxerun steps --markdown`), and the manual
// page's section on the kinds. Both read the
// same data the loader and the JSON Schema read, so none can drift.

#include <string>

#include "engine/kind.h"
#include "engine/registry.h"

namespace rxerun {

// One kind: summary, parameters, facts, timeout and example, as plain text.
std::string describe_kind(const KindSpec& spec);

// Every kind of `registry`, in its order, as Markdown sections.
std::string kinds_markdown(const Registry& registry);

// The same as the manual page's subsections (roff, the man macros), for the
// section STEP KINDS of docs/rxerun.1.
std::string kinds_manual(const Registry& registry);

}  // namespace rxerun
