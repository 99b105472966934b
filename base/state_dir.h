#pragma once
// The state directory: where rxerun keeps what a later process must trust
// (the cleanup journal and its lock). Whoever can write there can make
// cleanup undo what they choose, so it must be the user's own: a directory
// (not a symbolic link) that belongs to the effective uid and has no group
// or other permission bits. It is created (mode 0700) when missing, the last
// component only: a missing parent is not rxerun's to make. Files in it are
// opened relative to it, never through a symbolic link, and must be regular
// files.

#include <string>

#include "base/fd.h"
#include "base/result.h"

namespace rxerun {

// Where journals and locks live: $RXERUN_STATE_DIR when set, /run/rxerun for
// root, else $XDG_RUNTIME_DIR/rxerun or /tmp/rxerun-UID.
std::string default_state_dir();

// A state directory, opened and checked.
struct StateDir {
  // As given, less trailing slashes ("DIR/" would follow DIR when it is a
  // symbolic link, O_NOFOLLOW or not): the name messages use.
  std::string path;
  UniqueFd fd;  // every file in it is opened relative to this
};

// Opens `dir` as a state directory (creating its last component, mode
// 0700, when missing) and checks that it is the user's own; or says what to
// fix.
Result<StateDir> open_state_dir(const std::string& dir);

// The file `name` in `dir`, opened with `flags` (plus O_NOFOLLOW,
// O_NONBLOCK and O_CLOEXEC; mode 0600 when created); refused when it is a
// symbolic link or not a regular file (a FIFO planted there cannot hang the
// open: O_NONBLOCK).
Result<UniqueFd> open_state_file(const StateDir& dir, const std::string& name, int flags);

}  // namespace rxerun
