#pragma once
// Traffic control: a netem root qdisc on an interface, through libnl-route's
// qdisc API (what `tc qdisc add dev D root netem ...` does).

#include <cstdint>
#include <optional>
#include <string>

#include "base/duration.h"
#include "base/result.h"

namespace rxerun::sys {

struct NetemSpec {
  std::optional<double> loss_pct;
  std::optional<double> duplicate_pct;
  std::optional<double> corrupt_pct;
  std::optional<double> reorder_pct;  // needs a delay
  std::optional<Duration> delay;
  std::optional<Duration> jitter;
  std::optional<std::uint64_t> rate_bytes_per_s;
};

struct QdiscStats {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t drops = 0;
  std::uint64_t overlimits = 0;
  std::uint64_t requeues = 0;
};

class Qdiscs {
 public:
  virtual ~Qdiscs() = default;
  // Whether this kernel has sch_netem (built in or loadable); a step checks
  // this before it changes anything.
  virtual Result<bool> netem_available() = 0;
  // The kind of the root qdisc ("noqueue", "pfifo_fast", "netem", ...), nullopt when none.
  virtual Result<std::optional<std::string>> root_kind(const std::string& dev) = 0;
  virtual Result<void> add_netem(const std::string& dev, const NetemSpec& spec) = 0;
  virtual Result<QdiscStats> root_stats(const std::string& dev) = 0;
  // Removes the root qdisc (the kernel puts the default back). ENOENT when none.
  virtual Result<void> remove_root(const std::string& dev) = 0;
};

}  // namespace rxerun::sys
