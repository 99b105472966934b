// module: loads a kernel module with its dependencies and parameters
// (libkmod, as `modprobe NAME KEY=VALUE...` would, without running it).
// Undo unloads what the step loaded, users first, once nothing uses it: a
// module something else still holds stays loaded and is reported
// (steps/common/modules.h).
//
// A module loaded already keeps its parameters: asked for other values than
// those it shows, the step is an error; otherwise it goes on, `loaded: false`.

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "base/try.h"
#include "base/utf8.h"
#include "steps/common/journal_record.h"
#include "steps/common/modules.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

// A parameter's name as the kernel takes it, and a value without the
// characters that would split the option string.
bool valid_parameter_name(const std::string& key) {
  return !key.empty() && key.size() < 64 && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

bool valid_parameter_value(const std::string& value) {
  return value.find_first_of(" \t\n\"") == std::string::npos;
}

// A parameter's value as the kernel takes it: booleans as 1 or 0 (it reads
// no "true"), anything else as written.
std::string parameter_text(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return scalar_text(v);
}

void validate_module(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  if (params.contains("name") && params["name"].is_string() && !is_module_name(params["name"].get<std::string>()))
    complain("name", fmt::format("'{}' is not a kernel module name (letters, digits, _ and -; as lsmod shows it)",
                                 excerpt(params["name"].get<std::string>())));
  if (!params.contains("params") || !params["params"].is_object()) return;
  for (const auto& [key, value] : params["params"].items()) {
    if (!valid_parameter_name(key))
      complain("params." + key, fmt::format("'{}' is not a module parameter name", excerpt(key)));
    else if (!valid_parameter_value(parameter_text(value)))
      complain("params." + key, "a module parameter's value has no spaces, tabs, newlines or quotes");
  }
}

StepResult run_module(const Params& params, StepContext& ctx) {
  const std::string name = params.str("name");
  std::string options;
  if (params.has("params"))
    for (const auto& [key, value] : params.at("params").items())
      options += (options.empty() ? "" : " ") + key + "=" + parameter_text(value);
  std::vector<std::string> hints;
  auto loaded = load_modules(ctx, {{.name = name, .params = options}}, "once nothing uses it", &hints);
  if (!loaded) {
    StepResult r = loaded.error().code == ENOENT
                       ? StepResult::error("this kernel has no module " + name + " (" + loaded.error().message + ")")
                       : StepResult::error(loaded.error().message);
    r.hints = hints;
    return r;
  }
  nlohmann::json facts = {{"name", name}, {"loaded", !loaded->empty()}};
  if (auto shown = ctx.sys().modules.parameters(name); shown) {
    for (const auto& [key, value] : *shown) facts["parameters." + key] = value;
  } else if (shown.error().code != ENOENT) {
    hints.push_back("its parameters cannot be read: " + shown.error().message);
  }
  StepResult r = StepResult::ok(std::move(facts));
  r.hints = std::move(hints);
  return r;
}

Result<nlohmann::json> undo_module(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto modules, read_record<ModulesRecord>(args, ctx));
  return unload_modules(modules, ctx, nullptr);
}

}  // namespace

Kind module_kind() {
  KindSpec spec;
  spec.name = "module";
  spec.needs = {Need::NetAdmin};
  spec.summary =
      "Load a kernel module with its dependencies and parameters; undo unloads what the step loaded once nothing "
      "uses it.";
  spec.params = {
      {.name = "name", .type = ParamType::String, .required = true, .help = "the module, as lsmod names it: null_blk"},
      {.name = "params",
       .type = ParamType::Map,
       .help = "its parameters: {nr_devices: 0} (a module loaded already must show these values)",
       .fields = {{.name = "value", .type = ParamType::Scalar}}},
  };
  spec.facts = {
      {"name", "the module"},
      {"loaded", "whether this step loaded it (false: it was loaded already, or built in)"},
      {"parameters.NAME", "each parameter the module shows (/sys/module/NAME/parameters), as text"},
      {.name = "modules_unloaded", .help = "at its revert: the modules unloaded", .when = kAtRevert},
      {.name = "modules_left", .help = "at its revert: modules it loaded that are still loaded", .when = kAtRevert},
      {.name = "left_for", .help = "at its revert: what still uses them", .when = kAtRevert},
  };
  spec.example = "- module: {name: null_blk, params: {nr_devices: 0}}\n";
  spec.validate = validate_module;
  spec.default_timeout = Duration{30'000};
  return Kind{std::move(spec), run_module, undo_module};
}

}  // namespace rxerun::steps
