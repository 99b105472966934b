#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/journal.h"
#include "engine/journal_line.h"
#include "engine/report_journal.h"
#include "support/privileged.h"

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
    if (!e.plugin.empty()) line["plugin"] = e.plugin;
    return line.dump();
  };
  JournalEntry from_plugin{7, "dev", "rdma_device", "", "nothing", nlohmann::json::object()};
  from_plugin.plugin = "/opt/lab/librdma_device.so";
  const std::vector<JournalEntry> entries = {
      {1, "s1", "veth", "", "delete veth vA", {{"name", "vA"}, {"peer", "vB"}}},
      {2, "s2", "address", "lab", "remove 10.0.0.1/24", {{"cidr", "10.0.0.1/24"}}, {.on = {"link:lab/vA"}}},
      {3, "pair", "veth", "", "delete veth vA", {{"mtu", 9000}}, {.makes = {"link:/vA", "link:/vB"}}},
      {4, "q\"uote\\", "k", "ns", "tab\tnewline\n\x01 \xc3\xa9", nullptr, {.on = {"a"}, .makes = {"b"}}},
      {12345678901, "", "k", "", "", nlohmann::json::object()},
      {6, "s", "k", "", "", nlohmann::json::array({1, "x", nullptr, 2.5, true})},
      from_plugin,
  };
  for (const auto& e : entries) {
    CAPTURE(e.seq);
    CHECK(entry_line(e) == object_line(e));
    CHECK(nlohmann::json::parse(entry_line(e)).at("do") == e.seq);
  }
}

TEST_CASE("journal: a plugin kind's entry keeps the plugin's path in a later process") {
  auto dir = fresh_dir("plugin");
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
    JournalEntry e{0, "made", "test_file", "", "remove /run/x", {{"path", "/run/x"}}};
    e.plugin = "/opt/lab/kinds.so";
    REQUIRE(j->append(e));
    REQUIRE(j->append(JournalEntry{0, "pair", "veth", "", "delete veth vA", {{"name", "vA"}}}));
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  REQUIRE(j->pending().size() == 2);
  CHECK(j->pending()[0].plugin == "/opt/lab/kinds.so");
  CHECK(j->pending()[0].unreadable.empty());
  CHECK(j->pending()[1].plugin.empty());
  fs::remove_all(dir);
}

TEST_CASE("journal: a second run of the same scenario is locked out") {
  auto dir = fresh_dir("lock");
  auto first = Journal::open(dir.string(), "lab");
  REQUIRE(first);
  auto second = Journal::open(dir.string(), "lab");
  REQUIRE_FALSE(second);
  CHECK(second.error().message.find("another run of scenario 'lab' is in progress (pid " + std::to_string(::getpid()) +
                                    ")") == 0);
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

TEST_CASE("journal: lines it cannot read are damage, listed with their numbers") {
  auto dir = fresh_dir("garbage");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  {
    std::ofstream out(dir / "lab.journal");
    out << R"({"do":1,"step":"s","kind":"k","args":{}})"
        << "\n"          // 1
        << "not json\n"  // 2
        << R"({"do":"two","kind":"k"})"
        << "\n"  // 3
        << R"({"undone":7})"
        << "\n"  // 4: unknown seq, ignored
        << "\n"  // 5: blank, ignored
        << R"([1,2])"
        << "\n"  // 6
        << R"({"what":1})"
        << "\n"  // 7
        << R"({"do":1,"step":"again","kind":"k"})"
        << "\n"  // 8: repeats seq 1
        << R"({"undone":[1,"x"]})"
        << "\n"  // 9: not applied
        << R"({"do":0,"kind":"k"})"
        << "\n"  // 10
        << R"({"do":9007199254740993,"kind":"k"})"
        << "\n"  // 11: past 2^53
        << R"({"do":2.5,"kind":"k"})"
        << "\n"                                                   // 12
        << std::string(100, '[') + std::string(100, ']') << "\n"  // 13: too deep
        << "\x01\xff\n"                                           // 14
        << R"({"do":2,"step":"s","kind":"k","args":{})";          // torn: not damage
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  REQUIRE(j->pending().size() == 1);
  CHECK(j->pending()[0].step == "s");
  CHECK(j->pending()[0].line == 1);
  CHECK(j->pending()[0].raw == R"({"do":1,"step":"s","kind":"k","args":{}})");
  std::vector<long> numbers;
  for (const auto& d : j->damaged()) numbers.push_back(d.number);
  CHECK(numbers == std::vector<long>{2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14});
  CHECK(j->damaged()[0].why == "not JSON");
  CHECK(j->damaged()[0].text == "not json");
  CHECK(j->damaged()[4].why == "\"do\" repeats sequence number 1 of line 1");
  CHECK(j->damaged()[9].why == "nested deeper than 64");
  CHECK(j->damaged()[10].text == "\\x01\\xff");
  CHECK(j->cut_torn_line());
  CHECK(damaged_line_numbers(j->damaged()) == "journal lines 2, 3, 6, 7, 8, 9, 10, 11, 12, 13 and 1 more");
  const std::string text = journal_text(j->damaged());
  CHECK(text.find("line 2 (not JSON): not json\nline 3 (\"do\" is not a sequence number (1 to 2^53)): ") == 0);
  CHECK(text.find("... and 1 more damaged line") != std::string::npos);
  // Sequence numbers go on past every one seen, undone ones included.
  auto next = j->append({0, "s", "k", "", "x", {}});
  REQUIRE(next);
  CHECK(*next == 8);  // past {"undone":7}
  fs::remove_all(dir);
}

TEST_CASE("journal: a torn last line is cut off, and the next entry is a line of its own") {
  auto dir = fresh_dir("torn");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
    REQUIRE(j->append({0, "s1", "k", "", "x", {{"id", "a"}}}));
  }
  { std::ofstream(dir / "lab.journal", std::ios::app) << R"({"do":2,"step":"s2","kind":"k","ar)"; }
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
    CHECK(j->cut_torn_line());
    CHECK(j->damaged().empty());
    REQUIRE(j->pending().size() == 1);
    auto b = j->append({0, "s3", "k", "", "y", {{"id", "b"}}});
    REQUIRE(b);
    CHECK(*b == 2);
    CHECK(j->pending().back().line == 3);  // boot, a, b
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  CHECK_FALSE(j->cut_torn_line());
  CHECK(j->damaged().empty());
  REQUIRE(j->pending().size() == 2);
  CHECK(j->pending()[1].step == "s3");
  fs::remove_all(dir);
}

TEST_CASE("journal: a whole last line without its newline is read, and the next write ends it") {
  auto dir = fresh_dir("nonewline");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  { std::ofstream(dir / "lab.journal") << R"({"do":4,"step":"s","kind":"k","args":{"id":"a"}})"; }
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
    CHECK_FALSE(j->cut_torn_line());
    REQUIRE(j->pending().size() == 1);
    REQUIRE(j->mark_undone(4));
    REQUIRE(j->append({0, "s", "k", "", "y", {}}));
  }
  std::ifstream in(dir / "lab.journal");
  std::string l1, l2, l3;
  std::getline(in, l1);
  std::getline(in, l2);
  std::getline(in, l3);
  CHECK(l1 == R"({"do":4,"step":"s","kind":"k","args":{"id":"a"}})");
  CHECK(l2 == R"({"undone":4})");
  CHECK(l3.find(R"("do":5)") != std::string::npos);
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  CHECK(j->damaged().empty());
  REQUIRE(j->pending().size() == 1);
  CHECK(j->pending()[0].seq == 5);
  CHECK(j->pending()[0].line == 3);
  fs::remove_all(dir);
}

TEST_CASE("journal: a whole last line without its newline that is not a line rxerun writes is damage") {
  auto dir = fresh_dir("lastdamage");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  {
    std::ofstream(dir / "lab.journal") << R"({"do":1,"kind":"k"})"
                                       << "\n"
                                       << R"({"what":1})";
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  CHECK_FALSE(j->cut_torn_line());
  REQUIRE(j->damaged().size() == 1);
  CHECK(j->damaged()[0].number == 2);
  CHECK(j->pending().size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("journal: an entry whose fields it cannot take stays pending, marked unreadable") {
  auto dir = fresh_dir("unreadable");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  {
    std::ofstream out(dir / "lab.journal");
    out << R"({"do":1,"step":"s","args":{}})"
        << "\n"
        << R"({"do":2,"kind":7,"netns":["x"],"args":[1],"on":[1],"makes":"x"})"
        << "\n"
        << R"({"do":3,"kind":"k","on":["link:/a"],"makes":["netns:x"]})"
        << "\n"
        << R"({"do":4,"kind":"k","args":{"mtu":1e300,"list":[1,[2.5]]}})"
        << "\n";
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  CHECK(j->damaged().empty());
  REQUIRE(j->pending().size() == 4);
  CHECK(j->pending()[0].unreadable == R"("kind" is missing)");
  CHECK(j->pending()[1].unreadable == R"("kind" is not a string; "netns" is not a string; "args" is not an object; )"
                                      R"("on" is not a list of strings; "makes" is not a list of strings)");
  CHECK(j->pending()[1].footprint.on.empty());
  CHECK(j->pending()[2].unreadable.empty());
  CHECK(j->pending()[2].args == nlohmann::json::object());
  CHECK(j->pending()[2].footprint.makes == std::vector<std::string>{"netns:x"});
  CHECK(j->pending()[3].unreadable == R"("args" holds a number that is not an integer)");
  CHECK(journal_text(j->pending()[0]) == R"(line 1: {"do":1,"step":"s","args":{}})");
  // What the reader would not take, the writer does not write.
  auto fractional = j->append({0, "s", "k", "", "x", {{"loss", 0.5}}});
  REQUIRE_FALSE(fractional);
  CHECK(fractional.error().message ==
        "cannot record the change in the journal: its args hold a number that is not an integer");
  CHECK(j->pending().size() == 4);
  fs::remove_all(dir);
}

TEST_CASE("journal: a line longer than the limit is damage, and is not held whole") {
  auto dir = fresh_dir("huge");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  {
    std::ofstream out(dir / "lab.journal");
    out << R"({"do":1,"kind":"k","args":{"x":")" << std::string(kMaxLineBytes, 'a') << "\"}}\n"
        << R"({"do":2,"kind":"k"})"
        << "\n";
  }
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  REQUIRE(j->damaged().size() == 1);
  CHECK(j->damaged()[0].number == 1);
  CHECK(j->damaged()[0].why == "longer than 8388608 bytes");
  CHECK(j->damaged()[0].text.size() < 400);
  CHECK(j->damaged()[0].text.find("bytes in all)") != std::string::npos);
  REQUIRE(j->pending().size() == 1);
  CHECK(j->pending()[0].seq == 2);
  // The writer refuses what the reader would not take back.
  auto big = j->append({0, "s", "k", "", "x", {{"x", std::string(kMaxLineBytes, 'b')}}});
  REQUIRE_FALSE(big);
  CHECK(big.error().message.find("more than 8388608") != std::string::npos);
  CHECK(j->pending().size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("journal: a damaged journal is kept aside, and what is pending goes on in a fresh one") {
  auto dir = fresh_dir("aside");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  const std::string original = std::string(R"({"do":1,"step":"s","kind":"k","args":{"id":"a"}})") + "\n" + "garbage\n" +
                               R"({"do":2,"step":"s","kind":"k","args":{"id":"b"}})" + "\n";
  { std::ofstream(dir / "lab.journal") << original; }
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
    REQUIRE(j->damaged().size() == 1);
    REQUIRE(j->mark_undone(2));
    auto kept = j->keep_damaged_aside();
    REQUIRE(kept);
    CHECK(kept->rfind((dir / "lab.journal.damaged-").string(), 0) == 0);
    CHECK(j->damaged().empty());
    std::ifstream in(*kept);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(all == original + R"({"undone":2})" + "\n");  // as it was, up to the moment it was kept
    // Kept twice within a second: a second name, never over the first.
    { std::ofstream(dir / "lab.journal", std::ios::app) << "more garbage\n"; }
    REQUIRE(j->append({0, "s", "k", "", "c", {{"id", "c"}}}));
  }
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
    REQUIRE(j->pending().size() == 2);
    CHECK(j->pending()[0].args == nlohmann::json{{"id", "a"}});
    CHECK(j->pending()[0].line == 2);  // after the boot line
    CHECK(j->pending()[1].seq == 3);
    REQUIRE(j->damaged().size() == 1);
    auto again = j->keep_damaged_aside();
    REQUIRE(again);
  }
  int kept_files = 0;
  for (const auto& f : fs::directory_iterator(dir))
    kept_files += f.path().filename().string().find(".damaged-") != std::string::npos;
  CHECK(kept_files == 2);
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  CHECK(j->damaged().empty());
  CHECK(j->pending().size() == 2);
  CHECK_FALSE(fs::exists(dir / "lab.journal.tmp"));
  fs::remove_all(dir);
}

TEST_CASE("journal: a write the file system cuts short is taken back, and the next one is whole") {
  // RLIMIT_FSIZE makes the kernel cut a write at the limit (EFBIG after).
  auto dir = fresh_dir("short");
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE(j);
  REQUIRE(j->append({0, "s", "k", "", "x", {{"id", "a"}}}));
  const auto size = fs::file_size(dir / "lab.journal");
  struct rlimit old {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = size + 20;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  auto cut_short = j->append({0, "s", "k", "", "y", {{"id", "b"}}});
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &old) == 0);
  std::signal(SIGXFSZ, old_handler);
  REQUIRE_FALSE(cut_short);
  CHECK(cut_short.error().code == EFBIG);
  CHECK(fs::file_size(dir / "lab.journal") == size);  // the 20 bytes it wrote are gone
  CHECK(j->pending().size() == 1);
  REQUIRE(j->append({0, "s", "k", "", "z", {{"id", "c"}}}));
  j = Journal::in_memory();
  auto again = Journal::open(dir.string(), "lab");
  REQUIRE(again);
  CHECK(again->damaged().empty());
  CHECK_FALSE(again->cut_torn_line());
  REQUIRE(again->pending().size() == 2);
  CHECK(again->pending()[1].args == nlohmann::json{{"id", "c"}});
  CHECK(again->pending()[1].seq == 2);
  fs::remove_all(dir);
}

TEST_CASE("journal: the state directory is made 0700, and only its last component") {
  auto dir = fresh_dir("made");
  {
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE(j);
  }
  struct stat st {};
  REQUIRE(::lstat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  auto deeper = Journal::open((dir / "a" / "b").string(), "lab");
  REQUIRE_FALSE(deeper);
  CHECK(deeper.error().message == "cannot create state directory " + (dir / "a" / "b").string() +
                                      ": its parent directory does not exist (rxerun creates only the last component); "
                                      "create it, or set RXERUN_STATE_DIR to a directory of your own");
  CHECK_FALSE(fs::exists(dir / "a"));
  fs::remove_all(dir);
}

TEST_CASE("journal: a state directory that is a link, open to others or a file is refused") {
  auto base = fresh_dir("hostile");
  fs::create_directories(base);
  fs::permissions(base, fs::perms::owner_all);
  const auto real = base / "real";
  fs::create_directory(real);
  fs::permissions(real, fs::perms::owner_all);
  fs::create_directory_symlink(real, base / "link");
  auto linked = Journal::open((base / "link").string(), "lab");
  REQUIRE_FALSE(linked);
  CHECK(linked.error().message ==
        "state directory " + (base / "link").string() +
            " is a symbolic link; remove it, or set RXERUN_STATE_DIR to a directory of your own");
  auto slash = Journal::open((base / "link").string() + "//", "lab");  // a trailing slash would follow it
  REQUIRE_FALSE(slash);
  CHECK(slash.error().message.find((base / "link").string() + " is a symbolic link") != std::string::npos);
  fs::permissions(real, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
  auto open = Journal::open(real.string(), "lab");
  REQUIRE_FALSE(open);
  CHECK(open.error().message ==
        "state directory " + real.string() +
            " has mode 0755, open to others (they could change what cleanup undoes); chmod 700 " + real.string());
  { std::ofstream(base / "file") << "x"; }
  auto file = Journal::open((base / "file").string(), "lab");
  REQUIRE_FALSE(file);
  CHECK(file.error().message.find(" is not a directory; remove it") != std::string::npos);
  CHECK(fs::is_empty(real));  // nothing written through any of them
  fs::remove_all(base);
}

TEST_CASE("journal: a lock or journal that is a link, a FIFO or a directory is refused, its target untouched") {
  auto dir = fresh_dir("links");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  const auto target = fresh_dir("links-target");
  { std::ofstream(target) << "precious\n"; }
  for (const char* file : {"lab.lock", "lab.journal"}) {
    CAPTURE(file);
    fs::create_symlink(target, dir / file);
    auto j = Journal::open(dir.string(), "lab");
    REQUIRE_FALSE(j);
    CHECK(j.error().message ==
          (dir / file).string() + " is a symbolic link; remove it (rxerun never writes through one)");
    fs::remove(dir / file);
    // Dangling: O_CREAT would make the target.
    fs::create_symlink(dir / "nowhere", dir / file);
    CHECK_FALSE(Journal::open(dir.string(), "lab"));
    CHECK_FALSE(fs::exists(dir / "nowhere"));
    fs::remove(dir / file);
    REQUIRE(::mkfifo((dir / file).c_str(), 0600) == 0);
    auto fifo = Journal::open(dir.string(), "lab");  // must not hang
    REQUIRE_FALSE(fifo);
    CHECK(fifo.error().message == (dir / file).string() + " is not a regular file; remove it");
    fs::remove(dir / file);
    fs::create_directory(dir / file);
    CHECK_FALSE(Journal::open(dir.string(), "lab"));
    fs::remove(dir / file);
  }
  std::ifstream in(target);
  std::string content;
  std::getline(in, content);
  CHECK(content == "precious");
  CHECK(fs::file_size(target) == 9);
  fs::remove(target);
  fs::remove_all(dir);
}

TEST_CASE("journal: a state directory of another user is refused, even for root") {
  rxerun::testing::require_root();
  auto dir = fresh_dir("owner");
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  REQUIRE(::chown(dir.c_str(), 65534, 65534) == 0);
  auto j = Journal::open(dir.string(), "lab");
  REQUIRE_FALSE(j);
  CHECK(j.error().message == "state directory " + dir.string() +
                                 " belongs to uid 65534, not to uid 0 that runs rxerun (its owner could change what "
                                 "cleanup undoes); remove it, or set RXERUN_STATE_DIR to a directory of your own");
  CHECK(fs::is_empty(dir));
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
    out << R"({"boot":"00000000-0000-0000-0000-000000000000"})"
        << "\n"
        << R"({"do":1,"step":"s","kind":"veth","args":{"name":"vA"}})"
        << "\n"
        << R"({"do":2,"step":"s","kind":"address","args":{}})"
        << "\n";
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
