#include "app/run.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "app/cli_vm.h"
#include "app/kernel_health.h"
#include "app/nodes.h"
#include "app/placement.h"
#include "app/plugins.h"
#include "app/prefixed_lines.h"
#include "app/suite.h"
#include "base/output.h"
#include "base/version.h"
#include "engine/exit_code.h"
#include "engine/loader.h"
#include "engine/runner.h"
#include "sys/host_info.h"
#include "sys/interrupt.h"
#include "sys/kernel_log.h"
#include "sys/process.h"
#include "sys/real.h"
#include "vm/kernel/kernels.h"
#include "vm/lab_vm.h"

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

std::optional<Scenario> load(const std::string& file, Registry& registry, const CommonOptions& common,
                             bool plugins_may_fail) {
  LoadOptions lo;
  for (const auto& kv : common.vars) lo.var_overrides[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  lo.load_plugin = [&registry](const std::string& path) { return load_plugin(path, registry); };
  lo.plugins_may_fail = plugins_may_fail;
  LoadResult r = load_scenario(file, registry, lo);
  for (const auto& d : r.warnings) print(stderr, "{}:{}:{}: warning: {}\n", d.file, d.mark.line, d.mark.col, d.message);
  for (const auto& d : r.diagnostics) print(stderr, "{}\n", d.to_string());
  return r.scenario;
}

std::optional<Journal> open_journal(const std::string& scenario) {
  auto journal = Journal::open(default_state_dir(), scenario);
  if (!journal) {
    print(stderr, "rxerun: {}{}\n", journal.error().message,
          journal.error().code ? std::string(": ") + std::strerror(journal.error().code) : "");
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

// Whether a step of the scenario needs rdma_rxe or siw: then a failed run shows
// what the RDMA stack logged.
bool uses_rdma(const Scenario& scenario, const Registry& registry) {
  for (const auto& step : scenario.steps)
    if (const Kind* kind = registry.find(step.kind))
      for (Need n : kind->spec.needs)
        if (n == Need::RdmaRxe || n == Need::RdmaSiw) return true;
  return false;
}

// One run on this machine's kernel: preclean, steps, cleanup.
RunReport run_on_host(const RunCommandOptions& o, const Scenario& scenario, Registry& registry) {
  auto journal = open_journal(scenario.name);
  if (!journal) {
    RunReport r;
    r.file = scenario.file;
    r.scenario = scenario.name;
    r.lab_kernel = o.lab_kernel;
    r.exit_code = kExitEnvironment;
    r.error = "cannot open the scenario's journal";
    return r;
  }
  load_journal_plugins(*journal, registry);  // an earlier run's changes of plugin kinds, for preclean
  sys::RealSystem real;
  real.interrupt().bind_signals();
  sys::System& system = real.system();

  TerminalReporter terminal(stdout, terminal_style(o));
  RunOptions ro;
  ro.keep = o.keep;
  ro.force = o.force;
  ro.only = o.common.only;
  ro.skip = o.common.skip;
  ro.output_dir = o.guest_output.empty() ? o.output_dir : o.guest_output;
  ro.outputs_return = !o.guest_output.empty();
  const std::string started = now_iso8601();
  const std::uint64_t log_since = sys::kernel_log_now();
  MultiReporter reporters;
  reporters.add(terminal);
  const auto running_note = guest_running_note(o.guest_output);  // in the lab VM: for a kernel that dies
  if (running_note) reporters.add(*running_note);
  ro.kernel_health = parse_kernel_health_policy(o.kernel_health);
  Runner runner(registry, system, *journal, reporters, ro);
  RunReport report = runner.run(scenario);
  report.started_at = started;
  report.lab_kernel = o.lab_kernel;
  report.host = host_record();
  if (uses_rdma(scenario, registry)) {
    // The kernel's side of a failure: its release and what rdma_rxe,
    // ib_core and rdma_cm logged during the run. In the lab VM the host
    // side prints the guest's (the whole boot's) instead.
    const auto messages = sys::rdma_kernel_messages(log_since);
    report.host["kernel_messages"] = messages;
    const bool failed = report.exit_code == kExitFailed || report.exit_code == kExitEnvironment;
    if (failed && !o.quiet && !std::getenv("RXERUN_IN_LAB_VM")) {
      const std::string release = report.host.value("kernel", "?");
      if (messages.empty())
        print(stdout, "kernel {}: the RDMA stack logged nothing during the run\n", release);
      else
        print(stdout, "kernel {}: what the RDMA stack logged during the run:\n", release);
      for (const auto& line : messages) print(stdout, "  {}\n", line);
    }
  }
  if (o.keep && !journal->pending().empty())
    print(stdout, "lab kept; remove it with: rxerun cleanup {}\n", scenario.file);
  return report;
}

// One run of a suite on this kernel, in a child rxerun of its own: each
// scenario starts as it would alone, with nothing left over from the one
// before it in the libraries' process state (librdmacm learns the RDMA
// devices once per process, and a suite's scenarios create and delete
// them), and a run that crashes ends only itself. Its output goes straight
// through; its JSON report comes back through a private directory. Ctrl-C
// is passed on to it (it leads its own process group), and the suite stops
// once it has cleaned up.
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
  std::vector<std::string> argv{"/proc/self/exe", "run",     scenario.file,
                                "--host",         "--color", want_color(o.color) ? "always" : "never"};
  for (const auto& p : o.common.plugins) argv.insert(argv.end(), {"--plugin", p});
  for (const auto& v : o.common.vars) argv.insert(argv.end(), {"--var", v});
  for (const auto& t : o.common.only) argv.insert(argv.end(), {"--only", t});
  for (const auto& t : o.common.skip) argv.insert(argv.end(), {"--skip", t});
  if (o.force) argv.push_back("--force");
  if (o.verbose) argv.push_back("-v");
  if (o.quiet) argv.push_back("-q");
  if (want_progress(o)) argv.push_back("--progress");
  if (!o.lab_kernel.empty()) argv.insert(argv.end(), {"--lab-kernel", o.lab_kernel});
  if (!o.kernel_health.empty()) argv.insert(argv.end(), {"--kernel-health", o.kernel_health});
  if (!o.output_dir.empty()) argv.insert(argv.end(), {"--output-dir", o.output_dir});
  if (!o.guest_output.empty()) argv.insert(argv.end(), {"--guest-output", o.guest_output});
  argv.insert(argv.end(), {"--report", "json:" + report});
  std::fflush(stdout);
  auto child = sys::spawn(argv, {.stdout_fd = STDOUT_FILENO, .stderr_fd = STDERR_FILENO});
  if (!child) return failed("cannot start the run: " + child.error().message);
  bool passed_on = false;
  std::optional<sys::ExitStatus> status;
  while (!(status = child->poll())) {
    pollfd p{.fd = interrupt.fd(), .events = POLLIN, .revents = 0};
    ::poll(&p, 1, 100);
    if (interrupt.requested() && !passed_on) {
      child->signal_group(interrupt.signal());
      passed_on = true;
    }
  }
  std::ifstream in(report);
  if (!in) return failed("the run ended (" + status->describe() + ") without its report");
  try {
    auto runs = run_reports_from_json(nlohmann::json::parse(in));
    if (!runs || runs->size() != 1)
      return failed("cannot read the run's report: " + (runs ? std::string("not one run") : runs.error().message));
    return std::move(runs->front());
  } catch (const std::exception& e) {
    return failed(std::string("cannot read the run's report: ") + e.what());
  }
}

// One run of the suite: a scenario, and the lab kernel it runs on (none: the host).
struct PlannedRun {
  std::size_t scenario = 0;
  std::optional<vm::PreparedKernel> kernel;
  std::string unavailable;  // why it cannot run anywhere (then it is an error of its own)
  std::string wanted;       // with `unavailable`: the lab kernel it was to run on, if one was named
  std::string placement;    // the line that says why it runs in the lab VM
};

// "3/8" -> 3 and 8; nothing for a malformed one (the host wrote it).
std::pair<std::size_t, std::size_t> parse_position(const std::string& text, std::size_t total) {
  if (auto shard = parse_shard(text)) return {shard->index, shard->count};
  return {1, total};
}

// A report for a run that did not happen.
RunReport not_run_report(const Scenario& scenario, const std::string& kernel, std::string why, bool error) {
  RunReport r;
  r.file = scenario.file;
  r.scenario = scenario.name;
  r.description = scenario.description;
  r.lab_kernel = kernel;
  r.error = std::move(why);
  r.not_run = !error;
  r.exit_code = error ? kExitEnvironment : kExitOk;
  return r;
}

// Writes every report target; a report that cannot be written makes a
// passing or failing run an error.
int write_reports(const std::vector<ReportTarget>& targets, const SuiteReport& suite, bool quietly) {
  int code = kExitOk;
  for (const auto& t : targets) {
    if (auto w = write_report(t, suite); !w) {
      if (!quietly) print(stderr, "rxerun: {}\n", w.error().message);  // it names the report and the reason
      code = kExitEnvironment;
    }
  }
  return code;
}

}  // namespace

int cmd_run(const RunCommandOptions& o, Registry& registry) {
  std::vector<ReportTarget> targets;
  for (const auto& spec : o.reports) {
    std::string why;
    auto t = parse_report_target(spec, &why);
    if (!t) {
      print(stderr, "rxerun: --report {}: {}\n", spec, why);
      return kExitUsage;
    }
    targets.push_back(*t);
  }
  auto files = expand_scenario_args(o.scenarios);
  if (!files) {
    print(stderr, "rxerun: {}\n", files.error().message);
    return kExitUsage;
  }
  const bool own_kernel = is_own_kernel_path(o.kernel) || !o.modules.empty();
  if (own_kernel && (o.host || !is_own_kernel_path(o.kernel))) {
    print(stderr, "rxerun: {}\n",
          o.host ? "--host runs on this machine's kernel: it takes no --kernel PATH"
                 : "--modules DIR goes with --kernel IMAGE");
    return kExitUsage;
  }
  auto kernels = parse_kernel_choice(own_kernel ? "" : o.kernel);
  if (!kernels) {
    print(stderr, "rxerun: {}\n", kernels.error().message);
    return kExitUsage;
  }
  std::optional<Shard> shard;
  if (!o.shard.empty()) {
    auto s = parse_shard(o.shard);
    if (!s) {
      print(stderr, "rxerun: {}\n", s.error().message);
      return kExitUsage;
    }
    shard = *s;
  }
  if (o.jobs == 0) {
    print(stderr, "rxerun: -j 0: at least one lab VM runs at a time\n");
    return kExitUsage;
  }
  // Every scenario is read and checked before anything runs: bad input
  // touches nothing.
  std::vector<Scenario> scenarios;
  bool invalid = false;
  for (const auto& f : *files) {
    auto s = load(f, registry, o.common);
    if (s)
      scenarios.push_back(std::move(*s));
    else
      invalid = true;
  }
  if (invalid) return kExitUsage;

  std::vector<vm::PreparedKernel> prepared;
  if (own_kernel) {
    // A kernel of one's own: its configuration checked against what every
    // scenario needs before anything boots, installed once, always the lab VM.
    for (const auto& s : scenarios) {
      auto own = own_lab_kernel(s, registry, o.kernel, o.modules, o.quiet);
      if (const int* code = std::get_if<int>(&own)) return *code;
      prepared = {std::get<vm::PreparedKernel>(own)};
    }
    kernels->labels = {prepared.front().label};
  } else if (!o.host) {
    prepared = vm::prepared_kernels(vm::search_dirs());
  }
  if (kernels->all) {
    if (prepared.empty()) {
      print(stderr, "rxerun: --kernel all: no lab kernel is prepared: run `rxerun vm setup`\n");
      return kExitEnvironment;
    }
    // Oldest first, as a matrix reads.
    for (auto it = prepared.rbegin(); it != prepared.rend(); ++it) kernels->labels.push_back(it->label);
  }
  if (o.host && kernels->labels.size() > 1) {
    print(stderr, "rxerun: --host runs on this machine's kernel: it cannot run a matrix of --kernel {}\n", o.kernel);
    return kExitUsage;
  }
  bool suite = files->size() > 1 || shard.has_value() || kernels->labels.size() > 1;
  for (const auto& arg : o.scenarios) suite |= std::filesystem::is_directory(arg);

  // The runs: each scenario on each of its kernels, in the order given.
  const HostAbilities host = o.vm || o.host ? HostAbilities{} : HostAbilities::probe();
  std::vector<PlannedRun> planned;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& s = scenarios[i];
    if (!s.nodes.empty()) {
      // Its nodes are lab VMs with the kernels it names (app/nodes.h): run
      // from here, never placed.
      const char* refused = o.host               ? "--host runs on this machine's kernel"
                            : !o.kernel.empty()  ? "--kernel chooses one kernel"
                            : !o.modules.empty() ? "--modules goes with a kernel of one's own"
                            : o.keep             ? "--keep cannot keep a lab in lab VMs"
                                                 : nullptr;
      if (refused) {
        print(stderr, "rxerun: {}: its nodes are lab VMs that name their own kernels: {}\n", s.file, refused);
        return kExitUsage;
      }
      planned.push_back(PlannedRun{.scenario = i});
      continue;
    }
    std::vector<std::optional<std::string>> wanted;
    if (!kernels->labels.empty())
      wanted.assign(kernels->labels.begin(), kernels->labels.end());
    else if (!s.vm_kernels.empty() && !o.host)  // on the host (the lab VM's guest too): its one kernel
      wanted.assign(s.vm_kernels.begin(), s.vm_kernels.end());
    else
      wanted.push_back(std::nullopt);  // the scenario's vm.kernel, else the newest
    suite |= wanted.size() > 1;
    for (const auto& k : wanted) {
      // A matrix runs in the lab VM even where the host could: the host has
      // one kernel, not the ones asked for.
      PlacementRequest where{.force_vm = o.vm || own_kernel || wanted.size() > 1, .force_host = o.host, .kernel = k};
      const Placement p = place(s, registry, where, prepared, host);
      PlannedRun run{.scenario = i};
      switch (p.where) {
        case Placement::Where::BadKernel: print(stderr, "rxerun: {}\n", p.message); return kExitUsage;
        case Placement::Where::Nowhere:
          run.unavailable = p.message;
          run.wanted = k.value_or(s.vm_kernel.value_or(""));
          break;
        case Placement::Where::Vm:
          run.kernel = p.kernel;
          run.placement = p.message;
          break;
        case Placement::Where::Host: break;
      }
      planned.push_back(std::move(run));
    }
  }
  const bool any_vm = std::any_of(planned.begin(), planned.end(), [](const PlannedRun& r) { return r.kernel; });
  if (o.keep && any_vm) {
    print(stderr, "rxerun: --keep cannot keep a lab in the lab VM: the VM is discarded after the run\n");
    return kExitUsage;
  }
  if (o.keep && suite) {
    print(stderr, "rxerun: --keep keeps one lab: run one scenario with it, not a suite\n");
    return kExitUsage;
  }
  if (!suite && planned.size() == 1 && !planned.front().unavailable.empty()) {
    print(stderr, "rxerun: {}\n", planned.front().unavailable);
    return kExitEnvironment;
  }
  if (shard) {
    std::vector<PlannedRun> part;
    for (std::size_t i = 0; i < planned.size(); ++i)
      if (in_shard(i, *shard)) part.push_back(std::move(planned[i]));
    planned = std::move(part);
  }

  // The order runs happen in: the host's first, then each lab kernel's in
  // one boot. The summary keeps the order of the arguments.
  std::vector<std::size_t> host_runs;
  std::vector<std::string> group_order;
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    if (!planned[i].kernel) {
      host_runs.push_back(i);
      continue;
    }
    const std::string& label = planned[i].kernel->label;
    if (!groups.count(label)) group_order.push_back(label);
    groups[label].push_back(i);
  }
  auto [first_position, total_runs] = o.suite_position.empty() ? std::pair<std::size_t, std::size_t>{1, planned.size()}
                                                               : parse_position(o.suite_position, planned.size());
  if (!o.suite_position.empty()) suite = true;

  std::vector<std::optional<RunReport>> results(planned.size());
  SuiteReport report;
  report.suite = suite;
  auto collect = [&]() {
    report.runs.clear();
    report.exit_code = kExitOk;
    for (const auto& r : results) {
      if (!r) continue;
      report.runs.push_back(*r);
      if (!r->not_run) report.exit_code = worse_exit_code(report.exit_code, r->exit_code);
    }
  };
  std::atomic<bool> stop{false};         // --fail-fast, or Ctrl-C
  std::atomic<bool> interrupted{false};  // Ctrl-C
  auto stop_reason = [&]() {
    return std::string(interrupted ? "not run: interrupted" : "not run: --fail-fast stopped the suite");
  };
  auto settle = [&](std::size_t i, RunReport r) {
    const bool bad = r.exit_code != kExitOk && !r.not_run;
    if (r.exit_code == kExitInterrupted) interrupted = true;
    if (r.exit_code == kExitInterrupted || (o.fail_fast && bad)) stop = true;
    results[i] = std::move(r);
  };
  std::size_t position = first_position;
  auto header = [&](const std::string& label) {
    if (suite && !o.quiet) print(stdout, "[{}/{}] {}\n", position, total_runs, label);
    ++position;
  };

  std::optional<sys::Interrupt> host_interrupt;  // a suite's runs are children: Ctrl-C is passed on
  if (suite && !host_runs.empty()) {
    host_interrupt.emplace();
    host_interrupt->bind_signals();
  }
  for (std::size_t i : host_runs) {
    const Scenario& s = scenarios[planned[i].scenario];
    const std::string kernel = planned[i].unavailable.empty() ? o.lab_kernel : planned[i].wanted;
    const std::string label = kernel.empty() ? s.name : s.name + "@" + kernel;
    if (stop) {
      settle(i, not_run_report(s, kernel, stop_reason(), false));
      ++position;  // its number stays its own
      continue;
    }
    header(label);
    if (!planned[i].unavailable.empty()) {
      print(stderr, "rxerun: {}: {}\n", label, planned[i].unavailable);
      settle(i, not_run_report(s, kernel, planned[i].unavailable, true));
      continue;
    }
    if (!s.nodes.empty())
      settle(i, run_nodes(o, s, registry, prepared.empty() ? vm::prepared_kernels(vm::search_dirs()) : prepared,
                          host_interrupt ? &*host_interrupt : nullptr));
    else
      settle(i, suite ? run_in_child(o, s, *host_interrupt) : run_on_host(o, s, registry));
    if (host_interrupt && host_interrupt->requested()) stop = interrupted = true;
    // Rewritten after every run: what finished is on record if rxerun dies.
    collect();
    write_reports(targets, report, true);
  }

  host_interrupt.reset();  // the lab VMs' own below
  if (!groups.empty()) {
    std::string why;
    const std::size_t slots = lab_vm_slots(std::min(o.jobs, groups.size()), &why);
    if (!why.empty() && !o.quiet && o.jobs > 1) print(stderr, "rxerun: {}\n", why);
    const bool side_by_side = slots > 1;
    sys::Interrupt interrupt;
    interrupt.bind_signals();
    std::mutex output_lock;
    std::size_t next_group = 0;
    std::mutex queue_lock;
    // The positions: each group's runs are numbered in the order groups start.
    std::map<std::string, std::size_t> group_first;
    for (const auto& label : group_order) {
      group_first[label] = position;
      position += groups[label].size();
    }
    auto worker = [&]() {
      while (true) {
        std::string label;
        {
          std::lock_guard<std::mutex> hold(queue_lock);
          if (next_group == group_order.size()) return;
          label = group_order[next_group++];
        }
        const auto& members = groups[label];
        const vm::PreparedKernel kernel = *planned[members.front()].kernel;
        if (interrupt.requested()) interrupted = true;
        if (stop || interrupted) {
          for (std::size_t i : members) {
            const Scenario& s = scenarios[planned[i].scenario];
            settle(i, not_run_report(s, label, stop_reason(), false));
          }
          continue;
        }
        VmRunOptions vo{.plugins = o.common.plugins,
                        .vars = o.common.vars,
                        .only = o.common.only,
                        .skip = o.common.skip,
                        .force = o.force,
                        .verbose = o.verbose,
                        .quiet = o.quiet,
                        .color = want_color(o.color) && !side_by_side,
                        .fail_fast = o.fail_fast,
                        .progress = want_progress(o) && !side_by_side,
                        .suite_position = suite ? fmt::format("{}/{}", group_first[label], total_runs) : "",
                        .output_dir = o.output_dir,
                        .kernel_health = o.kernel_health,
                        .prefix = side_by_side ? "[" + label + "] " : "",
                        .spinner = !side_by_side,
                        .interrupt_fd = interrupt.fd()};
        // A matrix's output files per kernel, so that one kernel's capture
        // does not replace another's.
        if (group_order.size() > 1)
          vo.output_dir = (std::filesystem::path(o.output_dir.empty() ? "." : o.output_dir) / label).string();
        std::optional<PrefixedLines> lines;
        if (side_by_side) {
          lines.emplace(output_lock, vo.prefix);
          vo.output = [&lines](std::string_view bytes) { (*lines)(bytes); };
        }
        std::vector<const Scenario*> members_scenarios;
        for (std::size_t i : members) {
          vo.scenarios.push_back(scenarios[planned[i].scenario].file);
          members_scenarios.push_back(&scenarios[planned[i].scenario]);
        }
        if (!suite && !planned[members.front()].placement.empty() && !o.quiet)
          print(stdout, "{}\n", planned[members.front()].placement);
        VmGroupResult got = run_in_lab_vm(vo, members_scenarios, registry, kernel);
        if (lines) lines->flush();
        for (std::size_t k = 0; k < members.size() && k < got.runs.size(); ++k) settle(members[k], got.runs[k]);
        if (got.exit_code == kExitInterrupted) stop = true;
      }
    };
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < slots; ++t) threads.emplace_back(worker);
    worker();
    for (auto& t : threads) t.join();
  }

  collect();
  // The summary table, also with -q ("only failures and the summary"); the
  // lab VM's guest leaves it to the host, which has every run.
  if (suite && o.suite_position.empty()) print_suite_summary(stdout, report, want_color(o.color));
  const int written = write_reports(targets, report, false);
  // A suite stopped by Ctrl-C says so, whatever its runs said.
  int code = worse_exit_code(report.exit_code, written);
  for (const auto& r : report.runs)
    if (r.interrupted) code = kExitInterrupted;
  return code;
}

}  // namespace rxerun
