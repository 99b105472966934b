// What a suite runs before anything runs: the files its arguments name, the
// kernels (--kernel), the --shard part, how many lab VMs fit at once.

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <doctest/doctest.h>

#include "app/suite.h"

using namespace rxerun;
namespace fs = std::filesystem;

namespace {

struct SuiteDir {
  fs::path path;
  SuiteDir() {
    std::string tmpl = (fs::temp_directory_path() / "rxerun-suite-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~SuiteDir() { fs::remove_all(path); }
  void file(const std::string& name) { std::ofstream(path / name) << "name: x\n"; }
};

}  // namespace

TEST_CASE("suite: a directory is its *.yaml files, sorted, beside the files named") {
  SuiteDir d;
  for (const char* f : {"b.yaml", "a.yaml", "c.yml", "notes.txt"}) d.file(f);
  fs::create_directory(d.path / "sub.yaml");  // a directory, not a scenario
  d.file("z.yaml");
  auto files = expand_scenario_args({(d.path / "z.yaml").string(), d.path.string() + "/"});
  REQUIRE(files);
  REQUIRE(files->size() == 4);
  CHECK(fs::path(files->at(0)).filename() == "z.yaml");
  CHECK(fs::path(files->at(1)).filename() == "a.yaml");
  CHECK(fs::path(files->at(2)).filename() == "b.yaml");
  CHECK(fs::path(files->at(3)).filename() == "z.yaml");
  CHECK(files->at(1).find("//") == std::string::npos);
}

TEST_CASE("suite: a directory without scenarios is an error, a missing file is the loader's") {
  SuiteDir d;
  d.file("readme.txt");
  auto empty = expand_scenario_args({d.path.string()});
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message.find("without scenarios") != std::string::npos);
  auto missing = expand_scenario_args({(d.path / "nope.yaml").string()});
  REQUIRE(missing);
  CHECK(*missing == std::vector<std::string>{(d.path / "nope.yaml").string()});
}

TEST_CASE("suite: --kernel takes one label, a list, or all") {
  auto none = parse_kernel_choice("");
  REQUIRE(none);
  CHECK(none->labels.empty());
  CHECK_FALSE(none->all);
  auto list = parse_kernel_choice("6.1, 7.3,6.1");
  REQUIRE(list);
  CHECK(list->labels == std::vector<std::string>{"6.1", "7.3"});
  auto all = parse_kernel_choice("all");
  REQUIRE(all);
  CHECK(all->all);
  CHECK_FALSE(parse_kernel_choice("6.1,,7.3"));
  CHECK_FALSE(parse_kernel_choice("6.1,all"));
  CHECK_FALSE(parse_kernel_choice(","));
}

TEST_CASE("suite: --shard K/N is checked") {
  auto s = parse_shard("2/3");
  REQUIRE(s);
  CHECK(s->index == 2);
  CHECK(s->count == 3);
  for (const char* bad : {"0/3", "4/3", "1/0", "3", "a/b", "1/3/4", "/3", "1/", "-1/3", "1 /3"})
    CHECK_MESSAGE(!parse_shard(bad), bad);
}

TEST_CASE("suite: the shards of a suite cover every run exactly once") {
  for (std::size_t n = 1; n <= 5; ++n) {
    std::multiset<std::size_t> seen;
    for (std::size_t k = 1; k <= n; ++k)
      for (std::size_t run = 0; run < 11; ++run)
        if (in_shard(run, Shard{k, n})) seen.insert(run);
    CHECK(seen.size() == 11);
    for (std::size_t run = 0; run < 11; ++run) CHECK(seen.count(run) == 1);
  }
  // Dealt in turn: with two kernels per scenario, shard 1/2 gets every
  // scenario's first kernel, not the first half of the scenarios.
  CHECK(in_shard(0, Shard{1, 2}));
  CHECK(in_shard(2, Shard{1, 2}));
  CHECK(in_shard(1, Shard{2, 2}));
}

TEST_CASE("suite: -j is held to the cores and the memory, and says why") {
  std::string why;
  CHECK(lab_vm_slots(2, 8, 64 * 1024, &why) == 2);
  CHECK(why.empty());
  CHECK(lab_vm_slots(4, 2, 64 * 1024, &why) == 2);
  CHECK(why.find("2 cores") != std::string::npos);
  why.clear();
  CHECK(lab_vm_slots(4, 8, 3 * 1024, &why) == 2);
  CHECK(why.find("MiB of memory available") != std::string::npos);
  why.clear();
  CHECK(lab_vm_slots(3, 8, 100, &why) == 1);  // always one, even when the memory looks short
  CHECK_FALSE(why.empty());
}
