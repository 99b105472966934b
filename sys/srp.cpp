#include "sys/srp.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include "sys/nvme.h"

namespace rxerun::sys {

std::string lio_dir() {
  return std::string(kConfigfsPath) + "/target";
}

std::string srpt_dir() {
  return lio_dir() + "/srpt";
}

std::string srpt_target_dir(const std::string& target) {
  return srpt_dir() + "/" + target;
}

std::optional<RdmaPortNames> srpt_port_names(const std::string& gid) {
  in6_addr a{};
  if (::inet_pton(AF_INET6, gid.c_str(), &a) != 1) return std::nullopt;
  std::string hex;
  for (unsigned char byte : a.s6_addr) hex += fmt::format("{:02x}", byte);
  std::string guid;
  for (std::size_t i = 16; i < 32; i += 4) guid += (guid.empty() ? "" : ":") + hex.substr(i, 4);
  return RdmaPortNames{.guid = guid, .gid = "0x" + hex};
}

std::string srpt_login_name(const std::string& address) {
  in6_addr a{};
  if (::inet_pton(AF_INET6, address.c_str(), &a) != 1) return address;
  std::string full;
  for (std::size_t i = 0; i < 16; i += 2)
    full += fmt::format("{}{:02x}{:02x}", i ? ":" : "", a.s6_addr[i], a.s6_addr[i + 1]);
  return full;
}

std::string lio_backstore_dir(const std::string& hba, const std::string& name) {
  return lio_dir() + "/core/" + hba + "/" + name;
}

std::string srpt_tpg_dir(const std::string& target, const std::string& tpg) {
  return srpt_target_dir(target) + "/" + tpg;
}

}  // namespace rxerun::sys
