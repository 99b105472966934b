#include "sys/model/netns.h"

#include <cerrno>

#include "base/strings.h"

namespace rxerun::sys {

namespace {

class ModelScope final : public NetnsScope {
 public:
  ModelScope(ModelNetns& ns, std::string& current, std::string previous)
      : ns_(ns), current_(current), previous_(std::move(previous)) {}
  ~ModelScope() override {
    ns_.log.push_back("leave " + current_);
    current_ = previous_;
  }

 private:
  ModelNetns& ns_;
  std::string& current_;
  std::string previous_;
};

Error no_netns(const std::string& name) {
  return make_error("network namespace '" + name + "' does not exist", ENOENT);
}

}  // namespace

Result<std::unique_ptr<NetnsScope>> ModelNetns::enter(const std::string& name) {
  if (!existing.count(name) && k_.refused(no_netns(name))) return no_netns(name);
  auto scope = std::make_unique<ModelScope>(*this, k_.netns, k_.netns);
  k_.netns = name;
  log.push_back("enter " + name);
  return std::unique_ptr<NetnsScope>(std::move(scope));
}

Result<void> ModelNetns::create(const std::string& name) {
  if (auto f = k_.fault("netns.create", name)) return *f;
  if (!existing.insert(name).second) return make_error("network namespace '" + name + "' exists", EEXIST);
  inodes[name] = next_inode_++;
  for (auto* s : scoped_) s->netns_created(name);
  k_.did_anywhere("netns", "create network namespace " + name, shell_join({"ip", "netns", "add", name}));
  return {};
}

Result<void> ModelNetns::remove(const std::string& name) {
  if (auto f = k_.fault("netns.remove", name)) return *f;
  if (!existing.erase(name)) {
    if (k_.refused(no_netns(name))) return no_netns(name);
  } else {
    inodes.erase(name);
    for (auto* s : scoped_) s->netns_deleted(name);
  }
  k_.did_anywhere("netns", "delete network namespace " + name, shell_join({"ip", "netns", "del", name}));
  return {};
}

Result<std::uint64_t> ModelNetns::inode(const std::string& name) {
  if (!name.empty() && !existing.count(name)) {
    if (k_.refused(no_netns(name))) return no_netns(name);
    return std::uint64_t{0};
  }
  auto [it, fresh] = inodes.try_emplace(name, 0);
  if (fresh) it->second = name.empty() ? 4026531840 : next_inode_++;
  return it->second;
}

void ModelNetns::recreate(const std::string& name) {
  if (existing.erase(name))
    for (auto* s : scoped_) s->netns_deleted(name);
  existing.insert(name);
  inodes[name] = next_inode_++;
  for (auto* s : scoped_) s->netns_created(name);
}

}  // namespace rxerun::sys
