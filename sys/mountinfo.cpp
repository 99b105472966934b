#include "sys/mountinfo.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sys/kernel_files.h"

namespace rxerun::sys {

std::string unescape_octal(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      unsigned value = 0;
      if (parse_unsigned(std::string_view(text).substr(i + 1, 3), &value, 8)) {
        out += static_cast<char>(value);
        i += 3;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::optional<MountEntry> parse_mountinfo_line(const std::string& line) {
  // ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTIONS
  std::istringstream words(line);
  std::string id, parent, devno, root, point;
  if (!(words >> id >> parent >> devno >> root >> point)) return std::nullopt;
  const auto dash = line.find(" - ");
  if (dash == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(dash + 3));
  MountEntry m;
  if (!parse_unsigned(id, &m.id) || !(rest >> m.fstype >> m.source >> m.options)) return std::nullopt;
  m.device = devno;
  m.mountpoint = unescape_octal(point);
  m.source = unescape_octal(m.source);
  return m;
}

Result<std::vector<MountEntry>> read_mountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) {
    const int code = errno ? errno : EIO;
    return make_error("cannot read /proc/self/mountinfo: " + std::string(std::strerror(code)), code);
  }
  std::vector<MountEntry> out;
  for (std::string line; std::getline(in, line);)
    if (auto m = parse_mountinfo_line(line)) out.push_back(std::move(*m));
  return out;
}

std::optional<MountEntry> mount_at(const std::vector<MountEntry>& mounts, const std::string& mountpoint,
                                   const std::string& fstype) {
  std::optional<MountEntry> top;
  for (const auto& m : mounts)
    if (m.mountpoint == mountpoint) top = m;  // mountinfo lists the one on top last
  if (top && !fstype.empty() && top->fstype != fstype) return std::nullopt;
  return top;
}

}  // namespace rxerun::sys
