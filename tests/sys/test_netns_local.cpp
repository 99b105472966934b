// current_netns_id() remembers its answer until the thread changes namespace
// through enter_netns() or unshare_netns(): the id must follow each change,
// and no code of rxerun may change namespace another way.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/privileged.h"
#include "sys/netns_local.h"

using namespace rxerun;

namespace {

std::uint64_t proc_netns_id() {
  struct stat st {};
  REQUIRE(::stat("/proc/thread-self/ns/net", &st) == 0);
  return static_cast<std::uint64_t>(st.st_ino);
}

}  // namespace

TEST_CASE("sys.netns_local: no source changes a thread's network namespace around enter_netns/unshare_netns") {
  namespace fs = std::filesystem;
  const fs::path root = RXERUN_SOURCE_DIR;
  // A call of setns() or unshare(), or a clone flag that makes a namespace.
  const std::regex call(R"(\b(setns|unshare)\s*\(|CLONE_NEWNET)");
  const std::vector<std::string> allowed = {"sys/netns_local.cpp", "sys/netns_local.h",
                                            "tests/sys/test_netns_local.cpp"};
  std::vector<std::string> offenders;
  int scanned = 0;
  for (const char* dir : {"app", "engine", "steps", "sys", "vm", "tests"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cc" && ext != ".hpp")) continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      if (std::find(allowed.begin(), allowed.end(), rel) != allowed.end()) continue;
      std::ifstream in(entry.path());
      std::string line;
      // (The plain searches first: std::regex is slow in the tests' unoptimised build.)
      for (int n = 1; std::getline(in, line); ++n)
        if ((line.find("setns") != std::string::npos || line.find("unshare") != std::string::npos ||
             line.find("CLONE_NEWNET") != std::string::npos) &&
            std::regex_search(line, call))
          offenders.push_back(rel + ":" + std::to_string(n) + ": " + line);
      ++scanned;
    }
  }
  CHECK(scanned > 20);
  std::ostringstream list;
  for (const auto& o : offenders) list << o << "\n";
  CHECK_MESSAGE(offenders.empty(), "use sys::enter_netns()/sys::unshare_netns() instead:\n" << list.str());
}

TEST_CASE("sys.netns_local: the remembered id follows unshare_netns and enter_netns") {
  testing::require_root();
  auto before = sys::current_netns_id();
  REQUIRE(before);
  CHECK(*before == proc_netns_id());
  const int original = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  REQUIRE(original >= 0);
  REQUIRE(sys::unshare_netns() == 0);
  auto inside = sys::current_netns_id();
  REQUIRE(inside);
  CHECK(*inside != *before);
  CHECK(*inside == proc_netns_id());
  CHECK(*sys::current_netns_id() == *inside);  // remembered: the same answer
  REQUIRE(sys::enter_netns(original) == 0);
  ::close(original);
  auto back = sys::current_netns_id();
  REQUIRE(back);
  CHECK(*back == *before);
  CHECK(*back == proc_netns_id());
  // A failed call leaves the namespace, and the id, as they were.
  CHECK(sys::enter_netns(-1) != 0);
  CHECK(*sys::current_netns_id() == *before);
}
