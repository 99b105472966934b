#pragma once
// The kernel's log (/dev/kmsg, what dmesg reads): the lines the RDMA stack
// printed (rdma_rxe, ib_core, rdma_cm and the devices they name), for the
// diagnostics of a failed run. Reading needs root where
// kernel.dmesg_restrict is set; without it the lists are empty.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rxerun::sys {

// Whether a kernel log message came from the RDMA stack.
bool is_rdma_kernel_message(std::string_view message);

// Whether a kernel log message came from the NVMe stack (host or target).
bool is_nvme_kernel_message(std::string_view message);

// Now on the kernel log's clock (CLOCK_MONOTONIC, microseconds).
std::uint64_t kernel_log_now();

// The RDMA stack's messages logged at or after `since` (kernel_log_now()'s
// clock), oldest first, as dmesg prints them: "[   12.345678] rdma_rxe: loaded".
std::vector<std::string> rdma_kernel_messages(std::uint64_t since = 0);
// The same for the NVMe stack's messages.
std::vector<std::string> nvme_kernel_messages(std::uint64_t since = 0);

}  // namespace rxerun::sys
