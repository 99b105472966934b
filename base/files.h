#pragma once
// Files rxerun writes for people and tools to read (reports, pcap captures,
// files brought back from the lab VM, the kernel cache), all through this
// one door:
// - never through a symbolic link at the final component: such a path is
//   refused with a message, so that a link planted where a report goes
//   cannot make rxerun (often root) overwrite the file it points to;
// - into a temporary file created next to the target with O_CREAT|O_EXCL|
//   O_NOFOLLOW under an unpredictable name (a link planted at a guessable
//   PATH.tmp cannot redirect it), fsynced and then renamed over the target,
//   so that a reader sees the old file or the whole new one, never half.

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/fd.h"
#include "base/result.h"

namespace rxerun {

// Whether the process umask applies to a new file's mode (as for open(2)),
// or the mode is set exactly (a cache other users must be able to read).
enum class Umask { Apply, Ignore };

// ELOOP with a message naming `path`, what it links to and what to do when
// its final component is a symbolic link; ok when it is anything else or
// does not exist. `what` says what the file is for ("report", "capture").
Result<void> refuse_symlink(const std::filesystem::path& path, std::string_view what);

// A file being written aside, to be renamed into place by commit(). The
// temporary file is removed by abort() or by the destructor of one never
// committed; a process that dies in between leaves it as PATH.rxerun-XXXXXXXX.
class AtomicFile {
 public:
  // Creates the temporary file for `path` in path's directory. Refuses a
  // `path` that is a symbolic link (refuse_symlink).
  static Result<AtomicFile> create(const std::filesystem::path& path, std::string_view what, unsigned mode = 0666,
                                   Umask umask = Umask::Apply);
  // As create(), at a temporary name chosen earlier by temporary_name(), so
  // that a journal can record it before the file exists.
  static Result<AtomicFile> create_at(const std::filesystem::path& path, const std::filesystem::path& temp,
                                      std::string_view what, unsigned mode = 0666, Umask umask = Umask::Apply);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() { abort(); }

  const std::filesystem::path& path() const { return path_; }
  const std::filesystem::path& temp_path() const { return temp_; }
  // The temporary file's descriptor, for a writer that needs one; -1 after
  // commit() or abort().
  int fd() const { return fd_.get(); }

  // Writes all of `data` (retrying short writes and EINTR).
  Result<void> write(std::string_view data);
  // fsync, close, and rename over path(), unless path() has become a
  // symbolic link since create() (then ELOOP, and the temporary file is
  // removed). On any error the temporary file is removed.
  Result<void> commit();
  // Closes and removes the temporary file; no-op once committed.
  void abort();

 private:
  AtomicFile(std::filesystem::path path, std::filesystem::path temp, std::string what, UniqueFd fd)
      : path_(std::move(path)), temp_(std::move(temp)), what_(std::move(what)), fd_(std::move(fd)) {}
  Error io_error(std::string_view doing, const std::filesystem::path& file, int code) const;

  std::filesystem::path path_;
  std::filesystem::path temp_;
  std::string what_;
  UniqueFd fd_;
  bool done_ = false;
};

// `length` letters and digits from getrandom(2): a name nobody can guess.
std::string random_name(std::size_t length);

// PATH.rxerun-XXXXXXXX in path's directory, the Xs from getrandom(2): a name
// nobody can guess ahead of time.
std::filesystem::path temporary_name(const std::filesystem::path& path);

// Renames `temp`, the temporary file of an AtomicFile whose process ended
// before commit() (a crash), to `path`, so that what was written is kept;
// false when `temp` is gone (or never could be: a directory on its path is a
// file). A `temp` that is not a regular file, or a
// `path` that is a symbolic link, is left alone (EINVAL, ELOOP).
Result<bool> rename_leftover(const std::filesystem::path& temp, const std::filesystem::path& path,
                             std::string_view what);

// A whole file, written atomically as above.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view data, std::string_view what,
                               unsigned mode = 0666, Umask umask = Umask::Apply);

// Copies the regular file `from` (not followed when it is a symbolic link)
// to `to`, atomically as above.
Result<void> copy_file_atomic(const std::filesystem::path& from, const std::filesystem::path& to, std::string_view what,
                              unsigned mode = 0666, Umask umask = Umask::Apply);

// Reading: the bytes of `path`, at most `max_bytes` of them (reading stops
// one byte past, so that /dev/zero or a huge file costs no more than that).
// Refuses a directory. Messages call the file "the WHAT" ("the scenario").
Result<std::string> read_file_capped(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what);

// The kernel's id of this boot (/proc/sys/kernel/random/boot_id); "" where
// /proc does not say. A pid or a file noted in an earlier boot means nothing now.
std::string kernel_boot_id();

// Whether a line of the text file at `path` holds `needle` (modules.dep,
// /proc/modules); false when the file cannot be read.
bool file_mentions(const std::filesystem::path& path, std::string_view needle);

}  // namespace rxerun
