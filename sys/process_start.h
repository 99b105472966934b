#pragma once
// What tells a process from a later one that was given its pid: the time it
// started, in clock ticks after boot (/proc/PID/stat, field 22), which never
// changes while the process lives. A pid with its start time is what a
// journal records to stop a process it started, and no other, in a later
// rxerun.

#include <sys/types.h>

#include <cstdint>

#include "base/result.h"

namespace rxerun::sys {

// ESRCH when there is no such process (or it has been reaped); EINVAL for a
// pid that cannot be one.
Result<std::uint64_t> process_start_time(pid_t pid);

}  // namespace rxerun::sys
