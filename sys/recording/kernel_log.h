#pragma once
// The kernel's log for `rxerun plan` (sys/recording/system.h): a plan runs
// nothing, so the kernel reports nothing of it.

#include "sys/kernel_log.h"

namespace rxerun::sys {

class RecordingKernelLog final : public KernelLog {
 public:
  std::uint64_t now() override { return 0; }
  std::vector<KernelRecord> records(std::uint64_t) override { return {}; }
  std::string release() override { return ""; }
};

}  // namespace rxerun::sys
