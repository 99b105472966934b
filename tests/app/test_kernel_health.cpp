// The lab VM's side of kernel health: a guest whose kernel died of a panic
// is a finding of the step the guest noted it was running.

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "app/kernel_health.h"
#include "engine/exit_code.h"
#include "engine/loader.h"
#include "steps/kinds.h"
#include "vm/boot_protocol.h"

using namespace rxerun;
namespace fs = std::filesystem;

namespace {

struct DeathFixture {
  DeathFixture() {
    share = fs::temp_directory_path() / ("rxerun-kh-test." + std::to_string(::getpid()));
    fs::create_directories(share);
    const std::string text =
        "name: died\nsteps:\n  - {name: before, sleep: {duration: 1ms}}\n  - {name: crash, exec: {shell: "
        "true}}\n  - {name: never, sleep: {duration: 1ms}}\n";
    std::ofstream(share / "died.yaml") << text;
    registry = std::make_unique<Registry>(steps::all_kinds());
    auto loaded = load_scenario((share / "died.yaml").string(), *registry, {});
    REQUIRE(loaded.scenario);
    scenario = *loaded.scenario;
    kernel.label = "7.3";
    kernel.release = "7.3.4+deb13-amd64";
    lab.outcome = vm::LabOutcome::Crashed;
    lab.console_tail = {"[    7.438792] sysrq: Trigger a crash",
                        "[    7.438792] Kernel panic - not syncing: sysrq triggered crash",
                        "[    7.452834] Call Trace:", "[    7.461260] Kernel Offset: disabled"};
  }
  ~DeathFixture() {
    std::error_code ec;
    fs::remove_all(share, ec);
  }
  void noted(const std::string& text) { std::ofstream(share / std::string(vm::kRunningFile)) << text; }

  fs::path share;
  std::unique_ptr<Registry> registry;
  Scenario scenario;
  vm::PreparedKernel kernel;
  vm::LabRunResult lab;
};

}  // namespace

TEST_CASE("kernel health, lab VM: a panic during a step is that step's finding, exit 1") {
  DeathFixture f;
  f.noted("preclean\nstep before\ndone before passed\nstep crash\n");
  auto r = lab_vm_death_report(f.lab, f.scenario, f.kernel, KernelHealthPolicy::Fail, f.share);
  REQUIRE(r);
  CHECK(r->exit_code == kExitFailed);
  REQUIRE(r->kernel_health.findings.size() == 1);
  const auto& finding = r->kernel_health.findings[0];
  CHECK(finding.kind == "kernel panic");
  CHECK(finding.where() == "during step 'crash'");
  CHECK(finding.lines.front() == "[    7.438792] Kernel panic - not syncing: sysrq triggered crash");
  CHECK(r->kernel_health.kernel == "7.3.4+deb13-amd64");
  REQUIRE(r->steps.size() == 3);
  CHECK(r->steps[0].status == StepStatus::Passed);
  CHECK(r->steps[1].status == StepStatus::Failed);
  CHECK(r->steps[2].status == StepStatus::NotRun);
}

TEST_CASE("kernel health, lab VM: during cleanup, unknown, under warn and off, and without a panic") {
  DeathFixture f;
  f.noted("preclean\nstep before\ndone before passed\ncleanup\n");
  auto cleanup = lab_vm_death_report(f.lab, f.scenario, f.kernel, KernelHealthPolicy::Warn, f.share);
  REQUIRE(cleanup);
  CHECK(cleanup->kernel_health.findings[0].where() == "during cleanup");
  CHECK(cleanup->exit_code == kExitEnvironment);  // warn: the run has no result, as a VM that stopped

  fs::remove(f.share / std::string(vm::kRunningFile));
  auto unknown = lab_vm_death_report(f.lab, f.scenario, f.kernel, KernelHealthPolicy::Fail, f.share);
  REQUIRE(unknown);
  CHECK(unknown->kernel_health.findings[0].where() == "during the run");

  CHECK_FALSE(lab_vm_death_report(f.lab, f.scenario, f.kernel, KernelHealthPolicy::Off, f.share));
  f.lab.console_tail = {"[    7.1] rxerun-guest: something else went wrong"};
  CHECK_FALSE(lab_vm_death_report(f.lab, f.scenario, f.kernel, KernelHealthPolicy::Fail, f.share));
}
