#include "app/run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <variant>

#include "app/cli_vm.h"
#include "app/placement.h"
#include "app/plugins.h"
#include "app/run_lanes.h"
#include "app/run_ledger.h"
#include "app/run_plan.h"
#include "app/suite.h"
#include "base/output.h"
#include "base/result.h"
#include "base/version.h"
#include "engine/exit_code.h"
#include "engine/lab_check.h"
#include "engine/loader.h"
#include "sys/host_info.h"
#include "vm/kernel/kernels.h"

namespace rxerun {

bool want_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return false;
  return sys::is_terminal(1);
}

bool want_progress(const RunCommandOptions& o) {
  if (o.quiet) return false;
  if (o.progress) return true;
  const char* term = std::getenv("TERM");
  return sys::is_terminal(1) && !(term && std::string(term) == "dumb");
}

TerminalStyle terminal_style(const RunCommandOptions& o) {
  return {want_color(o.color),
          o.quiet     ? Verbosity::Quiet
          : o.verbose ? Verbosity::Verbose
                      : Verbosity::Normal,
          want_progress(o)};
}

void UnusedVars::add(const std::map<std::string, std::string>& unused) {
  if (!unused_) {
    unused_ = unused;
    return;
  }
  std::erase_if(*unused_, [&](const auto& kv) { return !unused.count(kv.first); });
}

void UnusedVars::show() const {
  if (unused_)
    for (const auto& [name, warning] : *unused_) print(stderr, "{}\n", warning);
}

LoadResult load_result(const std::string& file, Registry& registry, const CommonOptions& common, bool plugins_may_fail,
                       const LoadRequest& request) {
  LoadOptions lo;
  lo.var_files = common.var_files;
  for (const auto& kv : common.vars) lo.var_overrides[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  lo.load_plugin = [&registry](const std::string& path) { return load_plugin(path, registry); };
  lo.plugins_may_fail = plugins_may_fail;
  LoadResult r = load_scenario(file, registry, lo);
  // The lab as a whole, before anything boots or changes; not for cleanup,
  // which must go on whatever the scenario holds.
  if (r.scenario && !plugins_may_fail) {
    LabSite site = lab_site(*r.scenario, registry, request.where);
    if (request.in_guest) site.kernels.clear();
    Diagnostics problems = check_lab(*r.scenario, registry, site);
    if (request.problems) {
      *request.problems = std::move(problems);
    } else if (!problems.empty()) {
      r.diagnostics = std::move(problems);
      r.scenario.reset();
    }
  }
  return r;
}

std::optional<Scenario> load(const std::string& file, Registry& registry, const CommonOptions& common,
                             bool plugins_may_fail, const LoadRequest& request) {
  return loaded(load_result(file, registry, common, plugins_may_fail, request), common, request);
}

std::optional<Scenario> loaded(LoadResult r, const CommonOptions& common, const LoadRequest& request) {
  for (const auto& d : r.warnings) print(stderr, "{}:{}:{}: warning: {}\n", d.file, d.mark.line, d.mark.col, d.message);
  for (const auto& d : r.diagnostics) print(stderr, "{}\n", d.to_string());
  if (request.unused && !common.handed_on) {
    request.unused->add(r.unused_vars);
  } else if (!common.handed_on) {
    UnusedVars mine;
    mine.add(r.unused_vars);
    mine.show();
  }
  if (!r.diagnostics.empty()) return std::nullopt;
  return r.scenario;
}

std::optional<Journal> open_journal(const std::string& scenario) {
  auto journal = Journal::open(default_state_dir(), scenario);
  if (!journal) {
    print(stderr, "rxerun: {}\n", error_text(journal.error()));
    return std::nullopt;
  }
  spdlog::debug("journal {}", journal->path());
  if (int n = journal->dropped_from_earlier_boot())
    print(stdout, "journal {} is from an earlier boot: its {} change{} went with that boot; discarded\n",
          journal->path(), n, n == 1 ? "" : "s");
  return std::move(journal).value();
}

nlohmann::json host_record() {
  nlohmann::json host = sys::host_facts();
  host["rxerun"] = RXERUN_VERSION;
  return host;
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {

// Prints why the run does not start; its exit code.
int refuse_run(const Refusal& refusal) {
  print(stderr, "rxerun: {}\n", refusal.message);
  return refusal.exit_code;
}

// Every scenario, read and checked before anything runs: bad input touches
// nothing. nullopt when one is invalid (its diagnostics printed).
std::optional<std::vector<Scenario>> load_all(const std::vector<std::string>& files, Registry& registry,
                                              const CommonOptions& common, const PlacementRequest& where,
                                              bool in_guest) {
  std::vector<Scenario> scenarios;
  bool invalid = false;
  UnusedVars unused;
  for (const auto& f : files) {
    auto s = load(f, registry, common, false, LoadRequest{.where = where, .unused = &unused, .in_guest = in_guest});
    if (s)
      scenarios.push_back(std::move(*s));
    else
      invalid = true;
  }
  unused.show();
  if (invalid) return std::nullopt;
  return scenarios;
}

// The lab kernels the runs may use: a kernel of one's own (its
// configuration checked against what every scenario needs before anything
// boots, installed once, always the lab VM), else the prepared ones (none
// with --host). rxerun's exit code when a kernel of one's own cannot be
// used (the reason printed).
std::variant<std::vector<vm::PreparedKernel>, int> lab_kernels(const RunCommandOptions& o, bool own_kernel,
                                                               const std::vector<Scenario>& scenarios,
                                                               const Registry& registry) {
  std::vector<vm::PreparedKernel> prepared;
  if (own_kernel) {
    for (const auto& s : scenarios) {
      auto own = own_lab_kernel(s, registry, o.kernel, o.modules, o.quiet);
      if (const int* code = std::get_if<int>(&own)) return *code;
      prepared = {std::get<vm::PreparedKernel>(own)};
    }
  } else if (!o.host) {
    prepared = vm::prepared_kernels(vm::search_dirs());
  }
  return prepared;
}

bool names_a_directory(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& arg) { return std::filesystem::is_directory(arg); });
}

// The end of a run: a suite's summary table (also with -q, "only failures
// and the summary"; the lab VM's guest leaves it to the host, which has
// every run), the reports, and the exit code: the worst of the runs' and
// the reports', 130 when a run was interrupted, whatever the others said.
int finish_runs(const RunCommandOptions& o, const RunPlan& plan, const RunLedger& ledger) {
  const SuiteReport report = ledger.report(plan.suite);
  if (plan.suite && o.suite_position.empty()) print_suite_summary(stdout, report, want_color(o.color));
  const int written = write_reports(plan.reports, report, false, o.output_dir);
  int code = worse_exit_code(report.exit_code, written);
  for (const auto& r : report.runs)
    if (r.interrupted) code = kExitInterrupted;
  return code;
}

}  // namespace

int cmd_run(const RunCommandOptions& o, Registry& registry) {
  // Bad options are refused before any file is read, in the order plan_runs
  // checks them; a directory without scenarios between --report and the rest.
  if (const auto targets = read_report_targets(o.reports); const auto* refused = std::get_if<Refusal>(&targets))
    return refuse_run(*refused);
  const auto files = expand_scenario_args(o.scenarios);
  if (!files) return refuse_run({files.error().message});
  const auto request = read_run_request(o);
  if (const auto* refused = std::get_if<Refusal>(&request)) return refuse_run(*refused);
  const auto scenarios =
      load_all(*files, registry, o.common,
               PlacementRequest{.force_vm = o.vm,
                                .force_host = o.host,
                                .kernel = o.kernel.empty() ? std::nullopt : std::optional<std::string>(o.kernel)},
               !o.lab_kernel.empty() || !o.guest_output.empty());
  if (!scenarios) return kExitUsage;
  const auto kernels = lab_kernels(o, std::get<RunRequest>(request).own_kernel, *scenarios, registry);
  if (const int* code = std::get_if<int>(&kernels)) return *code;
  const auto& prepared = std::get<std::vector<vm::PreparedKernel>>(kernels);

  const PlanInputs inputs{.scenarios = *scenarios,
                          .prepared = prepared,
                          .host = o.vm || o.host ? HostAbilities{} : HostAbilities::probe(),
                          .directory = names_a_directory(o.scenarios)};
  const auto planned = plan_runs(o, inputs, registry);
  if (const auto* refused = std::get_if<Refusal>(&planned)) return refuse_run(*refused);
  const RunPlan& plan = std::get<RunPlan>(planned);

  RunLedger ledger(plan.runs.size(), o.fail_fast);
  const PlanContext context{o, plan, *scenarios, prepared, registry};
  run_host_lanes(context, ledger);
  run_lab_vm_lanes(context, ledger);
  return finish_runs(o, plan, ledger);
}

}  // namespace rxerun
