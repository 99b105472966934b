#include "app/suite.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "base/output.h"
#include "base/strings.h"

namespace rxerun {

namespace fs = std::filesystem;

Result<std::vector<std::string>> expand_scenario_args(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const auto& arg : args) {
    std::error_code ec;
    const auto status = fs::status(arg, ec);
    if (ec || !fs::is_directory(status)) {  // a file, or nothing: the loader names it with its place
      files.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    for (fs::directory_iterator it(arg, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() != ".yaml" || !it->is_regular_file()) continue;
      // As the user would name it: "scenarios/x.yaml" for "scenarios" and "scenarios/".
      found.push_back((fs::path(arg) / it->path().filename()).lexically_normal().string());
    }
    if (ec) return make_error(arg + ": cannot list the directory: " + ec.message());
    if (found.empty()) return make_error(arg + ": a directory without scenarios (*.yaml)");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

Result<KernelChoice> parse_kernel_choice(const std::string& option) {
  KernelChoice choice;
  if (option.empty()) return choice;
  if (option == "all") {
    choice.all = true;
    return choice;
  }
  std::string_view rest = option;
  while (true) {
    const auto comma = rest.find(',');
    const std::string label(trim(rest.substr(0, comma)));
    if (label.empty())
      return make_error("--kernel " + option + ": an empty kernel in the list (expected 6.1,7.3 or all)");
    if (label == "all") return make_error("--kernel " + option + ": 'all' stands alone");
    if (std::find(choice.labels.begin(), choice.labels.end(), label) == choice.labels.end())
      choice.labels.push_back(label);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return choice;
}

Result<Shard> parse_shard(const std::string& option) {
  const auto bad = make_error("--shard " + option + ": expected K/N with 1 <= K <= N, e.g. 2/4");
  const auto slash = option.find('/');
  if (slash == std::string::npos) return bad;
  auto number = [](std::string_view s, std::size_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
  };
  Shard shard;
  const std::string_view text = option;
  if (!number(text.substr(0, slash), shard.index) || !number(text.substr(slash + 1), shard.count)) return bad;
  if (shard.count == 0 || shard.index == 0 || shard.index > shard.count) return bad;
  return shard;
}

std::size_t lab_vm_slots(std::size_t wanted, std::size_t cores, std::size_t available_mib, std::string* why) {
  const std::size_t by_memory = std::max<std::size_t>(1, available_mib / kLabVmMemoryMiB);
  const std::size_t by_cores = std::max<std::size_t>(1, cores);
  const std::size_t slots = std::min({wanted, by_memory, by_cores});
  if (slots < wanted && why) {
    *why = slots == by_cores
               ? fmt::format("-j {}: this machine has {} core{}, and each lab VM keeps one busy: {} at once", wanted,
                             cores, cores == 1 ? "" : "s", slots)
               : fmt::format("-j {}: {} MiB of memory available holds {} lab VM{} of about {} MiB: {} at once", wanted,
                             available_mib, by_memory, by_memory == 1 ? "" : "s", kLabVmMemoryMiB, slots);
  }
  return std::max<std::size_t>(1, slots);
}

namespace {

// MemAvailable from /proc/meminfo, in MiB; 0 when it cannot be read.
std::size_t memory_available_mib() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib / 1024;
  return 0;
}

}  // namespace

std::size_t lab_vm_slots(std::size_t wanted, std::string* why) {
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  const std::size_t memory = memory_available_mib();
  return lab_vm_slots(wanted, cores > 0 ? static_cast<std::size_t>(cores) : 1,
                      memory > 0 ? memory : wanted * kLabVmMemoryMiB, why);
}

void print_suite_summary(std::FILE* out, const SuiteReport& suite, bool color) {
  std::size_t name_width = 8;
  for (const auto& r : suite.runs) name_width = std::max(name_width, r.scenario.size());
  std::string text =
      fmt::format("\n{:<{}}  {:<8} {:<11} {:>7}  {:>8}\n", "SCENARIO", name_width, "KERNEL", "RESULT", "STEPS", "TIME");
  std::map<std::string_view, int> counts;
  for (const auto& r : suite.runs) {
    const std::string_view verdict = run_verdict(r);
    ++counts[verdict];
    int passed = 0;
    for (const auto& s : r.steps) passed += s.status == StepStatus::Passed || s.status == StepStatus::Flaky ? 1 : 0;
    const std::string steps = r.steps.empty() ? "-" : fmt::format("{}/{}", passed, r.steps.size());
    const std::string time = r.not_run ? "-" : format_seconds(r.duration);
    std::string word = fmt::format("{:<11}", verdict);
    if (color) word = fmt::format("\x1b[{}m{}\x1b[0m", verdict == "passed" ? 32 : verdict == "not-run" ? 33 : 31, word);
    text += fmt::format("{:<{}}  {:<8} {} {:>7}  {:>8}\n", r.scenario, name_width,
                        r.lab_kernel.empty() ? "host" : r.lab_kernel, word, steps, time);
  }
  std::string tally;
  for (std::string_view v : {"passed", "failed", "error", "residue", "interrupted", "not-run"})
    if (counts[v]) tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", counts[v], v);
  text += fmt::format("suite: {} run{}: {} (exit {})\n", suite.runs.size(), suite.runs.size() == 1 ? "" : "s", tally,
                      suite.exit_code);
  write_out(out, text);
}

}  // namespace rxerun
