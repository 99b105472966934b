#include "sys/model/kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/strings.h"

namespace rxerun::sys {

std::string echo_into_attr(const std::string& value, const std::string& file) {
  return "echo " + shell_quote(value) + " > " + shell_quote(file);
}

Result<void> ModelKernel::act(std::string_view service, std::string_view op, std::string_view arg,
                              const std::vector<Refusal>& refusals, const std::function<void()>& change,
                              std::string what, std::string shell) {
  if (auto f = fault(op, arg)) return *f;
  const auto refusal = std::find_if(refusals.begin(), refusals.end(), [](const Refusal& r) { return r.when; });
  if (refusal != refusals.end()) {
    if (const Error e = make_error(refusal->why, refusal->code); refused(e)) return e;
  } else {
    change();
  }
  did_anywhere(service, std::move(what), std::move(shell));
  return {};
}

void ModelKernel::did(std::string_view service, std::string what, std::string shell) {
  if (!netns.empty() && !shell.empty()) shell = shell_join({"ip", "netns", "exec", netns}) + " " + shell;
  did_anywhere(service, std::move(what), std::move(shell));
}

void ModelKernel::did_anywhere(std::string_view service, std::string what, std::string shell) {
  actions.push_back({std::string(service), std::move(what), std::move(shell)});
}

void ModelKernel::looked(std::string_view service, std::string what, std::string shell) {
  did(service, std::move(what), std::move(shell));
  actions.back().read = true;
}

void ModelKernel::record(PlannedAction action) {
  did("", std::move(action.what), std::move(action.shell));
}

std::vector<PlannedAction> ModelKernel::take() {
  std::vector<PlannedAction> out;
  for (; taken_ < actions.size(); ++taken_) out.push_back({actions[taken_].what, actions[taken_].shell});
  return out;
}

std::vector<std::string> ModelKernel::commands(std::initializer_list<std::string_view> services) const {
  std::vector<std::string> out;
  for (const auto& a : actions)
    if (std::find(services.begin(), services.end(), a.service) != services.end())
      out.push_back(a.shell.empty() ? a.what : a.shell);
  return out;
}

std::vector<std::string> ModelKernel::changes() const {
  // Every service but these keeps kernel state: a new one counts without being listed.
  static constexpr std::string_view kNoState[] = {"captures", "clock", "ping", "tools", "verbs"};
  std::vector<std::string> out;
  for (const auto& a : actions)
    if (!a.read && std::find(std::begin(kNoState), std::end(kNoState), a.service) == std::end(kNoState))
      out.push_back(a.shell.empty() ? a.what : a.shell);
  return out;
}

void ModelKernel::fail(std::string op, int code, std::string arg, int at, int times, std::string message) {
  faults.push_back({std::move(op), std::move(arg), code, at, times, std::move(message)});
}

std::optional<Error> ModelKernel::fault(std::string_view op, std::string_view arg) {
  for (auto& f : faults) {
    if (f.op != op || !arg.starts_with(f.arg)) continue;
    ++f.seen;
    if (f.seen >= f.at && (f.times == 0 || f.seen < f.at + f.times))
      return make_error(f.message.empty()
                            ? fmt::format("{}{}{}: {}", op, arg.empty() ? "" : " ", arg, std::strerror(f.code))
                            : f.message,
                        f.code);
  }
  return std::nullopt;
}

bool ModelKernel::refused(const Error& e) const {
  if (!open_world) return true;
  switch (e.code) {
    case ENODEV:
    case ENOENT:
    case ESRCH:
    case EADDRNOTAVAIL: return false;
    default: return true;
  }
}

std::string decimal_text(double value) {
  std::string s = fmt::format("{:.3f}", value);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace rxerun::sys
