#include "sys/recording/system.h"

#include <fmt/format.h>

#include <cerrno>

#include "base/strings.h"

namespace rxerun::sys {

void ActionLog::record(PlannedAction action) {
  if (!netns_.empty() && !action.shell.empty())
    action.shell = shell_join({"ip", "netns", "exec", netns_}) + " " + action.shell;
  actions_.push_back(std::move(action));
}

void ActionLog::record_anywhere(std::string what, std::string shell) {
  actions_.push_back(PlannedAction{std::move(what), std::move(shell)});
}

std::vector<PlannedAction> ActionLog::take() {
  std::vector<PlannedAction> out;
  out.swap(actions_);
  return out;
}

std::string decimal_text(double value) {
  std::string s = fmt::format("{:.3f}", value);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

bool absent_from_plan(const Error& model_error) {
  switch (model_error.code) {
    case ENODEV:
    case ENOENT:
    case ESRCH:
    case EADDRNOTAVAIL: return true;
    default: return false;
  }
}

RecordingSystem::RecordingSystem() = default;

}  // namespace rxerun::sys
