// base/files.h on a real file system: atomic writes by rename, symbolic
// links at the final component refused (their targets untouched), planted
// temporary names never followed, nothing left behind on a failure.

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/files.h"

using namespace rxerun;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/rxerun-files-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

}  // namespace

TEST_CASE("base.files: write_file_atomic writes, replaces, and leaves only the file") {
  TempDir d;
  const auto p = d.path / "report.json";
  REQUIRE(write_file_atomic(p, "one\n", "report").ok());
  CHECK(slurp(p) == "one\n");
  spit(d.path / "other", "x");
  const auto before = fs::status(p).permissions();
  REQUIRE(write_file_atomic(p, "two\n", "report").ok());
  CHECK(slurp(p) == "two\n");
  CHECK(fs::status(p).permissions() == before);
  CHECK(entries(d.path) == 2);
}

TEST_CASE("base.files: a symbolic link at the path is refused and its target left alone") {
  TempDir d;
  const auto target = d.path / "precious";
  spit(target, "keep me\n");
  const auto link = d.path / "report.json";
  fs::create_symlink(target, link);

  auto r = write_file_atomic(link, "overwritten\n", "report");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ELOOP);
  CAPTURE(r.error().message);
  CHECK(r.error().message.starts_with("report " + link.string() + " is a symbolic link (to " + target.string() + ")"));
  CHECK(r.error().message.find("rxerun does not write through symbolic links") != std::string::npos);
  CHECK(slurp(target) == "keep me\n");
  CHECK(fs::is_symlink(link));
  CHECK(entries(d.path) == 2);  // no temporary file left

  // A dangling link too: it would create the file it names.
  const auto dangling = d.path / "dangling.xml";
  fs::create_symlink(d.path / "nowhere", dangling);
  CHECK(write_file_atomic(dangling, "x", "report").error().code == ELOOP);
  CHECK_FALSE(fs::exists(d.path / "nowhere"));

  // A link in a directory component is the user's choice of directory: fine.
  fs::create_directory(d.path / "real");
  fs::create_directory_symlink(d.path / "real", d.path / "dirlink");
  REQUIRE(write_file_atomic(d.path / "dirlink" / "r.json", "ok\n", "report").ok());
  CHECK(slurp(d.path / "real" / "r.json") == "ok\n");
}

TEST_CASE("base.files: links planted at guessable temporary names are never followed") {
  TempDir d;
  const auto target = d.path / "precious";
  spit(target, "keep me\n");
  const auto p = d.path / "r.json";
  for (const char* suffix : {".tmp", ".new", "~", ".rxerun-"}) fs::create_symlink(target, p.string() + suffix);
  REQUIRE(write_file_atomic(p, "report\n", "report").ok());
  CHECK(slurp(p) == "report\n");
  CHECK(slurp(target) == "keep me\n");
  for (const char* suffix : {".tmp", ".new", "~", ".rxerun-"}) CHECK(fs::is_symlink(p.string() + suffix));

  // Even at the exact temporary name (as if guessed): O_EXCL refuses it,
  // and the planted link is not removed either (it is not rxerun's).
  const auto temp = temporary_name(p);
  fs::create_symlink(target, temp);
  auto f = AtomicFile::create_at(p, temp, "capture");
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().code == EEXIST);
  CHECK(fs::is_symlink(temp));
  CHECK(slurp(target) == "keep me\n");
}

TEST_CASE("base.files: temporary names are unpredictable and next to the target") {
  const fs::path p = "/some/dir/file.pcap";
  const auto a = temporary_name(p), b = temporary_name(p);
  CHECK(a != b);
  CHECK(a.parent_path() == p.parent_path());
  CHECK(a.string().starts_with("/some/dir/file.pcap.rxerun-"));
  CHECK(a.string().size() == p.string().size() + 8 + 8);
}

TEST_CASE("base.files: AtomicFile streams, commits by rename, and aborts without a trace") {
  TempDir d;
  const auto p = d.path / "cap.pcap";
  {
    auto f = AtomicFile::create(p, "capture");
    REQUIRE(f.ok());
    CHECK(f->temp_path().parent_path() == d.path);
    REQUIRE(f->write("abc").ok());
    REQUIRE(::write(f->fd(), "def", 3) == 3);
    CHECK_FALSE(fs::exists(p));  // a reader sees nothing until the commit
    REQUIRE(f->commit().ok());
    CHECK(f->fd() == -1);
  }
  CHECK(slurp(p) == "abcdef");
  CHECK(entries(d.path) == 1);

  {
    auto f = AtomicFile::create(p, "capture");
    REQUIRE(f.ok());
    REQUIRE(f->write("half").ok());
    f->abort();
    CHECK_FALSE(fs::exists(f->temp_path()));
  }
  {
    auto f = AtomicFile::create(p, "capture");
    REQUIRE(f.ok());
    REQUIRE(f->write("dropped by the destructor").ok());
  }
  CHECK(slurp(p) == "abcdef");
  CHECK(entries(d.path) == 1);
}

TEST_CASE("base.files: a link that appears before the commit is refused, the temporary removed") {
  TempDir d;
  const auto target = d.path / "precious";
  spit(target, "keep me\n");
  const auto p = d.path / "cap.pcap";
  auto f = AtomicFile::create(p, "capture");
  REQUIRE(f.ok());
  REQUIRE(f->write("frames").ok());
  fs::create_symlink(target, p);
  auto r = f->commit();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ELOOP);
  CHECK(slurp(target) == "keep me\n");
  CHECK(fs::is_symlink(p));
  CHECK(entries(d.path) == 2);
}

TEST_CASE("base.files: failures name the file and leave nothing") {
  TempDir d;
  auto r = write_file_atomic(d.path / "missing" / "r.json", "x", "report");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ENOENT);
  CHECK(r.error().message ==
        "cannot write report " + (d.path / "missing" / "r.json").string() + ": No such file or directory");
  // A non-empty directory cannot be replaced by a file.
  fs::create_directories(d.path / "taken" / "child");
  r = write_file_atomic(d.path / "taken", "x", "report");
  REQUIRE_FALSE(r.ok());
  CHECK(entries(d.path) == 1);
}

TEST_CASE("base.files: modes follow the umask unless told otherwise") {
  TempDir d;
  const mode_t old = ::umask(027);
  REQUIRE(write_file_atomic(d.path / "a", "x", "report").ok());
  REQUIRE(write_file_atomic(d.path / "b", "x", "kernel cache file", 0644, Umask::Ignore).ok());
  ::umask(old);
  struct stat st {};
  REQUIRE(::stat((d.path / "a").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  REQUIRE(::stat((d.path / "b").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
}

TEST_CASE("base.files: copy_file_atomic copies regular files only, never through links") {
  TempDir d;
  spit(d.path / "from", std::string(200'000, 'x'));
  REQUIRE(copy_file_atomic(d.path / "from", d.path / "to", "output file").ok());
  CHECK(slurp(d.path / "to") == std::string(200'000, 'x'));

  // A link as the source (a guest could plant one in the share) is not read.
  spit(d.path / "secret", "secret\n");
  fs::create_symlink(d.path / "secret", d.path / "link-from");
  auto r = copy_file_atomic(d.path / "link-from", d.path / "copy", "output file");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ELOOP);
  CHECK_FALSE(fs::exists(d.path / "copy"));

  // A link as the target is refused.
  fs::create_symlink(d.path / "secret", d.path / "link-to");
  r = copy_file_atomic(d.path / "from", d.path / "link-to", "report");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ELOOP);
  CHECK(slurp(d.path / "secret") == "secret\n");
}

TEST_CASE("base.files: rename_leftover keeps what a crashed writer wrote") {
  TempDir d;
  const auto p = d.path / "cap.pcap";
  const auto temp = temporary_name(p);
  CHECK(rename_leftover(temp, p, "capture").value() == false);  // nothing there: nothing to do
  spit(temp, "frames");
  CHECK(rename_leftover(temp, p, "capture").value() == true);
  CHECK(slurp(p) == "frames");
  CHECK_FALSE(fs::exists(temp));

  // A link where the leftover should be is not renamed into place.
  fs::create_symlink(d.path / "elsewhere", temp);
  auto r = rename_leftover(temp, p, "capture");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == EINVAL);
  CHECK(slurp(p) == "frames");

  // Under a "directory" that is a file the leftover can never have been made
  // (a capture whose --output-dir was a file): nothing to do, not an error.
  spit(d.path / "plain", "x");
  const auto under_file = d.path / "plain" / "cap.pcap";
  CHECK(rename_leftover(temporary_name(under_file), under_file, "capture").value() == false);
}
