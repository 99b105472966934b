#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/journal.h"

using namespace rxerun;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const char* tag) {
  auto d = fs::temp_directory_path() / (std::string("rxerun-journal-") + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}
}  // namespace

TEST_CASE("journal: entries survive the process and undone ones are forgotten") {
  auto dir = fresh_dir("persist");
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
    auto a = j->append({0, "s1", "veth", "", "delete veth vA", {{"name", "vA"}}});
    auto b = j->append({0, "s2", "address", "lab", "remove 10.0.0.1/24", {{"cidr", "10.0.0.1/24"}}});
    REQUIRE(a);
    REQUIRE(b);
    CHECK(*a == 1);
    CHECK(*b == 2);
    REQUIRE(j->mark_undone(*a));
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  REQUIRE(j->pending().size() == 1);
  CHECK(j->pending()[0].seq == 2);
  CHECK(j->pending()[0].netns == "lab");
  CHECK(j->pending()[0].args.at("cidr") == "10.0.0.1/24");
  auto c = j->append({0, "s3", "veth", "", "x", {}});
  REQUIRE(c);
  CHECK(*c == 3);  // sequence numbers keep growing across runs
  fs::remove_all(dir);
}

TEST_CASE("journal: an entry's line is the JSON object nlohmann::json writes for it") {
  auto object_line = [](const JournalEntry& e) {
    nlohmann::json line = {{"do", e.seq},      {"step", e.step},       {"kind", e.kind},
                           {"netns", e.netns}, {"summary", e.summary}, {"args", e.args}};
    if (!e.footprint.on.empty()) line["on"] = e.footprint.on;
    if (!e.footprint.makes.empty()) line["makes"] = e.footprint.makes;
    return line.dump();
  };
  const std::vector<JournalEntry> entries = {
      {1, "s1", "veth", "", "delete veth vA", {{"name", "vA"}, {"peer", "vB"}}},
      {2, "s2", "address", "lab", "remove 10.0.0.1/24", {{"cidr", "10.0.0.1/24"}}, {.on = {"link:lab/vA"}}},
      {3, "pair", "veth", "", "delete veth vA", {{"mtu", 9000}}, {.makes = {"link:/vA", "link:/vB"}}},
      {4, "q\"uote\\", "k", "ns", "tab\tnewline\n\x01 \xc3\xa9", nullptr, {.on = {"a"}, .makes = {"b"}}},
      {12345678901, "", "k", "", "", nlohmann::json::object()},
      {6, "s", "k", "", "", nlohmann::json::array({1, "x", nullptr, 2.5, true})},
  };
  for (const auto& e : entries) {
    CAPTURE(e.seq);
    CHECK(entry_line(e) == object_line(e));
    CHECK(nlohmann::json::parse(entry_line(e)).at("do") == e.seq);
  }
}

TEST_CASE("journal: a second run of the same scenario is locked out") {
  auto dir = fresh_dir("lock");
  auto first = Journal::open(dir.string(), "lab");
  REQUIRE(first);
  auto second = Journal::open(dir.string(), "lab");
  REQUIRE_FALSE(second);
  CHECK(second.error().message.find("another run of scenario 'lab' is in progress (pid " +
                                    std::to_string(::getpid()) + ")") == 0);
  auto other = Journal::open(dir.string(), "other-lab");
  CHECK(other);  // other scenarios are independent
  fs::remove_all(dir);
}

TEST_CASE("journal: a clean journal removes its file") {
  auto dir = fresh_dir("clean");
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  auto a = j->append({0, "s", "k", "", "x", {}});
  REQUIRE(a);
  j->remove_if_clean();
  CHECK(fs::exists(dir / "lab.journal"));  // still pending
  REQUIRE(j->mark_undone(*a));
  j->remove_if_clean();
  CHECK_FALSE(fs::exists(dir / "lab.journal"));
  // Appending afterwards starts the file again rather than losing the entry.
  REQUIRE(j->append({0, "s", "k", "", "y", {}}));
  CHECK(fs::exists(dir / "lab.journal"));
  fs::remove_all(dir);
}

TEST_CASE("journal: lines it cannot read are counted, not trusted") {
  auto dir = fresh_dir("garbage");
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "lab.journal");
    out << R"({"do":1,"step":"s","kind":"k","args":{}})" << "\n"
        << "not json\n"
        << R"({"do":"two","kind":"k"})" << "\n"
        << R"({"undone":7})" << "\n"
        << R"({"do":2,"step":"s","kind":"k","args":{})";  // torn
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  CHECK(j->pending().size() == 1);
  CHECK(j->skipped_lines() == 3);
  fs::remove_all(dir);
}

TEST_CASE("journal: a journal of an earlier boot is discarded, one of this boot is kept") {
  auto dir = fresh_dir("boot");
  std::string boot;
  std::getline(std::ifstream("/proc/sys/kernel/random/boot_id"), boot);
  REQUIRE_FALSE(boot.empty());
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
    REQUIRE(j->append({0, "s", "veth", "", "delete veth vA", {{"name", "vA"}}}));
  }
  {
    std::ifstream in(dir / "lab.journal");
    std::string first;
    std::getline(in, first);
    CHECK(first == R"({"boot":")" + boot + R"("})");
  }
  {
    auto j = Journal::open(dir.string(), "lab");  // same boot: kept
    REQUIRE(j);
    CHECK(j->pending().size() == 1);
    CHECK(j->dropped_from_earlier_boot() == 0);
  }
  {
    std::ofstream out(dir / "lab.journal");
    out << R"({"boot":"00000000-0000-0000-0000-000000000000"})" << "\n"
        << R"({"do":1,"step":"s","kind":"veth","args":{"name":"vA"}})" << "\n"
        << R"({"do":2,"step":"s","kind":"address","args":{}})" << "\n";
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  CHECK(j->pending().empty());
  CHECK(j->dropped_from_earlier_boot() == 2);
  REQUIRE(j->append({0, "s", "k", "", "x", {}}));
  std::ifstream in(dir / "lab.journal");
  std::string first;
  std::getline(in, first);
  CHECK(first == R"({"boot":")" + boot + R"("})");  // the file starts again, for this boot
  fs::remove_all(dir);
}

TEST_CASE("journal: in memory it writes nothing") {
  auto j = Journal::in_memory();
  REQUIRE(j.append({0, "s", "k", "", "x", {}}));
  CHECK(j.path().empty());
  CHECK(j.pending().size() == 1);
}
