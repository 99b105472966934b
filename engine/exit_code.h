#pragma once
// rxerun's exit codes: the one definition, used by the runner (a run's code
// from what it did) and by the command line (usage errors, the subcommands).

namespace rxerun {

inline constexpr int kExitOk = 0;             // every expectation held and cleanup left nothing
inline constexpr int kExitFailed = 1;         // an expectation failed
inline constexpr int kExitUsage = 2;          // usage or scenario invalid; nothing on the host touched
inline constexpr int kExitEnvironment = 3;    // environment or step error
inline constexpr int kExitResidue = 4;        // cleanup left something behind (wins over 0 and 1)
inline constexpr int kExitInterrupted = 130;  // interrupted, after cleanup ran

}  // namespace rxerun
