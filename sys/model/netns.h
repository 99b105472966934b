#pragma once
// Named network namespaces in the model (sys/model/kernel.h): which exist,
// what tells one from another made later under its name (an inode, handed
// out once), and entering one. A namespace's creation and deletion reach
// every service whose state is per namespace: a new one has its loopback
// and the kernel's default rules, a deleted one takes its interfaces along
// (and a veth among them its other end in another namespace).

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sys/model/kernel.h"
#include "sys/netns.h"

namespace rxerun::sys {

// A service whose state is per network namespace.
class NetnsScoped {
 public:
  virtual ~NetnsScoped() = default;
  virtual void netns_created(const std::string& /*name*/) {}
  virtual void netns_deleted(const std::string& name) = 0;
};

class ModelNetns final : public Netns {
 public:
  explicit ModelNetns(ModelKernel& k) : k_(k) {}
  // Services that hear of each namespace's creation and deletion.
  void scope(NetnsScoped& service) { scoped_.push_back(&service); }

  // ENOENT when there is none (in an open world, the host's may be there:
  // it is entered all the same, and later commands are shown in it).
  Result<std::unique_ptr<NetnsScope>> enter(const std::string& name) override;
  Result<bool> exists(const std::string& name) override { return existing.count(name) > 0; }
  Result<void> create(const std::string& name) override;
  Result<void> remove(const std::string& name) override;
  // Handed out the first time it is asked for (or at create()), forgotten at
  // remove(). 0 for a namespace the model does not hold (open world).
  Result<std::uint64_t> inode(const std::string& name) override;
  Result<std::uint64_t> current_inode() override { return inode(k_.netns); }
  const std::string& current() const { return k_.netns; }

  // As `ip netns del NAME; ip netns add NAME` by somebody else between two
  // runs: a new namespace under the old name, its interfaces gone.
  void recreate(const std::string& name);

  std::set<std::string> existing;               // the names that can be entered
  std::map<std::string, std::uint64_t> inodes;  // "" is rxerun's own namespace
  std::vector<std::string> log;                 // "enter lab", "leave lab", for tests

 private:
  ModelKernel& k_;
  std::vector<NetnsScoped*> scoped_;
  std::uint64_t next_inode_ = 4026532000;
};

}  // namespace rxerun::sys
