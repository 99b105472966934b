#include "vm/kernel/image.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "vm/files.h"
#include "vm/kernel/decompress.h"

namespace rxerun::vm {

namespace {

std::uint32_t le32(std::string_view d, std::size_t off) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(d[off])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(d[off + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(d[off + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(d[off + 3])) << 24;
}

std::uint16_t le16(std::string_view d, std::size_t off) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(d[off]) | static_cast<unsigned char>(d[off + 1]) << 8);
}

}  // namespace

Result<std::string> vmlinux_from_bzimage(std::string_view image) {
  constexpr std::size_t kSetupSects = 0x1f1, kBootFlag = 0x1fe, kHeader = 0x202, kVersion = 0x206,
                        kPayloadOffset = 0x248, kPayloadLength = 0x24c;
  if (image.size() < kPayloadLength + 4 || le16(image, kBootFlag) != 0xaa55 || image.substr(kHeader, 4) != "HdrS")
    return make_error("not an x86 bzImage (no boot sector signature or 'HdrS' setup header)");
  if (le16(image, kVersion) < 0x0208)
    return make_error("bzImage boot protocol " + std::to_string(le16(image, kVersion) >> 8) + "." +
                      std::to_string(le16(image, kVersion) & 0xff) + " is older than 2.08 (no payload fields)");
  std::size_t setup_sects = static_cast<unsigned char>(image[kSetupSects]);
  if (setup_sects == 0) setup_sects = 4;  // the boot protocol's rule for old images
  const std::size_t start = (setup_sects + 1) * 512 + le32(image, kPayloadOffset);
  std::size_t length = le32(image, kPayloadLength);
  if (start >= image.size() || length > image.size() - start || length < 8)
    return make_error("bzImage payload (offset " + std::to_string(start) + ", " + std::to_string(length) +
                      " bytes) lies outside the " + std::to_string(image.size()) + "-byte file");
  std::string_view payload = image.substr(start, length);

  // Every format but gzip is followed by the uncompressed size (kbuild's
  // size_append, 4 bytes little-endian), which the decompressors would take
  // for a truncated second stream.
  std::optional<std::uint32_t> expected_size;
  if (!payload.starts_with("\x1f\x8b")) {
    expected_size = le32(payload, payload.size() - 4);
    payload.remove_suffix(4);
  }
  auto elf = decompress_buffer(payload, "the bzImage's kernel payload");
  if (!elf) return elf.error();
  if (!elf->starts_with("\x7f"
                        "ELF"))
    return make_error("the bzImage's payload does not decompress to an ELF kernel");
  if (expected_size && elf->size() != *expected_size)
    return make_error("the bzImage's payload decompressed to " + std::to_string(elf->size()) +
                      " bytes, its header says " + std::to_string(*expected_size));
  return elf;
}

std::string bzimage_release(std::string_view image) {
  constexpr std::size_t kBootFlag = 0x1fe, kHeader = 0x202, kKernelVersion = 0x20e;
  if (image.size() < kKernelVersion + 2 || le16(image, kBootFlag) != 0xaa55 || image.substr(kHeader, 4) != "HdrS")
    return "";
  const std::size_t at = 0x200u + le16(image, kKernelVersion);
  if (le16(image, kKernelVersion) == 0 || at >= image.size()) return "";
  std::string_view version = image.substr(at, std::min<std::size_t>(256, image.size() - at));
  version = version.substr(0, version.find_first_of(std::string_view(" \0\n", 3)));
  return std::string(version);
}

Result<void> extract_vmlinux(const std::filesystem::path& bzimage, const std::filesystem::path& out) {
  auto image = read_whole_file(bzimage);
  if (!image) return image.error();
  auto elf = vmlinux_from_bzimage(*image);
  if (!elf) return make_error(bzimage.string() + ": " + elf.error().message);
  return write_whole_file(out, *elf, 0644);
}

}  // namespace rxerun::vm
