#pragma once
// Network interfaces and their addresses, over rtnetlink (libnl-route), in
// the calling thread's current network namespace.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::sys {

struct LinkInfo {
  int ifindex = 0;
  std::string name;
  std::string kind;      // "veth", "macvlan", ...; "" when the kernel names none
  std::string alias;     // IFLA_IFALIAS: rxerun marks the interfaces it creates here
  bool up = false;       // IFF_UP, the administrative state
  bool carrier = false;  // IFF_LOWER_UP
  unsigned mtu = 0;
};

struct VethSpec {
  std::string name;
  std::string peer;
  std::string peer_netns;  // a name under /run/netns; "" keeps the peer beside `name`
  unsigned mtu = 0;        // 0: the kernel's default
  std::string alias;       // set on both ends
};

// An interface's statistics (IFLA_STATS64), by the names sysfs gives them
// under statistics/: rx_packets, tx_bytes, rx_dropped, ...
struct LinkStats {
  std::string name;
  std::map<std::string, std::uint64_t> counters;
};

class Links {
 public:
  virtual ~Links() = default;

  // nullopt when no interface has that name.
  virtual Result<std::optional<LinkInfo>> get(const std::string& name) = 0;
  virtual Result<std::vector<LinkInfo>> list() = 0;
  // Every interface of the namespace with its statistics.
  virtual Result<std::vector<LinkStats>> statistics() = 0;

  // Error code EEXIST when a name is taken.
  virtual Result<void> add_veth(const VethSpec& spec) = 0;

  // Deletes these interfaces, as far as possible in one kernel operation (the
  // kernel waits for a grace period per operation, not per interface). Names
  // that no longer exist are skipped; returns once the interfaces are gone.
  virtual Result<void> remove(const std::vector<std::string>& names) = 0;

  virtual Result<void> set_up(const std::string& name, bool up) = 0;
  virtual Result<void> set_mtu(const std::string& name, unsigned mtu) = 0;
  virtual Result<void> set_alias(const std::string& name, const std::string& alias) = 0;

  // "10.0.0.1/24", "fd00::1/64"; link-local IPv6 addresses included. When
  // `ifindex` is given, it receives the interface's index, for add_address().
  virtual Result<std::vector<std::string>> addresses(const std::string& dev, int* ifindex = nullptr) = 0;
  // Error code EEXIST when present. `ifindex`: what addresses() gave for
  // `dev` just before, which saves looking the name up again; 0 looks it up.
  virtual Result<void> add_address(const std::string& dev, const std::string& cidr, int ifindex = 0) = 0;
  // Error code EADDRNOTAVAIL when absent, ENODEV when the interface is gone.
  virtual Result<void> remove_address(const std::string& dev, const std::string& cidr) = 0;
};

}  // namespace rxerun::sys
