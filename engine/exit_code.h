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

// Of two exit codes, the one a summary reports (several runs of a suite):
// interrupted, then usage, then environment or step error, then residue,
// then a failed expectation, then success; the order a single run's code
// follows too (an error wins over residue, residue over a failure).
constexpr int worse_exit_code(int a, int b) {
  auto rank = [](int code) {
    switch (code) {
      case kExitOk: return 0;
      case kExitFailed: return 1;
      case kExitResidue: return 2;
      case kExitEnvironment: return 3;
      case kExitUsage: return 4;
      case kExitInterrupted: return 5;
      default: return 3;  // a code rxerun does not give (a guest killed by a signal): an error
    }
  };
  return rank(b) > rank(a) ? b : a;
}

}  // namespace rxerun
