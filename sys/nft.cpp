#include "sys/nft.h"

namespace rxerun::sys {

namespace {

// The nft match for the protocol: `meta l4proto` names it for both families
// of an inet table.
std::string l4proto_match(const std::string& proto) {
  return "meta l4proto " + (proto == "icmpv6" ? std::string("ipv6-icmp") : proto);
}

}  // namespace

std::string nft_rule_text(const NftRule& r) {
  std::string text;
  if (!r.iifname.empty()) text += "iifname \"" + r.iifname + "\" ";
  if (!r.oifname.empty()) text += "oifname \"" + r.oifname + "\" ";
  if (r.dport) {
    text += r.proto + " dport " + std::to_string(*r.dport) + " ";
  } else if (!r.proto.empty()) {
    text += l4proto_match(r.proto) + " ";
  }
  text += "counter " + r.verdict;
  if (!r.comment.empty()) text += " comment \"" + r.comment + "\"";
  return text;
}

namespace nft_command {

std::string list_table(const std::string& family, const std::string& table) {
  return "list table " + family + " " + table;
}
std::string add_table(const std::string& family, const std::string& table) {
  return "add table " + family + " " + table;
}
std::string add_base_chain(const std::string& family, const std::string& table, const std::string& hook) {
  return "add chain " + family + " " + table + " " + hook + " { type filter hook " + hook +
         " priority 0 ; policy accept ; }";
}
std::string add_rule(const std::string& family, const std::string& table, const NftRule& rule) {
  return "add rule " + family + " " + table + " " + rule.chain + " " + nft_rule_text(rule);
}
std::string delete_rule(const std::string& family, const std::string& table, const std::string& chain,
                        std::uint64_t handle) {
  return "delete rule " + family + " " + table + " " + chain + " handle " + std::to_string(handle);
}
std::string delete_chain(const std::string& family, const std::string& table, const std::string& chain) {
  return "delete chain " + family + " " + table + " " + chain;
}
std::string delete_table(const std::string& family, const std::string& table) {
  return "delete table " + family + " " + table;
}

}  // namespace nft_command

}  // namespace rxerun::sys
