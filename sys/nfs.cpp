#include "sys/nfs.h"

#include <sstream>

namespace rxerun::sys {

// The kernel's order and words (nfsd's show_expflags()).
const std::vector<NfsExportFlag> kNfsExportFlags = {
    {"ro", "rw", 0x1},
    {"insecure", "", 0x2},
    {"root_squash", "no_root_squash", 0x4},
    {"all_squash", "", 0x8},
    {"async", "sync", 0x10},
    {"wdelay", "no_wdelay", 0x20},
    {"no_subtree_check", "", 0x400},
};

std::string nfs_export_options(unsigned flags) {
  std::string out;
  for (const auto& f : kNfsExportFlags) {
    const char* word = (flags & f.bit) ? f.set : f.unset;
    if (*word == '\0') continue;
    if (!out.empty()) out += ',';
    out += word;
  }
  if (flags & kNfsExportFsid) out += out.empty() ? "fsid=0" : ",fsid=0";
  return out;
}

std::string nfs_shutdown_file(const std::string& device) {
  return "/sys/fs/nfs/" + device + "/shutdown";
}

std::string option_value(const std::string& options, const std::string& key) {
  std::stringstream in(options);
  for (std::string item; std::getline(in, item, ',');)
    if (item.starts_with(key + "=")) return item.substr(key.size() + 1);
  return {};
}

}  // namespace rxerun::sys
