#include "app/run_host.h"

#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "app/kernel_health.h"
#include "app/plugins.h"
#include "app/run.h"
#include "base/output.h"
#include "engine/exit_code.h"
#include "engine/runner.h"
#include "sys/kernel_log.h"
#include "sys/process.h"
#include "sys/real.h"
#include "vm/lab_vm.h"

namespace rxerun {

namespace {

// Whether a step of the scenario needs rdma_rxe or siw: then a failed run shows
// what the RDMA stack logged.
bool uses_rdma(const Scenario& scenario, const Registry& registry) {
  for (const auto& step : scenario.steps)
    if (const Kind* kind = registry.find(step.kind))
      for (Need n : kind->spec.needs)
        if (n == Need::RdmaRxe || n == Need::RdmaSiw) return true;
  return false;
}

RunReport journal_refused(const RunCommandOptions& o, const Scenario& scenario) {
  RunReport r;
  r.file = scenario.file;
  r.scenario = scenario.name;
  r.lab_kernel = o.lab_kernel;
  r.exit_code = kExitEnvironment;
  r.error = "cannot open the scenario's journal";
  return r;
}

RunOptions runner_options(const RunCommandOptions& o) {
  RunOptions ro;
  ro.keep = o.keep;
  ro.force = o.force;
  ro.only = o.common.only;
  ro.skip = o.common.skip;
  ro.output_dir = o.guest_output.empty() ? o.output_dir : o.guest_output;
  ro.outputs_return = !o.guest_output.empty();
  ro.kernel_health = parse_kernel_health_policy(o.kernel_health);
  return ro;
}

// The kernel's side of a failure: its release and what rdma_rxe, ib_core
// and rdma_cm logged during the run (since `log_since`), in the report and,
// for a failed run, on the terminal. In the lab VM the host side prints the
// guest's (the whole boot's) instead.
void add_rdma_kernel_messages(const RunCommandOptions& o, std::uint64_t log_since, RunReport& report) {
  const auto messages = sys::rdma_kernel_messages(log_since);
  report.host["kernel_messages"] = messages;
  const bool failed = report.exit_code == kExitFailed || report.exit_code == kExitEnvironment;
  if (!failed || o.quiet || std::getenv("RXERUN_IN_LAB_VM")) return;
  const std::string release = report.host.value("kernel", "?");
  if (messages.empty())
    print(stdout, "kernel {}: the RDMA stack logged nothing during the run\n", release);
  else
    print(stdout, "kernel {}: what the RDMA stack logged during the run:\n", release);
  for (const auto& line : messages) print(stdout, "  {}\n", line);
}

}  // namespace

RunReport run_on_host(const RunCommandOptions& o, const Scenario& scenario, Registry& registry) {
  auto journal = open_journal(scenario.name);
  if (!journal) return journal_refused(o, scenario);
  load_journal_plugins(*journal, registry);  // an earlier run's changes of plugin kinds, for preclean
  sys::RealSystem real;
  real.interrupt().bind_signals();
  sys::System& system = real.system();

  TerminalReporter terminal(stdout, terminal_style(o));
  const RunOptions ro = runner_options(o);
  const std::string started = now_iso8601();
  const std::uint64_t log_since = sys::kernel_log_now();
  MultiReporter reporters;
  reporters.add(terminal);
  const auto running_note = guest_running_note(o.guest_output);  // in the lab VM: for a kernel that dies
  if (running_note) reporters.add(*running_note);
  Runner runner(registry, system, *journal, reporters, ro);
  RunReport report = runner.run(scenario);
  report.started_at = started;
  report.lab_kernel = o.lab_kernel;
  report.host = host_record();
  if (uses_rdma(scenario, registry)) add_rdma_kernel_messages(o, log_since, report);
  if (o.keep && !journal->pending().empty())
    print(stdout, "lab kept; remove it with: rxerun cleanup {}\n", scenario.file);
  return report;
}

namespace {

// Waits for the child to end, passing Ctrl-C on to its process group once.
sys::ExitStatus await_child(sys::Child& child, const sys::Interrupt& interrupt) {
  bool passed_on = false;
  std::optional<sys::ExitStatus> status;
  while (!(status = child.poll())) {
    pollfd p{.fd = interrupt.fd(), .events = POLLIN, .revents = 0};
    ::poll(&p, 1, 100);
    if (interrupt.requested() && !passed_on) {
      child.signal_group(interrupt.signal());
      passed_on = true;
    }
  }
  return *status;
}

// The one run the child's JSON report holds.
Result<RunReport> read_child_report(const std::string& path, const sys::ExitStatus& status) {
  std::ifstream in(path);
  if (!in) return make_error("the run ended (" + status.describe() + ") without its report");
  try {
    auto runs = run_reports_from_json(nlohmann::json::parse(in));
    if (!runs || runs->size() != 1)
      return make_error("cannot read the run's report: " + (runs ? std::string("not one run") : runs.error().message));
    return std::move(runs->front());
  } catch (const std::exception& e) {
    return make_error(std::string("cannot read the run's report: ") + e.what());
  }
}

}  // namespace

RunReport run_in_child(const RunCommandOptions& o, const Scenario& scenario, const sys::Interrupt& interrupt) {
  auto failed = [&](std::string why) {
    RunReport r;
    r.file = scenario.file;
    r.scenario = scenario.name;
    r.description = scenario.description;
    r.lab_kernel = o.lab_kernel;
    r.exit_code = kExitEnvironment;
    r.error = std::move(why);
    print(stderr, "rxerun: {}: {}\n", scenario.name, r.error);
    return r;
  };
  auto dir = vm::ShareDir::create();
  if (!dir) return failed(dir.error().message);
  const std::string report = (dir->path() / "run.json").string();
  std::vector<std::string> argv{"/proc/self/exe", "run"};
  for (auto& arg : run_arguments(child_run_options(o, scenario.file, report, want_color(o.color), want_progress(o))))
    argv.push_back(std::move(arg));
  std::fflush(stdout);
  auto child = sys::spawn(argv, {.stdout_fd = STDOUT_FILENO, .stderr_fd = STDERR_FILENO});
  if (!child) return failed("cannot start the run: " + child.error().message);
  const sys::ExitStatus status = await_child(*child, interrupt);
  auto run = read_child_report(report, status);
  if (!run) return failed(run.error().message);
  return std::move(*run);
}

}  // namespace rxerun
