#pragma once
// kernel.json: the record that makes CACHE/kernels/LABEL a prepared kernel.
// `vm setup` writes it last, atomically, once every file it names is in
// place; readers trust a directory only when the record parses, has this
// rxerun's format number and names files that still exist.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "vm/kernel/kernels.h"

namespace rxerun::vm {

// kernel.json's layout; another number means "not prepared here" (rebuilt).
inline constexpr int kKernelRecordFormat = 1;

// A digest of what the initramfs is built from besides the kernel (the boot
// protocol's /init and module list): when it changes, `vm setup` rebuilds
// the initramfs of a prepared kernel.
std::string initramfs_inputs();

struct KernelRecord {
  PreparedKernel kernel;
  std::string initramfs_inputs;  // as recorded
  std::vector<std::string> initramfs_modules;
};

// The record in `dir` when it is valid and its files exist.
std::optional<KernelRecord> load_kernel_record(const std::filesystem::path& dir);

// Writes kernel.dir/kernel.json atomically, with the current initramfs_inputs().
Result<void> write_kernel_record(const PreparedKernel& kernel, const std::vector<std::string>& initramfs_modules);

}  // namespace rxerun::vm
