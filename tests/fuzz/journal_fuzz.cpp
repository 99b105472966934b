// libFuzzer target: the journal reader and its replay. The input bytes are a
// journal file in a state directory of the target's own; Journal::open reads
// it and Runner::cleanup undoes what it lists with the real step kinds
// against FakeSystem. Neither may crash, hang or throw, and what cleanup
// leaves must read back whole: no damage, the same entries still pending.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/journal.h"
#include "engine/registry.h"
#include "engine/report.h"
#include "engine/runner.h"
#include "fakes/fake_system.h"
#include "steps/kinds.h"

using namespace rxerun;
namespace fs = std::filesystem;

namespace {

// Under $TMPDIR (run.sh points it at a directory it removes, also after a
// crash), made once, mode 0700 as the journal wants it. Never destroyed:
// the exit handler that removes it runs after static destructors.
const std::string& state_dir() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto* made = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/rxerun-journal-fuzz-XXXXXX");
    if (!::mkdtemp(made->data())) __builtin_trap();
    std::atexit([] { fs::remove_all(state_dir()); });
    return made;
  }();
  return *dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Registry registry(steps::all_kinds());
  const std::string& dir = state_dir();
  for (const auto& f : fs::directory_iterator(dir)) fs::remove_all(f.path());
  {
    std::ofstream out(dir + "/fuzz.journal", std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::size_t left = 0;
  {
    auto journal = Journal::open(dir, "fuzz");
    if (!journal) __builtin_trap();  // a regular file in a directory of its own always opens
    fakes::FakeSystem fake;
    Reporter quiet;
    Runner runner(registry, fake.system, *journal, quiet);
    const CleanupReport report = runner.cleanup("fuzz", "cleanup");
    (void)to_json(RunReport{.cleanup = report}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (!journal->damaged().empty()) __builtin_trap();  // reported and kept aside
    left = journal->pending().size();
  }
  auto again = Journal::open(dir, "fuzz");
  if (!again || !again->damaged().empty() || again->cut_torn_line() || again->pending().size() != left)
    __builtin_trap();
  return 0;
}
