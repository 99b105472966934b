// The kernel's reports of its own trouble, found in recorded kernel logs:
// one real-looking report of every kind, and lines that only look like one.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sys/kernel_health.h"
#include "sys/kernel_log.h"

using namespace rxerun::sys;

namespace {

// Records of the kernel's (facility 0), one per line of `text`, 1 ms apart
// from `start` seconds.
std::vector<KernelRecord> kernel_lines(const std::string& text, double start = 100.0, int facility = 0) {
  std::vector<KernelRecord> out;
  std::uint64_t usec = static_cast<std::uint64_t>(start * 1e6);
  std::size_t from = 0;
  while (from < text.size()) {
    auto nl = text.find('\n', from);
    if (nl == std::string::npos) nl = text.size();
    out.push_back({facility, 4, usec, text.substr(from, nl - from)});
    usec += 1000;
    from = nl + 1;
  }
  return out;
}

std::vector<KernelReport> reports_in(const std::string& text) {
  return find_kernel_reports(kernel_lines(text));
}

const char* kWarning = R"(------------[ cut here ]------------
WARNING: CPU: 0 PID: 412 at drivers/infiniband/sw/rxe/rxe_qp.c:798 rxe_qp_do_cleanup+0x1e5/0x200 [rdma_rxe]
Modules linked in: rdma_rxe ip6_udp_tunnel udp_tunnel ib_core 9p netfs
CPU: 0 PID: 412 Comm: kworker/0:2 Not tainted 6.1.0-27-amd64 #1  Debian 6.1.115-1
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
Workqueue: events rxe_cleanup_task [rdma_rxe]
RIP: 0010:rxe_qp_do_cleanup+0x1e5/0x200 [rdma_rxe]
Call Trace:
 <TASK>
 ? __warn+0x7d/0xc0
 ? rxe_qp_do_cleanup+0x1e5/0x200 [rdma_rxe]
 process_one_work+0x1c4/0x380
 worker_thread+0x4d/0x380
 kthread+0xd7/0x100
 ret_from_fork+0x1f/0x30
 </TASK>
---[ end trace 0000000000000000 ]---
rdma_rxe: unloaded)";

}  // namespace

TEST_CASE("kernel health: a WARNING with its trace up to the end marker") {
  auto r = reports_in(kWarning);
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == KernelReportKind::Warning);
  CHECK(r[0].usec == 100'001'000);  // the header's, not the cut line's
  CHECK(r[0].lines.front() ==
        "[  100.001000] WARNING: CPU: 0 PID: 412 at drivers/infiniband/sw/rxe/rxe_qp.c:798 "
        "rxe_qp_do_cleanup+0x1e5/0x200 [rdma_rxe]");
  CHECK(r[0].lines.back() == "[  100.016000] ---[ end trace 0000000000000000 ]---");
  CHECK(r[0].lines.size() == 16);  // the line after the end marker is not part of it
}

TEST_CASE("kernel health: a page fault BUG and its Oops are one report, the panic after it another") {
  auto r = reports_in(R"(BUG: kernel NULL pointer dereference, address: 0000000000000008
#PF: supervisor read access in kernel mode
#PF: error_code(0x0000) - not-present page
PGD 0 P4D 0
Oops: 0000 [#1] PREEMPT SMP NOPTI
CPU: 0 PID: 318 Comm: rping Not tainted 6.1.0-27-amd64 #1  Debian 6.1.115-1
RIP: 0010:rxe_post_send+0x2a/0x560 [rdma_rxe]
Call Trace:
 <TASK>
 ib_uverbs_post_send+0x4be/0x5a0 [ib_uverbs]
 </TASK>
---[ end trace 0000000000000000 ]---
RIP: 0010:rxe_post_send+0x2a/0x560 [rdma_rxe]
Kernel panic - not syncing: Fatal exception
Kernel Offset: disabled
---[ end Kernel panic - not syncing: Fatal exception ]---)");
  REQUIRE(r.size() == 2);
  CHECK(r[0].kind == KernelReportKind::Bug);
  CHECK(r[0].lines.size() == 12);
  CHECK(r[1].kind == KernelReportKind::Panic);
  CHECK(r[1].lines.back().find("---[ end Kernel panic") != std::string::npos);
}

TEST_CASE("kernel health: every kind's header") {
  struct Case {
    const char* line;
    KernelReportKind kind;
  };
  const Case cases[] = {
      {"WARNING: CPU: 1 PID: 77 at net/core/dev.c:10341 netdev_run_todo+0x1a/0x30", KernelReportKind::Warning},
      {"WARNING: at drivers/infiniband/core/cache.c:1250 ib_cache_gid_add+0x10/0x20", KernelReportKind::Warning},
      {"BUG: unable to handle page fault for address: ffffc90000a3f000", KernelReportKind::Bug},
      {"BUG: scheduling while atomic: rping/412/0x00000002", KernelReportKind::Bug},
      {"BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580", KernelReportKind::Bug},
      {"kernel BUG at drivers/infiniband/sw/rxe/rxe_pool.c:224!", KernelReportKind::Bug},
      {"watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [kworker/0:1:33]", KernelReportKind::Bug},
      {"Oops: 0000 [#1] SMP", KernelReportKind::Oops},
      {"BUG: KASAN: slab-use-after-free in rxe_cq_post+0x3c/0x1f0 [rdma_rxe]", KernelReportKind::Kasan},
      {"UBSAN: array-index-out-of-bounds in drivers/infiniband/sw/rxe/rxe_verbs.c:123:9", KernelReportKind::Ubsan},
      {"refcount_t: underflow; use-after-free.", KernelReportKind::Refcount},
      {"refcount_t: addition on 0; use-after-free.", KernelReportKind::Refcount},
      {"WARNING: possible circular locking dependency detected", KernelReportKind::Lockdep},
      {"WARNING: possible recursive locking detected", KernelReportKind::Lockdep},
      {"WARNING: suspicious RCU usage", KernelReportKind::Lockdep},
      {"INFO: task kworker/u2:1:38 blocked for more than 120 seconds.", KernelReportKind::HungTask},
      {"rcu: INFO: rcu_sched detected stalls on CPUs/tasks:", KernelReportKind::RcuStall},
      {"rcu: INFO: rcu_preempt self-detected stall on CPU", KernelReportKind::RcuStall},
      {"INFO: rcu_sched detected stalls on CPUs/tasks: { 0} (detected by 1, t=21002 jiffies)",
       KernelReportKind::RcuStall},
      {"general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT SMP "
       "KASAN",
       KernelReportKind::GeneralProtection},
      {"Oops: general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] SMP NOPTI",
       KernelReportKind::GeneralProtection},
      {"Kernel panic - not syncing: sysrq triggered crash", KernelReportKind::Panic},
  };
  for (const auto& c : cases) {
    CAPTURE(c.line);
    auto kind = kernel_report_kind(c.line);
    REQUIRE(kind.has_value());
    CHECK(*kind == c.kind);
  }
}

TEST_CASE("kernel health: lines that only look like a report are none") {
  for (const char* line : {
           "rdma_rxe: warning: unable to allocate memory for the pool, using the default",
           "ib_core: module parameter warn=1 ignored",
           "DEBUGFS: mounted",
           "nvme nvme0: BUG: ignoring namespace with no size",  // the words, not at the start
           "ACPI: BUGGY firmware (a word with BUG inside)",
           "BUGS: none",
           "WARNING: The kernel was built with a compiler newer than the one in use",
           "INFO: task list updated",
           "rcu: Preemptible hierarchical RCU implementation.",
           "Oopsie: not a kernel word",
           "Kernel panic (not the real thing)",
       }) {
    CAPTURE(line);
    CHECK_FALSE(kernel_report_kind(line).has_value());
  }
  CHECK(reports_in("rdma_rxe: loaded\nrdma_rxe: warning: no gid\nrxe0: added rxe0 to vA").empty());
}

TEST_CASE("kernel health: a program's WARNING written to /dev/kmsg is not the kernel's") {
  // `echo 'WARNING: CPU: 0 PID: 1 at x' > /dev/kmsg` is logged with facility LOG_USER.
  auto records =
      kernel_lines("WARNING: CPU: 0 PID: 1 at fake/file.c:1 fake+0x0/0x0\nKernel panic - not syncing: no", 5.0, 1);
  CHECK(find_kernel_reports(records).empty());
  // The kernel's own, around it, are found.
  auto mixed = kernel_lines("Oops: 0000 [#1] SMP", 6.0);
  mixed.insert(mixed.begin(), records.begin(), records.end());
  auto r = find_kernel_reports(mixed);
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == KernelReportKind::Oops);
}

TEST_CASE("kernel health: /dev/kmsg records are parsed with their facility") {
  auto user = parse_kmsg_record("12,1042,5123456,-;WARNING: CPU: 0 PID: 1 at x\n SUBSYSTEM=x\n");
  REQUIRE(user);
  CHECK(user->facility == 1);
  CHECK(user->level == 4);
  CHECK(user->usec == 5123456);
  CHECK(user->message == "WARNING: CPU: 0 PID: 1 at x");
  CHECK_FALSE(user->from_kernel());
  auto kernel = parse_kmsg_record("4,1043,5123999,-;WARNING: CPU: 0 PID: 1 at x");
  REQUIRE(kernel);
  CHECK(kernel->from_kernel());
  CHECK(dmesg_line(*kernel) == "[    5.123999] WARNING: CPU: 0 PID: 1 at x");
  CHECK_FALSE(parse_kmsg_record("no header here"));
  CHECK_FALSE(parse_kmsg_record("x,1;message"));
}

TEST_CASE("kernel health: a syzbot-style KASAN report ends at its closing rule") {
  auto r = reports_in(R"(==================================================================
BUG: KASAN: slab-use-after-free in rxe_cq_post+0x3c/0x1f0 drivers/infiniband/sw/rxe/rxe_cq.c:88
Read of size 8 at addr ffff88801c2e6f08 by task ksoftirqd/0/15

CPU: 0 PID: 15 Comm: ksoftirqd/0 Not tainted 6.1.0-syzkaller #0
Call Trace:
 <TASK>
 __dump_stack lib/dump_stack.c:88 [inline]
 kasan_report+0xbf/0x1f0 mm/kasan/report.c:588
 rxe_cq_post+0x3c/0x1f0 drivers/infiniband/sw/rxe/rxe_cq.c:88
 </TASK>

Allocated by task 5123:
 kmalloc include/linux/slab.h:600 [inline]

The buggy address belongs to the object at ffff88801c2e6f00
==================================================================
rdma_rxe: unloaded)");
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == KernelReportKind::Kasan);
  CHECK(r[0].lines.back().ends_with("========"));
}

TEST_CASE("kernel health: a lockdep report and a hung task, each with its excerpt") {
  auto r = reports_in(R"(======================================================
WARNING: possible circular locking dependency detected
6.1.0-27-amd64 #1 Not tainted
------------------------------------------------------
rping/431 is trying to acquire lock:
ffff8880047d6a18 (&id_priv->handler_mutex){+.+.}-{3:3}, at: rdma_destroy_id+0x2b/0x60 [rdma_cm]

but task is already holding lock:
ffffffffc0a3b2d0 (lock#4){+.+.}-{3:3}, at: cma_netdev_callback+0x5c/0x190 [rdma_cm])");
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == KernelReportKind::Lockdep);
  CHECK(r[0].lines.front().ends_with("WARNING: possible circular locking dependency detected"));

  auto hung = reports_in(R"(INFO: task kworker/u2:1:38 blocked for more than 120 seconds.
      Not tainted 6.1.0-27-amd64 #1 Debian 6.1.115-1
"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
task:kworker/u2:1    state:D stack:0     pid:38    ppid:2      flags:0x00004000
Call Trace:
 <TASK>
 __schedule+0x34d/0x9e0
 </TASK>)");
  REQUIRE(hung.size() == 1);
  CHECK(hung[0].kind == KernelReportKind::HungTask);
  CHECK(hung[0].lines.size() == 8);
}

TEST_CASE("kernel health: a long report keeps a bounded excerpt and counts the rest") {
  std::string text = "UBSAN: array-index-out-of-bounds in drivers/infiniband/sw/rxe/rxe_verbs.c:123:9\n";
  for (int i = 0; i < 100; ++i) text += " frame_" + std::to_string(i) + "+0x1/0x10\n";
  auto r = reports_in(text);
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == KernelReportKind::Ubsan);
  CHECK(r[0].lines.size() == kKernelReportLines + 1);
  CHECK(r[0].lines.back() == "... 61 more lines");
}

TEST_CASE("kernel health: a later message long after a report is not part of it") {
  auto records = kernel_lines("refcount_t: underflow; use-after-free.\n ib_destroy_qp_user+0x1/0x2", 10.0);
  auto later = kernel_lines("rdma_rxe: loaded", 60.0);
  records.insert(records.end(), later.begin(), later.end());
  auto r = find_kernel_reports(records);
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == KernelReportKind::Refcount);
  CHECK(r[0].lines.size() == 2);
}

TEST_CASE("kernel health: the lab VM's console, a panic with its trace") {
  const std::vector<std::string> console = {
      "rxerun-guest: started",
      "[   21.103244] sysrq: Trigger a crash",
      "[   21.103872] Kernel panic - not syncing: sysrq triggered crash",
      "[   21.104361] CPU: 0 PID: 231 Comm: sh Not tainted 6.1.0-27-amd64 #1  Debian 6.1.115-1",
      "[   21.105110] Call Trace:",
      "[   21.105291]  <TASK>",
      "[   21.105428]  dump_stack_lvl+0x44/0x5c",
      "[   21.105690]  panic+0x118/0x2ed",
      "[   21.105906]  sysrq_handle_crash+0x16/0x20",
      "[   21.106150]  </TASK>",
      "[   21.106740] Kernel Offset: disabled",
      "[   21.107012] ---[ end Kernel panic - not syncing: sysrq triggered crash ]---",
  };
  auto r = find_kernel_reports_in_console(console);
  REQUIRE(r.size() == 1);
  CHECK(r[0].kind == KernelReportKind::Panic);
  CHECK(r[0].usec == 21'103'872);
  CHECK(r[0].lines.size() == 10);
  CHECK(r[0].lines.front() == "[   21.103872] Kernel panic - not syncing: sysrq triggered crash");
  // With the caller id (CONFIG_PRINTK_CALLER) after the time.
  auto caller = find_kernel_reports_in_console({"[   30.000001][  T231] Oops: 0000 [#1] SMP"});
  REQUIRE(caller.size() == 1);
  CHECK(caller[0].kind == KernelReportKind::Oops);
}
