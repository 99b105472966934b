#include "sys/nvme_real.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "base/fd.h"
#include "sys/kernel_files.h"
#include "sys/kernel_log.h"

namespace rxerun::sys {

namespace {

Error nvme_errno_error(const std::string& what, int code) {
  return make_error(what + ": " + std::strerror(code), code);
}

// "traddr=10.10.0.1,trsvcid=4420,host_traddr=10.10.0.2" -> its values.
void parse_controller_address(const std::string& address, FabricsController* c) {
  std::stringstream in(address);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "traddr") c->traddr = value;
    if (key == "trsvcid") c->trsvcid = value;
    if (key == "host_traddr") c->host_traddr = value;
  }
}

// A controller's entry for one of its namespaces, as the block device a
// user opens: "nvme0c0n1" (a path under native multipath) -> "nvme0n1",
// its head; "nvme0n1" (no multipath) as it is. "" for anything else.
std::string namespace_disk(const std::string& entry) {
  if (!entry.starts_with("nvme")) return {};
  std::string_view rest(entry);
  rest.remove_prefix(4);
  auto digits = [&]() {
    std::size_t n = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    std::string_view d = rest.substr(0, n);
    rest.remove_prefix(n);
    return d;
  };
  const std::string_view subsys = digits();
  if (subsys.empty() || rest.empty()) return {};
  if (rest[0] == 'c') {
    rest.remove_prefix(1);
    if (digits().empty() || rest.empty() || rest[0] != 'n') return {};
  } else if (rest[0] != 'n') {
    return {};
  }
  rest.remove_prefix(1);
  const std::string_view nsid = digits();
  if (nsid.empty() || !rest.empty()) return {};
  return "nvme" + std::string(subsys) + "n" + std::string(nsid);
}

}  // namespace

Result<std::vector<NvmetSubsystem>> RealNvme::subsystems() {
  std::vector<NvmetSubsystem> out;
  for (const auto& nqn : dir_entries(std::string(kConfigfsPath) + "/nvmet/subsystems")) {
    const std::string dir = nvmet_subsystem_dir(nqn);
    NvmetSubsystem s{.nqn = nqn,
                     .serial = attr_or_empty(dir + "/attr_serial"),
                     .allow_any_host = attr_or_empty(dir + "/attr_allow_any_host") == "1",
                     .allowed_hosts = dir_entries(dir + "/allowed_hosts")};
    for (const auto& id : dir_entries(dir + "/namespaces")) {
      unsigned nsid = 0;
      if (!parse_unsigned(id, &nsid)) continue;
      const std::string ns = nvmet_namespace_dir(nqn, nsid);
      s.namespaces.push_back({.nsid = nsid,
                              .device_path = attr_or_empty(ns + "/device_path"),
                              .enabled = attr_or_empty(ns + "/enable") == "1",
                              .buffered_io = attr_or_empty(ns + "/buffered_io") == "1"});
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<void> RealNvme::add_subsystem(const std::string& nqn) {
  return make_kernel_dir(nvmet_subsystem_dir(nqn));
}

Result<void> RealNvme::remove_subsystem(const std::string& nqn) {
  return remove_kernel_dir(nvmet_subsystem_dir(nqn));
}

Result<void> RealNvme::set_allow_any_host(const std::string& nqn, bool allow) {
  return write_attr(nvmet_subsystem_dir(nqn) + "/attr_allow_any_host", allow ? "1" : "0");
}

Result<std::vector<std::string>> RealNvme::hosts() {
  return dir_entries(std::string(kConfigfsPath) + "/nvmet/hosts");
}

Result<void> RealNvme::add_host(const std::string& hostnqn) {
  return make_kernel_dir(nvmet_host_dir(hostnqn));
}

Result<void> RealNvme::remove_host(const std::string& hostnqn) {
  return remove_kernel_dir(nvmet_host_dir(hostnqn));
}

Result<void> RealNvme::allow_host(const std::string& nqn, const std::string& hostnqn) {
  return make_kernel_link(nvmet_host_dir(hostnqn), nvmet_subsystem_dir(nqn) + "/allowed_hosts/" + hostnqn);
}

Result<void> RealNvme::disallow_host(const std::string& nqn, const std::string& hostnqn) {
  return remove_kernel_link(nvmet_subsystem_dir(nqn) + "/allowed_hosts/" + hostnqn);
}

Result<void> RealNvme::add_namespace(const std::string& nqn, unsigned nsid) {
  return make_kernel_dir(nvmet_namespace_dir(nqn, nsid));
}

Result<void> RealNvme::set_namespace_device(const std::string& nqn, unsigned nsid, const std::string& path,
                                            bool buffered_io) {
  const std::string dir = nvmet_namespace_dir(nqn, nsid);
  if (auto r = write_attr(dir + "/device_path", path); !r) return r;
  // Older kernels have no buffered_io; it is only written when wanted.
  if (buffered_io) return write_attr(dir + "/buffered_io", "1");
  return {};
}

Result<void> RealNvme::enable_namespace(const std::string& nqn, unsigned nsid, bool enable) {
  return write_attr(nvmet_namespace_dir(nqn, nsid) + "/enable", enable ? "1" : "0");
}

Result<void> RealNvme::remove_namespace(const std::string& nqn, unsigned nsid) {
  return remove_kernel_dir(nvmet_namespace_dir(nqn, nsid));
}

Result<std::vector<NvmetPort>> RealNvme::ports() {
  std::vector<NvmetPort> out;
  for (const auto& name : dir_entries(std::string(kConfigfsPath) + "/nvmet/ports")) {
    unsigned id = 0;
    if (!parse_unsigned(name, &id)) continue;
    const std::string dir = nvmet_port_dir(id);
    out.push_back({.id = id,
                   .trtype = attr_or_empty(dir + "/addr_trtype"),
                   .adrfam = attr_or_empty(dir + "/addr_adrfam"),
                   .traddr = attr_or_empty(dir + "/addr_traddr"),
                   .trsvcid = attr_or_empty(dir + "/addr_trsvcid"),
                   .subsystems = dir_entries(dir + "/subsystems")});
  }
  return out;
}

Result<void> RealNvme::add_port(const NvmetPort& port) {
  const std::string dir = nvmet_port_dir(port.id);
  if (auto r = make_kernel_dir(dir); !r) return r;
  for (const auto& [attr, value] : {std::pair{"addr_trtype", port.trtype},
                                    {"addr_adrfam", port.adrfam},
                                    {"addr_traddr", port.traddr},
                                    {"addr_trsvcid", port.trsvcid}})
    if (auto r = write_attr(dir + "/" + attr, value); !r) return r;
  return {};
}

Result<void> RealNvme::remove_port(unsigned id) {
  return remove_kernel_dir(nvmet_port_dir(id));
}

Result<void> RealNvme::link_port(unsigned id, const std::string& nqn) {
  return make_kernel_link(nvmet_subsystem_dir(nqn), nvmet_port_dir(id) + "/subsystems/" + nqn);
}

Result<void> RealNvme::unlink_port(unsigned id, const std::string& nqn) {
  return remove_kernel_link(nvmet_port_dir(id) + "/subsystems/" + nqn);
}

Result<FabricsConnected> RealNvme::connect(const FabricsOptions& options, std::vector<std::string>* kernel_log) {
  const std::uint64_t since = kernel_log_now();
  UniqueFd fd(::open("/dev/nvme-fabrics", O_RDWR | O_CLOEXEC));
  if (!fd.valid()) return nvme_errno_error("cannot open /dev/nvme-fabrics (is nvme-fabrics loaded?)", errno);
  const std::string line = fabrics_options_line(options);
  ssize_t n;
  do n = ::write(fd.get(), line.data(), line.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    const int code = errno;
    if (kernel_log) *kernel_log = nvme_kernel_messages(since);
    return make_error("the kernel refused the connect: " + std::string(std::strerror(code)), code);
  }
  char buf[256];
  ssize_t got;
  do got = ::pread(fd.get(), buf, sizeof buf - 1, 0);
  while (got < 0 && errno == EINTR);
  if (got < 0) return nvme_errno_error("cannot read the answer of /dev/nvme-fabrics", errno);
  buf[got] = '\0';
  // "instance=0,cntlid=1\n"
  FabricsConnected c;
  std::string answer(buf);
  while (!answer.empty() && answer.back() == '\n') answer.pop_back();
  bool have_instance = false;
  std::stringstream in(answer);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.starts_with("instance=")) have_instance = parse_unsigned(std::string_view(item).substr(9), &c.instance);
    if (item.starts_with("cntlid=")) (void)parse_unsigned(std::string_view(item).substr(7), &c.cntlid);
  }
  if (!have_instance) return make_error("/dev/nvme-fabrics answered '" + answer + "', not instance=N,cntlid=M", EIO);
  if (kernel_log) *kernel_log = nvme_kernel_messages(since);
  return c;
}

Result<std::vector<FabricsController>> RealNvme::controllers() {
  std::vector<FabricsController> out;
  for (const auto& name : dir_entries("/sys/class/nvme")) {
    unsigned instance = 0;
    if (!name.starts_with("nvme") || !parse_unsigned(std::string_view(name).substr(4), &instance)) continue;
    const std::string dir = "/sys/class/nvme/" + name;
    FabricsController c{.instance = instance,
                        .transport = attr_or_empty(dir + "/transport"),
                        .subsysnqn = attr_or_empty(dir + "/subsysnqn"),
                        .hostnqn = attr_or_empty(dir + "/hostnqn"),
                        .state = attr_or_empty(dir + "/state")};
    parse_controller_address(attr_or_empty(dir + "/address"), &c);
    (void)parse_unsigned(attr_or_empty(dir + "/cntlid"), &c.cntlid);
    for (const auto& entry : dir_entries(dir)) {
      const std::string disk = namespace_disk(entry);
      if (disk.empty() || !kernel_path_exists("/sys/block/" + disk)) continue;
      if (std::find(c.block_devices.begin(), c.block_devices.end(), disk) == c.block_devices.end())
        c.block_devices.push_back(disk);
    }
    out.push_back(std::move(c));
  }
  return out;
}

Result<void> RealNvme::delete_controller(unsigned instance) {
  const std::string path = "/sys/class/nvme/nvme" + std::to_string(instance) + "/delete_controller";
  return write_attr(path, "1");
}

std::vector<std::string> RealNvme::kernel_messages(std::uint64_t since) {
  return nvme_kernel_messages(since);
}

std::uint64_t RealNvme::log_clock() {
  return kernel_log_now();
}

}  // namespace rxerun::sys
