#pragma once
// Kernel health: the kernel's reports of its own trouble (sys/kernel_health.h)
// placed in the part of the run they appeared during. The runner notes when
// preclean, each step and cleanup ran on the kernel log's clock; a report
// belongs to the part whose time holds its header.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/report.h"
#include "sys/kernel_health.h"

namespace rxerun {

// A part of the run on the kernel log's clock (microseconds, CLOCK_MONOTONIC).
struct KernelWindow {
  std::string phase;  // "preclean", "step", "cleanup"
  std::string step;   // with "step": its name
  std::uint64_t start = 0;
  std::uint64_t end = 0;
};

// Each report as a finding of the window it appeared during; one that fell
// between two windows (the runner's own moment between steps) goes to the
// latest window that started before it, one before all of them to the first.
std::vector<KernelFinding> place_kernel_reports(const std::vector<sys::KernelReport>& reports,
                                                const std::vector<KernelWindow>& windows);

}  // namespace rxerun
