#pragma once
// The kernel's log (/dev/kmsg, what dmesg reads): its records with their
// facility and time, the lines the RDMA and NVMe stacks printed (for the
// diagnostics of a failed run), and the KernelLog service the runner reads
// the kernel's reports of its own time window through (sys/kernel_health.h
// finds them). Reading needs root where kernel.dmesg_restrict is set;
// without it the lists are empty.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rxerun::sys {

// Whether a kernel log message came from the RDMA stack.
bool is_rdma_kernel_message(std::string_view message);

// Whether a kernel log message came from the NVMe stack (host or target).
bool is_nvme_kernel_message(std::string_view message);

// Whether a kernel log message came from the SCSI RDMA Protocol's stack
// (ib_srp, ib_srpt, LIO, the SCSI midlayer and its disks).
bool is_srp_kernel_message(std::string_view message);

// Whether a kernel log message came from NFS, nfsd or their RPC layer (not
// a module's registration of a transport or a key type).
bool is_nfs_kernel_message(std::string_view message);

// Now on the kernel log's clock (CLOCK_MONOTONIC, microseconds).
std::uint64_t kernel_log_now();

// One record of the kernel's log.
struct KernelRecord {
  int facility = 0;        // 0: the kernel itself; 1 (LOG_USER) and up: written to /dev/kmsg by a program
  int level = 6;           // 0 (emerg) to 7 (debug)
  std::uint64_t usec = 0;  // kernel_log_now()'s clock
  std::string message;     // the text, without the record's KEY=VALUE lines
  bool from_kernel() const { return facility == 0; }
};

// One record as /dev/kmsg gives it ("PRI,SEQ,USEC,FLAGS;message\n KEY=VALUE\n");
// nullopt when it is not one.
std::optional<KernelRecord> parse_kmsg_record(std::string_view record);

// "[   12.345678] message", as dmesg prints a record.
std::string dmesg_line(const KernelRecord& record);

// Every record logged at or after `since` (kernel_log_now()'s clock), of
// every facility, oldest first.
std::vector<KernelRecord> kernel_records(std::uint64_t since = 0);

// The RDMA stack's messages logged at or after `since` (kernel_log_now()'s
// clock), oldest first, as dmesg prints them: "[   12.345678] rdma_rxe: loaded".
std::vector<std::string> rdma_kernel_messages(std::uint64_t since = 0);
// The same for the NVMe stack's messages, and for SRP's.
std::vector<std::string> nvme_kernel_messages(std::uint64_t since = 0);
std::vector<std::string> srp_kernel_messages(std::uint64_t since = 0);

// The kernel's log as the runner reads it: its clock (to note when each
// step ran) and its records of a time window.
class KernelLog {
 public:
  virtual ~KernelLog() = default;
  virtual std::uint64_t now() = 0;  // CLOCK_MONOTONIC microseconds, the records' clock
  virtual std::vector<KernelRecord> records(std::uint64_t since) = 0;
  virtual std::string release() = 0;  // the running kernel's, as uname -r prints it
};

// /dev/kmsg and uname(2).
class RealKernelLog final : public KernelLog {
 public:
  std::uint64_t now() override { return kernel_log_now(); }
  std::vector<KernelRecord> records(std::uint64_t since) override { return kernel_records(since); }
  std::string release() override;
};

}  // namespace rxerun::sys
