#pragma once
// Suites: what `rxerun run A.yaml B.yaml DIR --kernel 6.1,7.3` means before
// anything runs. The scenario files the arguments name, the kernels each
// scenario runs on, the ordered list of runs (scenario x kernel), the
// --shard part of it, how many lab VMs may run at once, and the summary
// table printed at the end. Pure functions: the command (app/run.cpp) does
// the running.

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "engine/report.h"

namespace rxerun {

// The scenario files `args` name, in order: a file as given, a directory as
// its *.yaml files (regular files, not its subdirectories), sorted by name.
// Anything else is taken as a file (the loader then says what is wrong with
// it, at FILE:1:1). An error names a directory without scenarios.
Result<std::vector<std::string>> expand_scenario_args(const std::vector<std::string>& args);

// --kernel: nothing (the scenario's own, else the default), "all" (every
// prepared lab kernel), or a comma-separated list ("6.1,7.3").
struct KernelChoice {
  bool all = false;
  std::vector<std::string> labels;  // as given, duplicates removed, in order
};
Result<KernelChoice> parse_kernel_choice(const std::string& option);

// --shard K/N: the K-th (1-based) of N parts.
struct Shard {
  std::size_t index = 1;
  std::size_t count = 1;
};
Result<Shard> parse_shard(const std::string& option);
// Whether the run at `position` (0-based, in the suite's order) belongs to
// `shard`: runs are dealt out in turn, so that every part gets a share of each
// scenario's kernels and no part is only the slow end of a directory.
inline bool in_shard(std::size_t position, const Shard& shard) {
  return position % shard.count == shard.index - 1;
}

// How many lab VMs may run at once for `wanted` (-j): no more than the
// cores (each VM keeps one busy) and what the memory available holds (each
// VM takes about kLabVmMemoryMiB). `why` says what held it back, when it did.
inline constexpr std::size_t kLabVmMemoryMiB = 1536;
std::size_t lab_vm_slots(std::size_t wanted, std::size_t cores, std::size_t available_mib, std::string* why);
// The same with this machine's cores and MemAvailable.
std::size_t lab_vm_slots(std::size_t wanted, std::string* why);

// The table at the end of a suite: one row per run (scenario, kernel,
// result, steps passed of steps, time), then one line with the counts and
// the exit code.
void print_suite_summary(std::FILE* out, const SuiteReport& suite, bool color);

}  // namespace rxerun
