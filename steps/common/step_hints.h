#pragma once
// Hints a step gathers on its way (a module that was loaded already, a file
// served as it was found) belong to its result, whatever the outcome. The
// step's body then returns plainly on every path, and the step adds them
// once, after the result's own:
//
//   StepResult run_target(const Params& params, StepContext& ctx) {
//     std::vector<std::string> hints;
//     StepResult r = build_target(params, ctx, hints);
//     return with_hints(std::move(r), hints);
//   }

#include <string>
#include <utility>
#include <vector>

#include "engine/step.h"

namespace rxerun::steps {

inline StepResult with_hints(StepResult r, const std::vector<std::string>& hints) {
  r.hints.insert(r.hints.end(), hints.begin(), hints.end());
  return r;
}

}  // namespace rxerun::steps
