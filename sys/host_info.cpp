#include "sys/host_info.h"

#include <sys/utsname.h>
#include <unistd.h>

namespace rxerun::sys {

nlohmann::json host_facts() {
  nlohmann::json j = nlohmann::json::object();
  struct utsname u {};
  if (::uname(&u) == 0) {
    j["kernel"] = u.release;
    j["machine"] = u.machine;
    j["hostname"] = u.nodename;
  }
  return j;
}

bool is_terminal(int fd) {
  return ::isatty(fd) == 1;
}

}  // namespace rxerun::sys
