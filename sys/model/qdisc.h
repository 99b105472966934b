#pragma once
// One namespace's root qdiscs, in memory (sys/model/links.h says why
// sys/model/ exists). An interface without an entry has the default the
// kernel attached; so has one whose entry is a default kind (a test puts
// "noqueue" there as a host shows it).

#include <map>
#include <optional>
#include <string>

#include "base/result.h"
#include "sys/qdisc.h"

namespace rxerun::sys {

class QdiscModel {
 public:
  // The root qdisc's kind; nullopt for the kernel's default.
  std::optional<std::string> root_of(const std::string& dev) const;
  // `tc qdisc add ... root netem` is exclusive: it replaces a default root,
  // and is refused (EEXIST) over one somebody added, a netem included.
  Result<void> attach_netem(const std::string& dev, const NetemSpec& spec);
  // ENOENT when the root is the kernel's default: there is none to delete,
  // and the default comes back after a delete.
  Result<void> detach_root(const std::string& dev);

  // Open to the tests, which put the host's qdiscs here.
  std::map<std::string, std::string> root;  // dev -> kind
  std::map<std::string, NetemSpec> specs;   // dev -> what its netem was added with
};

}  // namespace rxerun::sys
