#pragma once
// What the libnl-based implementations (rtnetlink links, routes, qdiscs and
// ethtool's generic netlink) share: owners of libnl objects, and the reading
// of a string attribute. Not part of sys/'s interface.

#include <netlink/addr.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

namespace rxerun::sys {

struct MsgFree {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};
struct NlAddrPut {
  void operator()(nl_addr* a) const { nl_addr_put(a); }
};
using MsgPtr = std::unique_ptr<nl_msg, MsgFree>;
using NlAddrPtr = std::unique_ptr<nl_addr, NlAddrPut>;

// A string attribute, safe against a missing terminator.
inline std::string attr_string(const nlattr* a) {
  const auto* p = static_cast<const char*>(nla_data(a));
  return std::string(p, ::strnlen(p, static_cast<std::size_t>(nla_len(a))));
}

}  // namespace rxerun::sys
