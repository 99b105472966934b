#pragma once
// The lab VM's kernels, all of it: which Debian kernels rxerun knows
// (catalogue.h), where prepared ones live (cache.h), how one is prepared
// (setup.h), and kernels of one's own (own_kernel.h).

#include "vm/kernel/cache.h"
#include "vm/kernel/catalogue.h"
#include "vm/kernel/own_kernel.h"
#include "vm/kernel/setup.h"
