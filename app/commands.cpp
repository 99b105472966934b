#include "app/commands.h"

#include <algorithm>
#include <cstdio>

#include "app/plan.h"
#include "app/plugins.h"
#include "app/run.h"
#include "base/output.h"
#include "engine/checks.h"
#include "engine/exit_code.h"
#include "engine/journal.h"
#include "engine/reference.h"
#include "engine/runner.h"
#include "engine/schema.h"
#include "sys/model/system.h"
#include "sys/real.h"

namespace rxerun {

int cmd_validate(const std::vector<std::string>& files, const CommonOptions& common, Registry& registry) {
  int code = kExitOk;
  UnusedVars unused;
  for (const auto& f : files) {
    auto s = load(f, registry, common, false, &unused);
    if (!s) {
      code = kExitUsage;
      continue;
    }
    print(stdout, "{}: ok: scenario '{}', {} step{}\n", f, s->name, s->steps.size(), s->steps.size() == 1 ? "" : "s");
  }
  unused.show();
  return code;
}

int cmd_plan(const std::string& file, const CommonOptions& common, Registry& registry) {
  auto scenario = load(file, registry, common);
  if (!scenario) return kExitUsage;
  sys::ModelSystem model;
  sys::make_plan_world(model);
  Journal journal = Journal::in_memory();
  PlanReporter printer(stdout, model.kernel);
  RunOptions ro;
  ro.only = common.only;
  ro.skip = common.skip;
  ro.planning = true;
  Runner runner(registry, model.system, journal, printer, ro);
  runner.run(*scenario);
  return kExitOk;
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
