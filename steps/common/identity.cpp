#include "steps/common/identity.h"

#include <chrono>

#include "base/try.h"

namespace rxerun::steps {

namespace {

// "index 7 in netns inode 4026532281", leaving out what is not known.
std::string identity_text(const nlohmann::json& id) {
  std::string out;
  if (auto i = identity_number(id, "ifindex").value_or(0)) out = "index " + std::to_string(i);
  if (auto n = identity_number(id, "netns_inode").value_or(0))
    out += (out.empty() ? "" : " ") + std::string("in netns inode ") + std::to_string(n);
  return out.empty() ? "nothing" : out;
}

}  // namespace

std::uint64_t step_tag(sys::System& sys) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(sys.clock.now().time_since_epoch()).count());
}

Result<nlohmann::json> link_identity(sys::System& sys, const sys::LinkInfo& link) {
  RXERUN_TRY_ASSIGN(const std::uint64_t inode, sys.netns.current_inode());
  return nlohmann::json{{"ifindex", link.ifindex}, {"netns_inode", inode}};
}

Result<nlohmann::json> link_identity(sys::System& sys, const std::string& dev) {
  RXERUN_TRY_ASSIGN(const auto found, sys.links.get(dev));
  if (!found) return nlohmann::json();
  return link_identity(sys, *found);
}

Result<nlohmann::json> netns_identity(sys::System& sys) {
  RXERUN_TRY_ASSIGN(const std::uint64_t inode, sys.netns.current_inode());
  return nlohmann::json{{"netns_inode", inode}};
}

std::optional<std::uint64_t> identity_number(const nlohmann::json& identity, const char* key) {
  if (!identity.is_object() || !identity.contains(key)) return std::nullopt;
  const auto& v = identity.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0)) return std::nullopt;
  return v.get<std::uint64_t>();
}

bool differs(const nlohmann::json& recorded, const nlohmann::json& now) {
  if (!recorded.is_object() || !now.is_object()) return false;
  for (const auto& [key, value] : recorded.items()) {
    if (!value.is_number_integer()) continue;
    const std::uint64_t was = identity_number(recorded, key.c_str()).value_or(0),
                        is = identity_number(now, key.c_str()).value_or(0);
    if (was != 0 && is != 0 && was != is) return true;
  }
  return false;
}

Result<Found> check_link(sys::System& sys, const std::string& dev, const nlohmann::json& recorded,
                         std::optional<sys::LinkInfo>* now) {
  RXERUN_TRY_ASSIGN(const auto found, sys.links.get(dev));
  if (now) *now = found;
  if (!found) return Found::Gone;
  if (recorded.is_null()) return Found::Same;
  RXERUN_TRY_ASSIGN(const auto id, link_identity(sys, *found));
  const nlohmann::json mine = {{"ifindex", identity_number(recorded, "ifindex").value_or(0)},
                               {"netns_inode", identity_number(recorded, "netns_inode").value_or(0)}};
  if (!differs(mine, id)) return Found::Same;
  return make_error(dev + " is another interface than the one this run changed: the journal recorded " +
                    identity_text(mine) + ", " + dev + " now has " + identity_text(id) +
                    " (deleted and made again under its name since): left alone, with its addresses and settings");
}

Result<void> check_netns(sys::System& sys, const nlohmann::json& recorded, const std::string& name) {
  const std::uint64_t was = identity_number(recorded, "netns_inode").value_or(0);
  if (!was) return {};
  RXERUN_TRY_ASSIGN(const std::uint64_t now, sys.netns.current_inode());
  if (now == 0 || now == was) return {};
  const std::string ns = name.empty() ? "rxerun's network namespace" : "network namespace " + name;
  return make_error(ns + " is another one than the one this run changed: the journal recorded inode " +
                    std::to_string(was) + ", it now has inode " + std::to_string(now) +
                    " (deleted and made again under its name since): left alone");
}

}  // namespace rxerun::steps
