#include "app/commands.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/placement.h"
#include "app/plan.h"
#include "app/plugins.h"
#include "app/run.h"
#include "app/suite.h"
#include "base/output.h"
#include "engine/checks.h"
#include "engine/exit_code.h"
#include "engine/journal.h"
#include "engine/loader.h"
#include "engine/reference.h"
#include "engine/runner.h"
#include "engine/schema.h"
#include "sys/model/system.h"
#include "sys/real.h"

namespace rxerun {

namespace {

// The files of `args` (a directory: its *.yaml, sorted, as `run` takes
// them), or nullopt with the reason printed.
std::optional<std::vector<std::string>> scenario_files(const std::vector<std::string>& args) {
  auto files = expand_scenario_args(args);
  if (!files) {
    print(stderr, "rxerun: {}\n", files.error().message);
    return std::nullopt;
  }
  return std::move(*files);
}

nlohmann::json diagnostic_json(const Diagnostic& d, std::string_view severity) {
  return {{"file", d.file}, {"line", d.mark.line}, {"col", d.mark.col}, {"severity", severity}, {"message", d.message}};
}

// `validate --json`: one file's result (docs/running.md, "validate --json").
nlohmann::json validation_json(const std::string& file, const LoadResult& r) {
  nlohmann::json diagnostics = nlohmann::json::array();
  for (const auto& d : r.diagnostics) diagnostics.push_back(diagnostic_json(d, "error"));
  for (const auto& d : r.warnings) diagnostics.push_back(diagnostic_json(d, "warning"));
  nlohmann::json j = {{"file", file}, {"valid", r.scenario.has_value()}, {"diagnostics", diagnostics}};
  if (r.scenario) {
    j["scenario"] = r.scenario->name;
    j["steps"] = r.scenario->steps.size();
  }
  return j;
}

}  // namespace

int cmd_validate(const std::vector<std::string>& args, const CommonOptions& common, bool json,
                 const PlacementRequest& where, Registry& registry) {
  const auto files = scenario_files(args);
  if (!files) return kExitUsage;
  int code = kExitOk;
  nlohmann::json results = nlohmann::json::array();
  UnusedVars unused;
  for (const auto& f : *files) {
    if (json) {
      const LoadResult r = load_result(f, registry, common, false, LoadRequest{.where = where});
      if (!common.handed_on) unused.add(r.unused_vars);
      if (!r.scenario) code = kExitUsage;
      results.push_back(validation_json(f, r));
      continue;
    }
    auto s = load(f, registry, common, false, LoadRequest{.where = where, .unused = &unused});
    if (!s) {
      code = kExitUsage;
      continue;
    }
    print(stdout, "{}: ok: scenario '{}', {} step{}\n", f, s->name, s->steps.size(), s->steps.size() == 1 ? "" : "s");
  }
  if (json) print(stdout, "{}\n", nlohmann::json{{"valid", code == kExitOk}, {"files", results}}.dump(2));
  unused.show();
  return code;
}

int cmd_plan(const std::vector<std::string>& args, const CommonOptions& common, const PlacementRequest& where,
             Registry& registry) {
  const auto files = scenario_files(args);
  if (!files) return kExitUsage;
  int code = kExitOk;
  for (std::size_t i = 0; i < files->size(); ++i) {
    if (i > 0) print(stdout, "\n");
    code = worse_exit_code(code, plan_one((*files)[i], common, where, registry));
  }
  return code;
}

int plan_one(const std::string& file, const CommonOptions& common, const PlacementRequest& where, Registry& registry) {
  // The lab check's problems are shown in place, under their steps.
  Diagnostics problems;
  const LoadRequest request{.where = where, .problems = &problems};
  LoadResult r = load_result(file, registry, common, false, request);
  // So are the loader's, in what it could read: the steps they are in are
  // shown, not previewed.
  std::vector<int> written_wrong;
  if (!r.scenario && r.partial) {
    problems = std::move(r.diagnostics);
    r.diagnostics.clear();
    r.scenario = std::move(r.partial);
    for (int step : diagnostic_steps(*r.scenario, problems))
      if (step >= 0) written_wrong.push_back(step);
  }
  auto scenario = loaded(std::move(r), common, request);
  if (!scenario) return kExitUsage;
  sys::ModelSystem model;
  sys::make_plan_world(model);
  Journal journal = Journal::in_memory();
  PlanReporter printer(stdout, model.kernel, where_words(*scenario, registry, where), std::move(problems));
  RunOptions ro;
  ro.only = common.only;
  ro.skip = common.skip;
  ro.planning = true;
  ro.written_wrong = std::move(written_wrong);
  Runner runner(registry, model.system, journal, printer, ro);
  runner.run(*scenario);
  return printer.problems() ? kExitUsage : kExitOk;
}

int cmd_cleanup(const std::string& file, const RunCommandOptions& o, Registry& registry) {
  // A plugin that is gone must not stop the cleanup of everything else.
  auto scenario = load(file, registry, o.common, /*plugins_may_fail=*/true);
  if (!scenario) return kExitUsage;
  auto journal = open_journal(scenario->name);
  if (!journal) return kExitEnvironment;
  load_journal_plugins(*journal, registry);
  sys::RealSystem real;
  real.interrupt().bind_signals();
  sys::System& system = real.system();
  TerminalReporter terminal(stdout, terminal_style(o));
  Runner runner(registry, system, *journal, terminal);
  CleanupReport report = runner.cleanup(scenario->name, "cleanup", &*scenario);
  if (report.interrupted) return kExitInterrupted;
  return report.clean() ? kExitOk : kExitResidue;
}

int cmd_steps(const std::string& kind_name, bool markdown, const Registry& registry) {
  if (markdown) {
    if (!kind_name.empty()) {
      print(stderr, "rxerun: steps --markdown describes every kind; leave out KIND\n");
      return kExitUsage;
    }
    print(stdout, "{}", kinds_markdown(registry));
    return kExitOk;
  }
  if (kind_name.empty()) {
    std::size_t width = 0;
    for (const auto& k : registry.kinds()) width = std::max(width, k.spec.name.size());
    for (const auto& k : registry.kinds()) print(stdout, "{:<{}}  {}\n", k.spec.name, width, k.spec.summary);
    return kExitOk;
  }
  const Kind* k = registry.find(kind_name);
  if (!k) {
    print(stderr, "rxerun: unknown step kind '{}'{}\n", kind_name, did_you_mean(kind_name, registry.names()));
    return kExitUsage;
  }
  print(stdout, "{}", describe_kind(k->spec));
  if (!k->plugin.empty()) print(stdout, "\nplugin: {}\n", k->plugin);
  return kExitOk;
}

int cmd_schema(const Registry& registry) {
  print(stdout, "{}\n", scenario_schema(registry).dump(2));
  return kExitOk;
}

}  // namespace rxerun
