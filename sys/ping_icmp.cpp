#include "sys/ping_icmp.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "base/fd.h"
#include "sys/interrupt.h"

namespace rxerun::sys {

namespace {

constexpr std::uint8_t kEchoRequest4 = 8;
constexpr std::uint8_t kEchoReply4 = 0;
constexpr std::uint8_t kEchoRequest6 = 128;
constexpr std::uint8_t kEchoReply6 = 129;
constexpr std::size_t kHeaderBytes = 8;    // type, code, checksum, identifier, sequence
constexpr std::size_t kPayloadBytes = 56;  // as ping(8): 64 bytes of ICMP in all
constexpr std::size_t kStampBytes = 24;    // CLOCK_MONOTONIC seconds and nanoseconds, then the nonce

// <linux/icmp.h>'s raw-socket type filter; that header clashes with <net/if.h>.
constexpr int kIcmpFilter = 1;  // ICMP_FILTER, at level SOL_RAW
struct IcmpFilter {
  std::uint32_t data;  // a set bit blocks that ICMP type
};

// An IPv4 or IPv6 socket address, parsed from text.
struct SockAddress {
  sockaddr_storage storage{};
  socklen_t len = 0;
  int family() const { return storage.ss_family; }
  sockaddr* sa() { return reinterpret_cast<sockaddr*>(&storage); }
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&storage); }
  sockaddr_in* v4() { return reinterpret_cast<sockaddr_in*>(&storage); }
  sockaddr_in6* v6() { return reinterpret_cast<sockaddr_in6*>(&storage); }
};

std::optional<SockAddress> parse_sock_address(const std::string& text) {
  SockAddress a;
  if (::inet_pton(AF_INET, text.c_str(), &a.v4()->sin_addr) == 1) {
    a.v4()->sin_family = AF_INET;
    a.len = sizeof(sockaddr_in);
    return a;
  }
  if (::inet_pton(AF_INET6, text.c_str(), &a.v6()->sin6_addr) == 1) {
    a.v6()->sin6_family = AF_INET6;
    a.len = sizeof(sockaddr_in6);
    return a;
  }
  return std::nullopt;
}

// Same host address, ports and scope aside.
bool same_host(const sockaddr_storage& a, const SockAddress& b) {
  if (a.ss_family != b.family()) return false;
  if (a.ss_family == AF_INET)
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in&>(b.storage).sin_addr.s_addr;
  return std::memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                     &reinterpret_cast<const sockaddr_in6&>(b.storage).sin6_addr, sizeof(in6_addr)) == 0;
}

std::uint16_t checksum(const std::uint8_t* data, std::size_t len) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < len; i += 2) sum += (std::uint32_t(data[i]) << 8) | data[i + 1];
  if (len & 1) sum += std::uint32_t(data[len - 1]) << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

std::uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000ull + std::uint64_t(ts.tv_nsec);
}

void put_u16(std::uint8_t* p, std::uint16_t v) {
  p[0] = std::uint8_t(v >> 8);
  p[1] = std::uint8_t(v);
}
std::uint16_t get_u16(const std::uint8_t* p) {
  return std::uint16_t((p[0] << 8) | p[1]);
}
void put_u64(std::uint8_t* p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Milliseconds poll() should wait to reach `until`, rounded up so that the
// loop never spins just short of it.
int poll_ms(SteadyTime now, SteadyTime until) {
  if (until <= now) return 0;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(until - now).count();
  auto ms = (ns + 999'999) / 1'000'000;
  return static_cast<int>(std::min<long long>(ms, 60'000));
}

// One echo session: the socket and what has been sent and received so far.
class Session {
 public:
  Session(const PingSpec& spec, SockAddress to) : spec_(spec), to_(to), v6_(to.family() == AF_INET6) {
    std::random_device rd;
    id_ = static_cast<std::uint16_t>(rd());
    nonce_ = (std::uint64_t(rd()) << 32) | rd();
    replied_.assign(std::size_t(std::max(spec.count, 0)) + 1, false);
  }

  Result<void> open();
  void send_one();
  void drain();
  PingResult result() const;

  int fd() const { return fd_.get(); }
  int sent() const { return sent_; }
  int in_flight() const { return sent_ - send_errors_; }
  int received() const { return received_; }

 private:
  void accept(const std::uint8_t* icmp, std::size_t len, const sockaddr_storage& from);

  const PingSpec& spec_;
  SockAddress to_;
  bool v6_;
  bool raw_ = true;
  UniqueFd fd_;
  std::uint16_t id_ = 0;
  std::uint64_t nonce_ = 0;
  int sent_ = 0;
  int send_errors_ = 0;
  std::string send_error_;
  int received_ = 0;
  std::vector<bool> replied_;  // by sequence number (1-based)
  std::vector<double> rtts_ms_;
};

Result<void> Session::open() {
  const int family = v6_ ? AF_INET6 : AF_INET;
  const int proto = v6_ ? int(IPPROTO_ICMPV6) : int(IPPROTO_ICMP);
  int fd = ::socket(family, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
  if (fd < 0 && (errno == EPERM || errno == EACCES)) {
    // Not root: an unprivileged ping socket, allowed by net.ipv4.ping_group_range.
    raw_ = false;
    fd = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
    if (fd < 0 && (errno == EPERM || errno == EACCES))
      return make_error("ping needs root (CAP_NET_RAW), or a group of this user in net.ipv4.ping_group_range", errno);
  }
  if (fd < 0) return make_error(std::string("cannot open an ICMP") + (v6_ ? "v6" : "") + " socket", errno);
  fd_.reset(fd);

  // A raw socket sees every ICMP packet the host receives; let only echo
  // replies through (the identifier check below does the rest).
  if (raw_ && !v6_) {
    IcmpFilter filter{~(1u << kEchoReply4)};
    (void)::setsockopt(fd, SOL_RAW, kIcmpFilter, &filter, sizeof(filter));
  } else if (raw_ && v6_) {
    icmp6_filter filter{};
    ICMP6_FILTER_SETBLOCKALL(&filter);
    ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
    (void)::setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof(filter));
  }

  if (!spec_.from_dev.empty()) {
    const unsigned ifindex = ::if_nametoindex(spec_.from_dev.c_str());
    if (ifindex == 0) return make_error("ping from " + spec_.from_dev + ": no such interface here", ENODEV);
    if (::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, spec_.from_dev.c_str(), spec_.from_dev.size() + 1) != 0) {
      const int e = errno;
      if (e == EPERM) return make_error("ping from " + spec_.from_dev + " needs root (CAP_NET_RAW)", e);
      return make_error("ping: cannot bind to interface " + spec_.from_dev, e);
    }
    // A link-local destination means nothing without its interface.
    if (v6_ && IN6_IS_ADDR_LINKLOCAL(&to_.v6()->sin6_addr)) to_.v6()->sin6_scope_id = ifindex;
  }
  if (!spec_.from_addr.empty()) {
    auto from = parse_sock_address(spec_.from_addr);
    if (!from) return make_error("ping from " + spec_.from_addr + ": not an IPv4 or IPv6 address", EINVAL);
    if (from->family() != to_.family())
      return make_error("ping from " + spec_.from_addr + " to " + spec_.to + ": not the same address family", EINVAL);
    if (::bind(fd, from->sa(), from->len) != 0) {
      const int e = errno;
      if (e == EADDRNOTAVAIL)
        return make_error("ping from " + spec_.from_addr + ": no interface here has that address", e);
      return make_error("ping: cannot bind to " + spec_.from_addr, e);
    }
  }
  return {};
}

void Session::send_one() {
  const int seq = ++sent_;
  std::uint8_t packet[kHeaderBytes + kPayloadBytes] = {};
  packet[0] = v6_ ? kEchoRequest6 : kEchoRequest4;
  put_u16(packet + 4, id_);  // a ping socket puts its own identifier here
  put_u16(packet + 6, static_cast<std::uint16_t>(seq));
  for (std::size_t i = kHeaderBytes + kStampBytes; i < sizeof(packet); ++i) packet[i] = std::uint8_t(i);
  const std::uint64_t now = monotonic_ns();
  put_u64(packet + kHeaderBytes, now / 1'000'000'000ull);
  put_u64(packet + kHeaderBytes + 8, now % 1'000'000'000ull);
  put_u64(packet + kHeaderBytes + 16, nonce_);
  // The kernel sums ICMPv6 itself (the pseudo-header needs the source address).
  if (!v6_) put_u16(packet + 2, checksum(packet, sizeof(packet)));

  ssize_t n;
  do {
    n = ::sendto(fd_.get(), packet, sizeof(packet), 0, to_.sa(), to_.len);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    // No route, a firewall's drop on output (EPERM), a full buffer: the
    // request is lost, as ping(8) counts it.
    ++send_errors_;
    send_error_ = std::strerror(errno);
  }
}

void Session::drain() {
  std::uint8_t buf[2048];
  for (;;) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof(from);
    const ssize_t n = ::recvfrom(fd_.get(), buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or a queued error that reading has now cleared
    }
    std::size_t off = 0;
    if (raw_ && !v6_) {  // an IPv4 raw socket hands over the IP header too
      if (n < 20 || (buf[0] >> 4) != 4) continue;
      off = std::size_t(buf[0] & 0x0f) * 4;
      if (buf[9] != IPPROTO_ICMP || off >= std::size_t(n)) continue;
    }
    accept(buf + off, std::size_t(n) - off, from);
  }
}

void Session::accept(const std::uint8_t* icmp, std::size_t len, const sockaddr_storage& from) {
  const std::uint64_t now = monotonic_ns();
  if (len < kHeaderBytes + kStampBytes) return;
  if (icmp[0] != (v6_ ? kEchoReply6 : kEchoReply4) || icmp[1] != 0) return;
  // A raw socket sees everyone's echo replies; a ping socket gets only its own.
  if (raw_ && get_u16(icmp + 4) != id_) return;
  if (get_u64(icmp + kHeaderBytes + 16) != nonce_) return;
  if (!same_host(from, to_)) return;
  const int seq = get_u16(icmp + 6);
  if (seq < 1 || seq > sent_ || replied_[std::size_t(seq)]) return;  // unknown, or a duplicate
  replied_[std::size_t(seq)] = true;
  ++received_;
  const std::uint64_t sent_at = get_u64(icmp + kHeaderBytes) * 1'000'000'000ull + get_u64(icmp + kHeaderBytes + 8);
  rtts_ms_.push_back(now >= sent_at ? double(now - sent_at) / 1e6 : 0.0);
}

PingResult Session::result() const {
  PingResult r;
  r.sent = sent_;
  r.received = received_;
  r.send_errors = send_errors_;
  r.send_error = send_error_;
  if (!rtts_ms_.empty()) {
    double sum = 0;
    for (double v : rtts_ms_) sum += v;
    r.rtt_min_ms = *std::min_element(rtts_ms_.begin(), rtts_ms_.end());
    r.rtt_max_ms = *std::max_element(rtts_ms_.begin(), rtts_ms_.end());
    r.rtt_avg_ms = sum / double(rtts_ms_.size());
  }
  return r;
}

}  // namespace

Result<PingResult> IcmpPinger::ping(const PingSpec& spec, SteadyTime deadline, Interrupt& interrupt) {
  auto to = parse_sock_address(spec.to);
  if (!to) return make_error("ping: '" + spec.to + "' is not an IPv4 or IPv6 address", EINVAL);
  if (spec.count < 1) return make_error("ping: count must be at least 1", EINVAL);
  if (spec.count > 65535) return make_error("ping: count must be at most 65535", EINVAL);

  Session session(spec, *to);
  if (auto r = session.open(); !r) return r.error();

  using std::chrono::steady_clock;
  const auto start = steady_clock::now();
  SteadyTime next_send = start;
  SteadyTime last_send = start;
  for (;;) {
    if (interrupt.requested()) break;
    auto now = steady_clock::now();
    if (now >= deadline) break;
    if (session.sent() < spec.count && now >= next_send) {
      session.send_one();
      last_send = now;
      next_send = start + spec.interval * session.sent();  // keep the cadence, not the drift
      continue;
    }
    if (session.sent() == spec.count) {
      if (session.received() >= session.in_flight()) break;  // everything answered
      if (now >= last_send + spec.wait) break;
    }
    const SteadyTime wake = std::min(session.sent() < spec.count ? next_send : last_send + spec.wait, deadline);
    pollfd fds[2] = {{session.fd(), POLLIN, 0}, {interrupt.fd(), POLLIN, 0}};
    const int n = ::poll(fds, interrupt.fd() >= 0 ? 2 : 1, poll_ms(now, wake));
    if (n < 0 && errno != EINTR) return make_error("ping: poll failed", errno);
    if (n > 0 && (fds[1].revents & POLLIN)) break;
    if (n > 0 && (fds[0].revents & (POLLIN | POLLERR))) session.drain();
  }
  session.drain();  // replies that arrived with the interrupt or the deadline
  return session.result();
}

}  // namespace rxerun::sys
