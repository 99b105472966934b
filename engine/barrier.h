#pragma once
// The exception barrier between the engine and what it calls (kinds, the
// journal, reporters): an exception never skips cleanup.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <type_traits>

#include "base/result.h"
#include "engine/step.h"

namespace rxerun {

// The exception barrier: whatever a kind or the journal throws becomes the
// error of that step, undo or preclean, and the run goes on to its cleanup.
// `what` names the call for the message ("step kind 'veth'").
template <class F>
auto guarded(std::string_view what, F&& call, std::string_view on_bad_json = {}) -> decltype(call()) {
  using R = decltype(call());
  std::string message;
  try {
    return call();
  } catch (const nlohmann::json::exception& e) {
    message = on_bad_json.empty() ? fmt::format("{} failed unexpectedly: {}", what, e.what())
                                  : fmt::format("{}: {}", on_bad_json, e.what());
  } catch (const std::exception& e) {
    message = fmt::format("{} failed unexpectedly: {}", what, e.what());
  } catch (...) {
    message = fmt::format("{} failed unexpectedly", what);
  }
  Error error = make_error(std::move(message));
  if constexpr (std::is_same_v<R, StepResult>) {
    return StepResult::error(error);
  } else {
    return R(std::move(error));
  }
}

// What an undo's exception from nlohmann::json most likely means.
inline constexpr std::string_view kUnreadableArgs =
    "cannot read this journal entry's args (written by another rxerun version, or edited?)";

}  // namespace rxerun
