#include "sys/kernel_log.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace rxerun::sys {

bool is_rdma_kernel_message(std::string_view m) {
  for (std::string_view p : {"rdma_rxe", "rxe", "ib_core", "rdma_cm", "rdma_ucm", "ib_uverbs", "infiniband ", "ib_cm"})
    if (m.starts_with(p)) return true;
  return false;
}

bool is_nvme_kernel_message(std::string_view m) {
  for (std::string_view p : {"nvme ", "nvme_", "nvmet", "nvme-", "null_blk"})
    if (m.starts_with(p)) return true;
  return false;
}

bool is_srp_kernel_message(std::string_view m) {
  for (std::string_view p :
       {"ib_srp", "scsi host", "scsi ", "sd ", "srp", "SRP", "target_core", "TARGET_CORE", "ib_srpt"})
    if (m.starts_with(p)) return true;
  return false;
}

bool is_nfs_kernel_message(std::string_view m) {
  // Module loads' chatter ("RPC: Registered rdma transport module.") says nothing of a mount.
  if (m.find("egistered ") != std::string_view::npos || m.find("egistering ") != std::string_view::npos) return false;
  for (std::string_view p : {"NFS", "nfs", "RPC", "rpcrdma", "svcrdma", "lockd"})
    if (m.starts_with(p)) return true;
  return false;
}

std::uint64_t kernel_log_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

std::optional<KernelRecord> parse_kmsg_record(std::string_view rec) {
  // "PRI,SEQ,USEC,FLAGS;message\n KEY=VALUE\n..."
  const auto semi = rec.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  const std::string head(rec.substr(0, semi));
  std::string_view msg = rec.substr(semi + 1);
  msg = msg.substr(0, msg.find('\n'));
  const auto c1 = head.find(',');
  const auto c2 = c1 == std::string::npos ? c1 : head.find(',', c1 + 1);
  if (c2 == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const unsigned long prio = std::strtoul(head.c_str(), &end, 10);
  if (end != head.c_str() + c1) return std::nullopt;
  KernelRecord r;
  r.facility = static_cast<int>(prio >> 3);
  r.level = static_cast<int>(prio & 7);
  r.usec = std::strtoull(head.c_str() + c2 + 1, nullptr, 10);
  r.message = std::string(msg);
  return r;
}

std::string dmesg_line(const KernelRecord& r) {
  char ts[40];
  std::snprintf(ts, sizeof ts, "[%5llu.%06llu] ", static_cast<unsigned long long>(r.usec / 1000000),
                static_cast<unsigned long long>(r.usec % 1000000));
  return ts + r.message;
}

std::vector<KernelRecord> kernel_records(std::uint64_t since) {
  std::vector<KernelRecord> out;
  int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    if (n < 0 && errno == EPIPE) continue;  // overwritten records: go on with the next
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    auto r = parse_kmsg_record(std::string_view(buf, static_cast<std::size_t>(n)));
    if (r && r->usec >= since) out.push_back(std::move(*r));
  }
  ::close(fd);
  return out;
}

namespace {

std::vector<std::string> kernel_messages_of(std::uint64_t since, bool (*pick)(std::string_view)) {
  std::vector<std::string> out;
  for (const auto& r : kernel_records(since))
    if (pick(r.message)) out.push_back(dmesg_line(r));
  return out;
}

}  // namespace

std::vector<std::string> rdma_kernel_messages(std::uint64_t since) {
  return kernel_messages_of(since, is_rdma_kernel_message);
}

std::vector<std::string> nvme_kernel_messages(std::uint64_t since) {
  return kernel_messages_of(since, is_nvme_kernel_message);
}

std::vector<std::string> srp_kernel_messages(std::uint64_t since) {
  return kernel_messages_of(since, is_srp_kernel_message);
}

std::string RealKernelLog::release() {
  utsname u{};
  if (::uname(&u) != 0) return "";
  return u.release;
}

}  // namespace rxerun::sys
