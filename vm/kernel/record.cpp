#include "vm/kernel/record.h"

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <system_error>

#include "vm/boot_protocol.h"
#include "vm/files.h"

namespace rxerun::vm {

namespace fs = std::filesystem;

std::string initramfs_inputs() {
  Digest d;
  d.mix(stage1_init_script());
  for (const auto& m : kInitramfsModules) d.mix(m);
  for (const auto& m : kInitramfsNodeModules) d.mix("?" + m);
  return d.hex();
}

std::optional<KernelRecord> load_kernel_record(const fs::path& dir) {
  auto text = read_whole_file(dir / "kernel.json");
  if (!text) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(*text);
    if (!j.is_object() || j.value("format", 0) != kKernelRecordFormat) return std::nullopt;
    KernelRecord r;
    PreparedKernel& k = r.kernel;
    k.label = j.at("label").get<std::string>();
    k.release = j.at("release").get<std::string>();
    k.package = j.at("package").get<std::string>();
    k.package_version = j.at("package_version").get<std::string>();
    k.dir = j.at("dir").get<std::string>();
    k.vmlinux = j.at("vmlinux").get<std::string>();
    k.bzimage = j.at("bzimage").get<std::string>();
    k.initramfs = j.at("initramfs").get<std::string>();
    k.modules = j.at("modules").get<std::string>();
    k.rxe_in_netns = j.at("rxe_in_netns").get<bool>();
    r.initramfs_inputs = j.value("initramfs_inputs", "");
    k.initramfs_current = r.initramfs_inputs == initramfs_inputs();
    r.initramfs_modules = j.value("initramfs_modules", std::vector<std::string>{});
    if (k.label.empty() || k.release.empty()) return std::nullopt;
    if (!is_regular(k.vmlinux) || !is_regular(k.bzimage) || !is_regular(k.initramfs) ||
        !is_regular(k.modules / "modules.dep"))
      return std::nullopt;
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

Result<void> write_kernel_record(const PreparedKernel& k, const std::vector<std::string>& initramfs_modules) {
  const nlohmann::json j = {
      {"format", kKernelRecordFormat},
      {"label", k.label},
      {"release", k.release},
      {"package", k.package},
      {"package_version", k.package_version},
      {"dir", k.dir.string()},
      {"vmlinux", k.vmlinux.string()},
      {"bzimage", k.bzimage.string()},
      {"initramfs", k.initramfs.string()},
      {"modules", k.modules.string()},
      {"rxe_in_netns", k.rxe_in_netns},
      {"initramfs_inputs", initramfs_inputs()},
      {"initramfs_modules", initramfs_modules},
  };
  return write_file_atomic(k.dir / "kernel.json", j.dump(2) + "\n");
}

}  // namespace rxerun::vm
