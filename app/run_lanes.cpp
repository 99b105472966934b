#include "app/run_lanes.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "app/cli_vm.h"
#include "app/nodes.h"
#include "app/prefixed_lines.h"
#include "app/report_page.h"
#include "app/run.h"
#include "app/run_host.h"
#include "app/suite.h"
#include "base/output.h"
#include "engine/exit_code.h"
#include "sys/interrupt.h"

namespace rxerun {

int write_reports(const std::vector<ReportTarget>& targets, const SuiteReport& suite, bool quietly,
                  const std::string& output_dir) {
  int code = kExitOk;
  for (const auto& t : targets) {
    if (t.format == ReportTarget::Format::Html && quietly) continue;  // drawn once, at the end
    // A capture is named from the current directory on this machine, and
    // from --output-dir in a lab VM, whose files come back there.
    const PageOptions page{.capture_dirs = {output_dir.empty() ? std::string(".") : output_dir}};
    if (auto w =
            t.format == ReportTarget::Format::Html ? write_report_page(t.path, suite, page) : write_report(t, suite);
        !w) {
      if (!quietly) print(stderr, "rxerun: {}\n", w.error().message);  // it names the report and the reason
      code = kExitEnvironment;
    }
  }
  return code;
}

namespace {

// A run on this machine, in its lane. `interrupt`: bound for a suite (whose
// runs are children, and Ctrl-C is passed on to them), else null.
RunReport run_on_this_machine(const PlanContext& c, const PlannedRun& run, const sys::Interrupt* interrupt) {
  const Scenario& s = c.scenarios[run.scenario];
  switch (run.lane) {
    case Lane::Nodes:
      return run_nodes(c.options, s, c.registry,
                       c.prepared.empty() ? vm::prepared_kernels(vm::search_dirs()) : c.prepared, interrupt);
    case Lane::Child: return run_in_child(c.options, s, *interrupt);
    default: return run_on_host(c.options, s, c.registry);  // Lane::Host; Nowhere and LabVm never come here
  }
}

}  // namespace

void run_host_lanes(const PlanContext& c, RunLedger& ledger) {
  const RunPlan& plan = c.plan;
  std::optional<sys::Interrupt> interrupt;
  if (plan.suite && !plan.host_runs.empty()) {
    interrupt.emplace();
    interrupt->bind_signals();
  }
  for (std::size_t i : plan.host_runs) {
    const PlannedRun& run = plan.runs[i];
    const Scenario& s = c.scenarios[run.scenario];
    if (ledger.stopping()) {
      ledger.settle(i, ledger.stopped_run(s, run.kernel_label));  // its number stays its own
      continue;
    }
    if (plan.suite && !c.options.quiet) print(stdout, "[{}/{}] {}\n", run.position, plan.total, run.label);
    if (run.lane == Lane::Nowhere) {
      print(stderr, "rxerun: {}: {}\n", run.label, run.unavailable);
      ledger.settle(i, not_run_report(s, run.kernel_label, run.unavailable, true));
      continue;
    }
    ledger.settle(i, run_on_this_machine(c, run, interrupt ? &*interrupt : nullptr));
    if (interrupt && interrupt->requested()) ledger.interrupt();
    // Rewritten after every run: what finished is on record if rxerun dies.
    write_reports(plan.reports, ledger.report(plan.suite), true, c.options.output_dir);
  }
}

namespace {

// The lab VM groups, each booted by one of up to `slots` workers in turn.
class LabVmPool {
 public:
  LabVmPool(const PlanContext& c, RunLedger& ledger, bool side_by_side, const sys::Interrupt& interrupt)
      : c_(c), ledger_(ledger), side_by_side_(side_by_side), interrupt_(interrupt) {}

  // One worker: boots the next group not yet taken, until none is left.
  void work() {
    while (const LabVmGroup* group = next()) run_group(*group);
  }

 private:
  const LabVmGroup* next() {
    std::lock_guard<std::mutex> hold(queue_lock_);
    return next_ == c_.plan.groups.size() ? nullptr : &c_.plan.groups[next_++];
  }
  const Scenario& scenario_of(std::size_t run) const { return c_.scenarios[c_.plan.runs[run].scenario]; }

  void run_group(const LabVmGroup& group) {
    if (interrupt_.requested()) ledger_.interrupt();
    if (ledger_.stopping()) {
      for (std::size_t i : group.runs) ledger_.settle(i, ledger_.stopped_run(scenario_of(i), group.kernel.label));
      return;
    }
    VmRunOptions vo = vm_options(group);
    std::optional<PrefixedLines> lines;
    if (side_by_side_) {
      lines.emplace(output_lock_, vo.prefix);
      vo.output = [&lines](std::string_view bytes) { (*lines)(bytes); };
    }
    std::vector<const Scenario*> members;
    for (std::size_t i : group.runs) members.push_back(&scenario_of(i));
    const PlannedRun& first = c_.plan.runs[group.runs.front()];
    if (!c_.plan.suite && !first.placement.empty() && !c_.options.quiet) print(stdout, "{}\n", first.placement);
    VmGroupResult got = run_in_lab_vm(vo, members, c_.registry, group.kernel);
    if (lines) lines->flush();
    for (std::size_t k = 0; k < members.size() && k < got.runs.size(); ++k) ledger_.settle(group.runs[k], got.runs[k]);
    if (got.exit_code == kExitInterrupted) ledger_.stop();
  }

  // What the guest runs and how its output shows: side by side, each line
  // prefixed with its kernel, without colour, status line or spinner.
  VmRunOptions vm_options(const LabVmGroup& group) const {
    const RunCommandOptions& o = c_.options;
    std::vector<std::string> files;
    for (std::size_t i : group.runs) files.push_back(scenario_of(i).file);
    const std::string position = c_.plan.suite ? fmt::format("{}/{}", group.first_position, c_.plan.total) : "";
    return VmRunOptions{.run = lab_vm_run_options(o, files, want_color(o.color) && !side_by_side_,
                                                  want_progress(o) && !side_by_side_, position),
                        .output_dir = group.output_dir,
                        .prefix = side_by_side_ ? "[" + group.kernel.label + "] " : "",
                        .spinner = !side_by_side_,
                        .interrupt_fd = interrupt_.fd(),
                        .cold_boot = o.cold_boot};
  }

  const PlanContext& c_;
  RunLedger& ledger_;
  const bool side_by_side_;
  const sys::Interrupt& interrupt_;
  std::mutex output_lock_;
  std::mutex queue_lock_;
  std::size_t next_ = 0;
};

}  // namespace

void run_lab_vm_lanes(const PlanContext& c, RunLedger& ledger) {
  if (c.plan.groups.empty()) return;
  std::string why;
  const std::size_t slots = lab_vm_slots(std::min(c.options.jobs, c.plan.groups.size()), &why);
  if (!why.empty() && !c.options.quiet && c.options.jobs > 1) print(stderr, "rxerun: {}\n", why);
  sys::Interrupt interrupt;
  interrupt.bind_signals();
  LabVmPool pool(c, ledger, slots > 1, interrupt);
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < slots; ++t) threads.emplace_back([&pool] { pool.work(); });
  pool.work();
  for (auto& t : threads) t.join();
}

}  // namespace rxerun
