#pragma once
// The x86 bzImage (a Debian package's vmlinuz) and the ELF vmlinux inside it.
// qemu boots an ELF vmlinux through the PVH entry point (both Debian kernels
// have CONFIG_PVH=y), which skips the bzImage's own decompressor. The
// compressed kernel sits where the boot protocol's setup header says:
// payload_offset (0x248) and payload_length (0x24c), counted from the
// protected-mode code at (setup_sects + 1) * 512, setup_sects at 0x1f1.

#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.h"

namespace rxerun::vm {

// The uncompressed ELF kernel carried by a bzImage held in memory.
Result<std::string> vmlinux_from_bzimage(std::string_view bzimage);

// The kernel release a bzImage names in its setup header (the string
// kernel_version at 0x20e points to, up to the first space:
// "6.1.0-57-amd64"); "" when it names none.
std::string bzimage_release(std::string_view bzimage);

// Reads `bzimage` and writes its ELF kernel to `out` (mode 0644).
Result<void> extract_vmlinux(const std::filesystem::path& bzimage, const std::filesystem::path& out);

}  // namespace rxerun::vm
