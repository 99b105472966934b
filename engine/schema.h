#pragma once
// The JSON Schema of scenario files, generated from the step kinds'
// declarations (one source of truth). schemas/scenario.schema.json is this
// output, checked in; a test keeps the two equal.

#include <nlohmann/json.hpp>

#include "engine/registry.h"

namespace rxerun {

nlohmann::json scenario_schema(const Registry& registry);

}  // namespace rxerun
