#pragma once
// sysctl through /proc/sys (the kernel's own interface; what sysctl(8) does).

#include "sys/sysctl.h"

namespace rxerun::sys {

class ProcSysctl final : public Sysctl {
 public:
  Result<std::string> read(const std::string& key) override;
  Result<void> write(const std::string& key, const std::string& value) override;
};

}  // namespace rxerun::sys
