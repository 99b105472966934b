#pragma once
// The named network namespaces, in memory (sys/model/links.h says why
// sys/model/ exists): which names exist, and what creating or deleting one
// does to the interfaces. Entering one, and telling one from another made
// later under its name (the inode), are left to the implementations: a plan
// enters namespaces of the host it cannot see, and knows no inode.

#include <set>
#include <string>

#include "base/result.h"

namespace rxerun::sys {

class LinksModel;

class NetnsModel {
 public:
  // `links`, when given, sees each namespace come and go (a new one's
  // loopback, a deleted one's interfaces).
  explicit NetnsModel(LinksModel* links = nullptr) : links_(links) {}

  bool has(const std::string& name) const { return existing.count(name) > 0; }
  // EEXIST when the name is taken.
  Result<void> add_netns(const std::string& name);
  // ENOENT when there is no such namespace.
  Result<void> delete_netns(const std::string& name);

  // For an owner made before the interfaces it must tell (the tests' fakes).
  void set_links(LinksModel* links) { links_ = links; }

  std::set<std::string> existing;  // names that can be entered

 private:
  LinksModel* links_;
};

}  // namespace rxerun::sys
