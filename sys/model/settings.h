#pragma once
// An interface's and a namespace's settings in the model
// (sys/model/kernel.h), each per namespace: sysctls (a key names a file
// under /proc/sys, so a write changes a file that is there but cannot make
// one), offload features (some fixed, some following others as the
// kernel's dependencies do) and root qdiscs (netem's add is exclusive: it
// replaces the kernel's default root, not one somebody added).

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "sys/ethtool.h"
#include "sys/model/netns.h"
#include "sys/qdisc.h"
#include "sys/sysctl.h"

namespace rxerun::sys {

class ModelSysctl final : public Sysctl, public NetnsScoped {
 public:
  // What an open world reads for a key it cannot know (in a namespace, of an
  // interface that does not exist yet); writing it back is shown as known
  // only at run time, never as `sysctl -w KEY=` some made-up value.
  static constexpr const char* kValueAtRunTime = "(the value found at run time)";

  explicit ModelSysctl(ModelKernel& k) : k_(k) {}
  Result<std::string> read(const std::string& key) override;
  Result<void> write(const std::string& key, const std::string& value) override;
  // A new namespace starts with the keys of rxerun's own and their values
  // (IPv4's settings inherit the initial namespace's).
  void netns_created(const std::string& netns) override { by_netns[netns] = values; }
  void netns_deleted(const std::string& netns) override { by_netns.erase(netns); }

  // The value of the key in the current namespace, whichever separator it
  // uses; null when none.
  std::string* find(const std::string& key);

  std::map<std::string, std::map<std::string, std::string>> by_netns;  // netns -> key -> value
  std::map<std::string, std::string>& values = by_netns[""];
  // Open world: the host's value of a key of rxerun's own namespace.
  std::function<std::optional<std::string>(const std::string& key)> host_value;

 private:
  ModelKernel& k_;
};

class ModelEthtool final : public Ethtool, public NetnsScoped {
 public:
  explicit ModelEthtool(ModelKernel& k) : k_(k) {}
  // An interface without features here: ENODEV (open world: none known).
  Result<std::map<std::string, Feature>> features(const std::string& dev) override;
  // EOPNOTSUPP for a feature the interface has not, or a fixed one; returns
  // what changed, followers included (open world: what was asked).
  Result<std::map<std::string, bool>> set_features(const std::string& dev,
                                                   const std::map<std::string, bool>& wanted) override;
  void netns_deleted(const std::string& netns) override { by_netns.erase(netns); }

  std::map<std::string, std::map<std::string, std::map<std::string, Feature>>> by_netns;  // netns -> dev -> features
  std::map<std::string, std::map<std::string, Feature>>& devs = by_netns[""];
  // A feature that follows when another changes to a value (tx-checksumming
  // off takes segmentation along): (feature, value) -> (follower, its value then).
  std::map<std::pair<std::string, bool>, std::pair<std::string, bool>> drags;

 private:
  ModelKernel& k_;
};

class ModelQdiscs final : public Qdiscs, public NetnsScoped {
 public:
  explicit ModelQdiscs(ModelKernel& k) : k_(k) {}
  Result<bool> netem_available() override { return netem; }
  // nullopt for the kernel's default (no entry, or a default kind there).
  Result<std::optional<std::string>> root_kind(const std::string& dev) override;
  // EEXIST over a root somebody added; ENOENT without netem.
  Result<void> add_netem(const std::string& dev, const NetemSpec& spec) override;
  // `stats` for the root netem; ENOENT without one (open world: nothing counted).
  Result<QdiscStats> root_stats(const std::string& dev) override;
  // ENOENT when the root is the kernel's default, which comes back after a delete.
  Result<void> remove_root(const std::string& dev) override;
  void netns_deleted(const std::string& netns) override {
    roots.erase(netns);
    netem_specs.erase(netns);
  }

  bool netem = true;  // sch_netem is there
  QdiscStats stats;
  std::map<std::string, std::map<std::string, std::string>> roots;      // netns -> dev -> kind
  std::map<std::string, std::map<std::string, NetemSpec>> netem_specs;  // netns -> dev -> as added
  std::map<std::string, std::string>& root = roots[""];
  std::map<std::string, NetemSpec>& specs = netem_specs[""];

 private:
  ModelKernel& k_;
};

}  // namespace rxerun::sys
