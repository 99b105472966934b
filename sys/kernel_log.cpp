#include "sys/kernel_log.h"

#include <fcntl.h>
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

std::uint64_t kernel_log_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

namespace {

std::vector<std::string> kernel_messages_of(std::uint64_t since, bool (*pick)(std::string_view)) {
  std::vector<std::string> out;
  int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    if (n < 0 && errno == EPIPE) continue;  // overwritten records: go on with the next
    if (n <= 0) break;
    std::string_view rec(buf, static_cast<std::size_t>(n));
    // "PRI,SEQ,USEC,FLAGS;message\n KEY=VALUE\n..."
    const auto semi = rec.find(';');
    if (semi == std::string_view::npos) continue;
    std::string_view head = rec.substr(0, semi);
    std::string_view msg = rec.substr(semi + 1);
    msg = msg.substr(0, msg.find('\n'));
    if (!pick(msg)) continue;
    unsigned long long usec = 0;
    const auto c1 = head.find(',');
    const auto c2 = c1 == std::string_view::npos ? c1 : head.find(',', c1 + 1);
    if (c2 != std::string_view::npos) usec = std::strtoull(std::string(head.substr(c2 + 1)).c_str(), nullptr, 10);
    if (usec < since) continue;
    char ts[32];
    std::snprintf(ts, sizeof ts, "[%5llu.%06llu] ", usec / 1000000, usec % 1000000);
    out.push_back(ts + std::string(msg));
  }
  ::close(fd);
  return out;
}

}  // namespace

std::vector<std::string> rdma_kernel_messages(std::uint64_t since) {
  return kernel_messages_of(since, is_rdma_kernel_message);
}

std::vector<std::string> nvme_kernel_messages(std::uint64_t since) {
  return kernel_messages_of(since, is_nvme_kernel_message);
}

}  // namespace rxerun::sys
