// base/state_dir.h on its own: the directory's path as messages name it, its
// files opened relative to the directory checked on open (not through its
// path again), and what is refused. tests/engine/test_journal.cpp shows the
// same rules through Journal::open, with every message.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "base/state_dir.h"

using namespace rxerun;
namespace fs = std::filesystem;

namespace {

fs::path fresh_state_dir(const char* tag) {
  auto d = fs::temp_directory_path() / (std::string("rxerun-state-dir-") + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

// Sets an environment variable for the scope's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("base.state_dir: RXERUN_STATE_DIR names the directory when set") {
  ScopedEnv env("RXERUN_STATE_DIR", "/somewhere/else");
  CHECK(default_state_dir() == "/somewhere/else");
}

TEST_CASE("base.state_dir: the path loses its trailing slashes, and the directory is made 0700") {
  const auto dir = fresh_state_dir("path");
  auto state = open_state_dir(dir.string() + "//");
  REQUIRE(state);
  CHECK(state->path == dir.string());
  CHECK(state->fd.valid());
  struct stat st {};
  REQUIRE(::fstat(state->fd.get(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 07777) == 0700);
  auto none = open_state_dir("");
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "no state directory: set RXERUN_STATE_DIR to a directory of your own");
  fs::remove_all(dir);
}

TEST_CASE("base.state_dir: files are opened in the directory that was checked, even when its path moves") {
  const auto dir = fresh_state_dir("moved");
  auto state = open_state_dir(dir.string());
  REQUIRE(state);
  const auto moved = fresh_state_dir("moved-away");
  fs::rename(dir, moved);
  fs::create_directory(dir);  // a namesake at the checked path
  auto file = open_state_file(*state, "lab.lock", O_RDWR | O_CREAT);
  REQUIRE(file);
  CHECK(fs::exists(moved / "lab.lock"));
  CHECK(fs::is_empty(dir));
  struct stat st {};
  REQUIRE(::fstat(file->get(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  fs::remove_all(dir);
  fs::remove_all(moved);
}

TEST_CASE("base.state_dir: a file that is a link, a FIFO or a directory is refused") {
  const auto dir = fresh_state_dir("files");
  auto state = open_state_dir(dir.string());
  REQUIRE(state);
  fs::create_symlink(dir / "nowhere", dir / "link");
  auto link = open_state_file(*state, "link", O_RDWR | O_CREAT);
  REQUIRE_FALSE(link);
  CHECK(link.error().message ==
        (dir / "link").string() + " is a symbolic link; remove it (rxerun never writes through one)");
  CHECK_FALSE(fs::exists(dir / "nowhere"));
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  auto fifo = open_state_file(*state, "fifo", O_RDWR);  // must not hang
  REQUIRE_FALSE(fifo);
  CHECK(fifo.error().message == (dir / "fifo").string() + " is not a regular file; remove it");
  fs::create_directory(dir / "sub");
  auto sub = open_state_file(*state, "sub", O_RDONLY);
  REQUIRE_FALSE(sub);
  CHECK(sub.error().message == (dir / "sub").string() + " is not a regular file; remove it");
  auto missing = open_state_file(*state, "missing", O_RDONLY);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ENOENT);
  fs::remove_all(dir);
}
