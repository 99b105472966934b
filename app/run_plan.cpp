#include "app/run_plan.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

namespace rxerun {

std::variant<std::vector<ReportTarget>, Refusal> read_report_targets(const std::vector<std::string>& specs) {
  std::vector<ReportTarget> targets;
  for (const auto& spec : specs) {
    std::string why;
    auto target = parse_report_target(spec, &why);
    if (!target) return Refusal{"--report " + spec + ": " + why};
    targets.push_back(*target);
  }
  return targets;
}

std::variant<RunRequest, Refusal> read_run_request(const RunCommandOptions& o) {
  RunRequest request;
  request.own_kernel = is_own_kernel_path(o.kernel) || !o.modules.empty();
  if (request.own_kernel && o.host) return Refusal{"--host runs on this machine's kernel: it takes no --kernel PATH"};
  if (request.own_kernel && !is_own_kernel_path(o.kernel)) return Refusal{"--modules DIR goes with --kernel IMAGE"};
  auto kernels = parse_kernel_choice(request.own_kernel ? "" : o.kernel);
  if (!kernels) return Refusal{kernels.error().message};
  request.kernels = std::move(*kernels);
  if (!o.shard.empty()) {
    auto shard = parse_shard(o.shard);
    if (!shard) return Refusal{shard.error().message};
    request.shard = *shard;
  }
  if (o.jobs == 0) return Refusal{"-j 0: at least one lab VM runs at a time"};
  return request;
}

namespace {

// The kernels every scenario runs on when the options name them: --kernel's
// list, a kernel of one's own, or with `all` every prepared one (oldest
// first, as a matrix reads). Empty: each scenario's own.
std::variant<std::vector<std::string>, Refusal> kernels_asked(const RunCommandOptions& o, const RunRequest& request,
                                                              const std::vector<vm::PreparedKernel>& prepared) {
  std::vector<std::string> labels = request.kernels.labels;
  if (request.own_kernel && !prepared.empty()) labels = {prepared.front().label};
  if (request.kernels.all) {
    if (prepared.empty())
      return Refusal{"--kernel all: no lab kernel is prepared: run `rxerun vm setup`", kExitEnvironment};
    for (auto it = prepared.rbegin(); it != prepared.rend(); ++it) labels.push_back(it->label);
  }
  if (o.host && labels.size() > 1)
    return Refusal{
        fmt::format("--host runs on this machine's kernel: it cannot run a matrix of --kernel {}", o.kernel)};
  return labels;
}

// Why a scenario with nodes cannot run under these options (its nodes are
// lab VMs with the kernels it names: never placed); nullptr when it can.
const char* nodes_refusal(const RunCommandOptions& o) {
  return o.host               ? "--host runs on this machine's kernel"
         : !o.kernel.empty()  ? "--kernel chooses one kernel"
         : !o.modules.empty() ? "--modules goes with a kernel of one's own"
         : o.keep             ? "--keep cannot keep a lab in lab VMs"
                              : nullptr;
}

// The runs of the scenario at `index`: one on each kernel it is to run on,
// placed.
std::variant<std::vector<PlannedRun>, Refusal> place_scenario(const RunCommandOptions& o, std::size_t index,
                                                              const std::vector<std::string>& asked, bool own_kernel,
                                                              const PlanInputs& in, const Registry& registry) {
  const Scenario& s = in.scenarios[index];
  if (!s.nodes.empty()) {
    if (const char* refused = nodes_refusal(o))
      return Refusal{fmt::format("{}: its nodes are lab VMs that name their own kernels: {}", s.file, refused)};
    return std::vector<PlannedRun>{PlannedRun{.scenario = index, .lane = Lane::Nodes}};
  }
  std::vector<std::optional<std::string>> wanted;
  if (!asked.empty())
    wanted.assign(asked.begin(), asked.end());
  else if (!s.vm_kernels.empty() && !o.host)  // on the host (the lab VM's guest too): its one kernel
    wanted.assign(s.vm_kernels.begin(), s.vm_kernels.end());
  else
    wanted.push_back(std::nullopt);  // the scenario's vm.kernel, else the newest
  std::vector<PlannedRun> runs;
  for (const auto& k : wanted) {
    // A matrix runs in the lab VM even where the host could: the host has
    // one kernel, not the ones asked for.
    const PlacementRequest where{
        .force_vm = o.vm || own_kernel || wanted.size() > 1, .force_host = o.host, .kernel = k};
    const Placement p = place(s, registry, where, in.prepared, in.host);
    PlannedRun run{.scenario = index};
    switch (p.where) {
      case Placement::Where::BadKernel: return Refusal{p.message};
      case Placement::Where::Nowhere:
        run.lane = Lane::Nowhere;
        run.unavailable = p.message;
        run.kernel_label = k.value_or(s.vm_kernel.value_or(""));
        break;
      case Placement::Where::Vm:
        run.lane = Lane::LabVm;
        run.kernel = p.kernel;
        run.kernel_label = p.kernel->label;
        run.placement = p.message;
        break;
      case Placement::Where::Host: break;
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

// --keep keeps one lab, on the host.
std::optional<Refusal> keep_refusal(const RunCommandOptions& o, const RunPlan& plan) {
  if (!o.keep) return std::nullopt;
  if (std::any_of(plan.runs.begin(), plan.runs.end(), [](const PlannedRun& r) { return r.kernel.has_value(); }))
    return Refusal{"--keep cannot keep a lab in the lab VM: the VM is discarded after the run"};
  if (plan.suite) return Refusal{"--keep keeps one lab: run one scenario with it, not a suite"};
  return std::nullopt;
}

std::vector<PlannedRun> shard_part(std::vector<PlannedRun> runs, const Shard& shard) {
  std::vector<PlannedRun> part;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (in_shard(i, shard)) part.push_back(std::move(runs[i]));
  return part;
}

// The number of the first run and of all runs: 1 and this plan's count,
// or in the lab VM's guest the host's --suite-position ("3/8"; malformed,
// which the host never writes: as if absent).
std::pair<std::size_t, std::size_t> suite_numbers(const std::string& suite_position, std::size_t runs) {
  if (!suite_position.empty())
    if (auto position = parse_shard(suite_position)) return {position->index, position->count};
  return {1, runs};
}

// Lanes, labels and numbers: the runs on this machine first, in order, then
// each lab kernel's in one boot, numbered in the order the boots start.
void put_in_lanes(const RunCommandOptions& o, const std::vector<Scenario>& scenarios, std::size_t first,
                  RunPlan& plan) {
  for (std::size_t i = 0; i < plan.runs.size(); ++i) {
    PlannedRun& run = plan.runs[i];
    if (run.lane == Lane::Host && plan.suite) run.lane = Lane::Child;
    if (run.lane == Lane::Host || run.lane == Lane::Child || run.lane == Lane::Nodes) run.kernel_label = o.lab_kernel;
    const std::string& name = scenarios[run.scenario].name;
    run.label = run.kernel_label.empty() ? name : name + "@" + run.kernel_label;
    if (run.lane != Lane::LabVm) {
      plan.host_runs.push_back(i);
      continue;
    }
    auto group = std::find_if(plan.groups.begin(), plan.groups.end(),
                              [&](const LabVmGroup& g) { return g.kernel.label == run.kernel->label; });
    if (group == plan.groups.end()) group = plan.groups.insert(group, LabVmGroup{.kernel = *run.kernel});
    group->runs.push_back(i);
  }
  std::size_t position = first;
  for (std::size_t i : plan.host_runs) plan.runs[i].position = position++;
  for (auto& group : plan.groups) {
    group.first_position = position;
    for (std::size_t i : group.runs) plan.runs[i].position = position++;
    // A matrix's output files per kernel, so that one kernel's capture does
    // not replace another's.
    group.output_dir =
        plan.groups.size() > 1
            ? (std::filesystem::path(o.output_dir.empty() ? "." : o.output_dir) / group.kernel.label).string()
            : o.output_dir;
  }
}

}  // namespace

std::variant<RunPlan, Refusal> plan_runs(const RunCommandOptions& o, const PlanInputs& in, const Registry& registry) {
  auto reports = read_report_targets(o.reports);
  if (const auto* refused = std::get_if<Refusal>(&reports)) return *refused;
  auto request = read_run_request(o);
  if (const auto* refused = std::get_if<Refusal>(&request)) return *refused;
  const RunRequest& req = std::get<RunRequest>(request);
  auto asked = kernels_asked(o, req, in.prepared);
  if (const auto* refused = std::get_if<Refusal>(&asked)) return *refused;
  const auto& labels = std::get<std::vector<std::string>>(asked);

  RunPlan plan;
  plan.reports = std::move(std::get<std::vector<ReportTarget>>(reports));
  plan.suite = in.scenarios.size() > 1 || req.shard.has_value() || labels.size() > 1 || in.directory;
  for (std::size_t i = 0; i < in.scenarios.size(); ++i) {
    auto runs = place_scenario(o, i, labels, req.own_kernel, in, registry);
    if (const auto* refused = std::get_if<Refusal>(&runs)) return *refused;
    auto& placed = std::get<std::vector<PlannedRun>>(runs);
    plan.suite |= placed.size() > 1;
    std::move(placed.begin(), placed.end(), std::back_inserter(plan.runs));
  }
  if (auto refused = keep_refusal(o, plan)) return *refused;
  if (!plan.suite && plan.runs.size() == 1 && plan.runs.front().lane == Lane::Nowhere)
    return Refusal{plan.runs.front().unavailable, kExitEnvironment};
  if (req.shard) plan.runs = shard_part(std::move(plan.runs), *req.shard);

  auto [first, total] = suite_numbers(o.suite_position, plan.runs.size());
  plan.total = total;
  if (!o.suite_position.empty()) plan.suite = true;  // the guest's part of the host's suite
  put_in_lanes(o, in.scenarios, first, plan);
  return plan;
}

}  // namespace rxerun
