#pragma once
// A Debian kernel's module tree as unpacked by `vm setup` (ROOT/lib/modules/
// RELEASE): made loadable by busybox insmod and by the guest's modprobe
// (modules decompressed, depmod run), and the modules the initramfs needs
// resolved with their dependencies through libkmod.

#include <filesystem>
#include <string>
#include <vector>

#include "base/result.h"

namespace rxerun::vm {

// Merged-/usr kernels (trixie and later) ship usr/lib/modules only; depmod
// -b ROOT and the guest look in ROOT/lib/modules, so ROOT/lib becomes a
// symlink to usr/lib when ROOT has no lib.
Result<void> link_merged_usr(const std::filesystem::path& root);

// The kernel release: the one directory under ROOT/lib/modules.
Result<std::string> module_release(const std::filesystem::path& root);

// Decompresses every .ko.xz, .ko.zst and .ko.gz under `dir` to .ko (the
// compressed file is removed), with `threads` workers. Returns how many.
// `interrupt_fd` (readable on Ctrl-C) stops it with an error.
Result<std::size_t> decompress_modules(const std::filesystem::path& dir, unsigned threads, int interrupt_fd = -1);

// Runs `depmod -b ROOT RELEASE` (kmod's).
Result<void> run_depmod(const std::filesystem::path& root, const std::string& release, int interrupt_fd = -1);

struct BootModule {
  std::string name;            // "9pnet_virtio"
  std::filesystem::path path;  // its file in the tree
};

// `names` and everything they depend on, dependencies first, each once;
// modules built into the kernel (no file) are left out. `moddir` is
// ROOT/lib/modules/RELEASE after depmod. A module of `names` the tree does
// not have is an error; one of `optional` is left out.
Result<std::vector<BootModule>> resolve_boot_modules(const std::filesystem::path& moddir,
                                                     const std::vector<std::string>& names,
                                                     const std::vector<std::string>& optional = {});

}  // namespace rxerun::vm
