#include "sys/model/netns.h"

#include <cerrno>

#include "sys/model/links.h"

namespace rxerun::sys {

Result<void> NetnsModel::add_netns(const std::string& name) {
  if (!existing.insert(name).second) return make_error("network namespace '" + name + "' exists", EEXIST);
  if (links_) links_->netns_created(name);
  return {};
}

Result<void> NetnsModel::delete_netns(const std::string& name) {
  if (!existing.erase(name)) return make_error("network namespace '" + name + "' does not exist", ENOENT);
  if (links_) links_->netns_deleted(name);
  return {};
}

}  // namespace rxerun::sys
