#include "sys/srp.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <string_view>

#include "sys/storage.h"

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

namespace {

// An IPv6 address's 16 bytes as 32 hex digits; nullopt when `text` is none.
std::optional<std::string> ipv6_hex(const std::string& text) {
  in6_addr a{};
  if (::inet_pton(AF_INET6, text.c_str(), &a) != 1) return std::nullopt;
  std::string hex;
  for (unsigned char byte : a.s6_addr) hex += fmt::format("{:02x}", byte);
  return hex;
}

// Hex digits in groups of four joined by colons: "5054:00ff:...".
std::string four_digit_groups(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 4) out += (out.empty() ? "" : ":") + std::string(hex.substr(i, 4));
  return out;
}

}  // namespace

std::optional<RdmaPortNames> srpt_port_names(const std::string& gid) {
  const auto hex = ipv6_hex(gid);
  if (!hex) return std::nullopt;
  return RdmaPortNames{.guid = four_digit_groups(std::string_view(*hex).substr(16)), .gid = "0x" + *hex};
}

std::string srpt_login_name(const std::string& address) {
  const auto hex = ipv6_hex(address);
  return hex ? four_digit_groups(*hex) : address;
}

std::string lio_backstore_dir(const std::string& hba, const std::string& name) {
  return lio_dir() + "/core/" + hba + "/" + name;
}

std::string srpt_tpg_dir(const std::string& target, const std::string& tpg) {
  return srpt_target_dir(target) + "/" + tpg;
}

}  // namespace rxerun::sys
