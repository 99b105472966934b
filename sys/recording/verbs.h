#pragma once
// Verbs for `rxerun plan` (sys/recording/system.h): notes the check in words (it
// has no shell equivalent: rxerun does it with librdmacm and libibverbs
// itself) and answers as if every byte arrived.

#include "sys/verbs.h"

namespace rxerun::sys {

class ActionLog;

class RecordingVerbs final : public Verbs {
 public:
  explicit RecordingVerbs(ActionLog& log) : log_(log) {}
  Result<VerbsResult> run(const VerbsRequest& request, SteadyTime deadline, Interrupt& interrupt) override;

  // "verbs check 10.10.0.2 in netns b -> 10.10.0.1:18515 in netns a: send, write, read; sizes 64, 4096"
  static std::string describe(const VerbsRequest& request);

 private:
  ActionLog& log_;
};

}  // namespace rxerun::sys
