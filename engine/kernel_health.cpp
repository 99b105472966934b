#include "engine/kernel_health.h"

#include <string_view>

namespace rxerun {

std::string KernelFinding::where() const {
  const std::string on = node.empty() ? "" : "on node " + node + " ";
  if (phase == "step") return on + "during step '" + step + "'";
  if (phase == "preclean" || phase == "cleanup") return on + "during " + phase;
  return on + "during the run";
}

std::vector<KernelFinding> place_kernel_reports(const std::vector<sys::KernelReport>& reports,
                                                const std::vector<KernelWindow>& windows) {
  std::vector<KernelFinding> out;
  for (const auto& r : reports) {
    const KernelWindow* in = nullptr;
    for (const auto& w : windows) {
      if (w.start <= r.usec && r.usec <= w.end) {
        in = &w;
        break;
      }
      if (w.start <= r.usec) in = &w;  // the latest that started before it, so far
    }
    if (!in && !windows.empty()) in = &windows.front();
    KernelFinding f;
    f.kind = std::string(sys::to_string(r.kind));
    f.phase = in ? in->phase : "run";
    f.step = in ? in->step : "";
    f.lines = r.lines;
    f.time = static_cast<double>(r.usec) / 1e6;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace rxerun
