#include "sys/model/sysctl.h"

#include <cerrno>

#include "sys/sysctl.h"

namespace rxerun::sys {

std::string* SysctlModel::find(const std::string& key) {
  if (auto it = values.find(key); it != values.end()) return &it->second;
  const std::string path = sysctl_path(key);
  for (auto& [k, v] : values)
    if (sysctl_path(k) == path) return &v;
  return nullptr;
}

Result<std::string> SysctlModel::value_of(const std::string& key) {
  if (const auto* v = find(key)) return *v;
  return make_error("no sysctl " + key, ENOENT);
}

Result<void> SysctlModel::store(const std::string& key, const std::string& value) {
  auto* v = find(key);
  if (!v) return make_error("no sysctl " + key, ENOENT);
  *v = value;
  return {};
}

void SysctlModel::add_key(const std::string& key, const std::string& value) {
  if (auto* v = find(key)) {
    *v = value;
  } else {
    values[key] = value;
  }
}

}  // namespace rxerun::sys
