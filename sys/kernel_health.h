#pragma once
// The kernel's reports of its own trouble, found in its log: WARNING, BUG,
// Oops, KASAN, UBSAN, refcount_t, lockdep, hung tasks, RCU stalls, general
// protection faults and panics. A report is its header line and what the
// kernel printed after it (the call trace), up to "---[ end ... ]---" or a
// bounded number of lines. Only the kernel's own records count: a program
// can write anything into /dev/kmsg (facility LOG_USER and up), and a line
// that merely contains the words ("rdma_rxe: warning: ...") is no report.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/kernel_log.h"

namespace rxerun::sys {

enum class KernelReportKind {
  Warning,            // WARNING: CPU: 0 PID: 123 at drivers/...
  Bug,                // BUG: unable to handle page fault, scheduling while atomic, kernel BUG at, soft lockup
  Oops,               // Oops: 0000 [#1] SMP
  Kasan,              // BUG: KASAN: use-after-free in ...
  Ubsan,              // UBSAN: array-index-out-of-bounds in ...
  Refcount,           // refcount_t: underflow; use-after-free.
  Lockdep,            // WARNING: possible circular locking dependency detected
  HungTask,           // INFO: task X:123 blocked for more than 120 seconds.
  RcuStall,           // rcu: INFO: rcu_sched detected stalls on CPUs/tasks
  GeneralProtection,  // general protection fault, probably for non-canonical address ...
  Panic,              // Kernel panic - not syncing: ...
};

// "WARNING", "BUG", "Oops", "KASAN", "UBSAN", "refcount_t", "lockdep",
// "hung task", "RCU stall", "general protection fault", "kernel panic".
std::string_view to_string(KernelReportKind kind);

// The kind of report a kernel message begins, if it begins one. The message
// is the record's text, without the "[   12.345678] " of dmesg.
std::optional<KernelReportKind> kernel_report_kind(std::string_view message);

struct KernelReport {
  KernelReportKind kind = KernelReportKind::Warning;
  std::uint64_t usec = 0;          // the header's time, kernel_log_now()'s clock
  std::vector<std::string> lines;  // the header first, as dmesg prints them; at most kKernelReportLines
};

// The lines of a report kept (header first); what follows is counted in a
// last line "... N more lines".
inline constexpr std::size_t kKernelReportLines = 40;

// The reports among `records` (oldest first), in order. Records written by
// programs are left out.
std::vector<KernelReport> find_kernel_reports(const std::vector<KernelRecord>& records);

// The same in console text (the lab VM's serial console, "[   12.345678]
// message" a line), where no facility is told: for a guest that died.
std::vector<KernelReport> find_kernel_reports_in_console(const std::vector<std::string>& lines);

}  // namespace rxerun::sys
