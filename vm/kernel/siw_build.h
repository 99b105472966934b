#pragma once
// soft-iWARP for the lab VM's kernels. Debian builds its kernels without
// CONFIG_RDMA_SIW, so `vm setup` builds siw as an out-of-tree module, from
// the kernel's own version of Debian's linux-source (only
// drivers/infiniband/sw/siw is unpacked) against its linux-headers and
// linux-kbuild, with the compiler those headers name. The module goes to
// ROOT/lib/modules/RELEASE/updates/siw.ko and depmod runs again; the guest
// then loads it like any other module (unsigned: the kernel notes the taint
// and loads it, as Debian does not force signatures).
//
// The outcome is recorded in KERNELDIR/siw.json: built (and from what), or
// not possible and why (no such package on the mirror, a compiler
// the host has not). A failure that may pass next time (a download) records
// nothing, so the next `vm setup` tries again.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "base/result.h"
#include "vm/kernel/apt_private.h"
#include "vm/kernel/cache.h"

namespace rxerun::vm {

struct SiwStatus {
  bool available = false;  // the guest can load siw
  std::string how;         // "built into 6.1.0-57-amd64", "built from linux-source-6.1 6.1.192-3"
  std::string why_not;     // when !available: the reason, in words
};

// The recorded outcome; nullopt when there is none yet (or it cannot be read).
std::optional<SiwStatus> load_siw_status(const std::filesystem::path& kernel_dir);

// Gives `kernel` siw when it has none, recording the outcome. An error is
// one to retry later (nothing recorded); a build that cannot be done is a
// recorded SiwStatus with why_not.
Result<SiwStatus> ensure_siw(const PreparedKernel& kernel, PrivateApt& apt,
                             const std::function<void(const std::string&)>& tell, int interrupt_fd);

// The compiler a linux-headers tree's .kernelvariables names ("gcc-12"),
// or "" when it names none.
std::string headers_compiler(const std::string& kernelvariables);

}  // namespace rxerun::vm
