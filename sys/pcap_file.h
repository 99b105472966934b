#pragma once
// Reading capture files (classic pcap and pcapng, whichever libpcap
// recognises) frame by frame, with nanosecond timestamps. Owns the pcap_t and
// the file's 1 MiB read buffer (stdio's default 4 KiB made the read(2) calls
// a fifth of `rxerun decode`'s time); a frame's bytes are libpcap's buffer,
// valid until the next call to next(): nothing is copied.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/result.h"

struct pcap;  // libpcap's pcap_t

namespace rxerun::sys {

struct PcapFrame {
  std::int64_t seconds = 0;            // since the epoch
  std::uint32_t nanoseconds = 0;       // 0..999999999
  std::span<const std::uint8_t> data;  // the captured bytes (caplen)
  std::uint32_t wire_length = 0;       // the frame's length on the wire (len)
};

class PcapFile {
 public:
  // Opens `path`. Errors say why without naming the file: strerror's words
  // when it cannot be opened ("No such file or directory"), libpcap's when
  // it is not a capture file ("unknown file format").
  static Result<PcapFile> open(const std::string& path);

  PcapFile(PcapFile&& other) noexcept : handle_(other.handle_), buffer_(std::move(other.buffer_)) {
    other.handle_ = nullptr;
  }
  PcapFile& operator=(PcapFile&& other) noexcept;
  PcapFile(const PcapFile&) = delete;
  PcapFile& operator=(const PcapFile&) = delete;
  ~PcapFile();

  // The file's link type (LINKTYPE_*, as pcap_datalink() returns it; for
  // pcapng the first interface's).
  int link_type() const;

  // The next frame; nullopt at the end of the file. An error when the file
  // is cut short or damaged ("truncated dump file; tried to read 98 captured
  // bytes, only got 40"): the frames before it were whole.
  Result<std::optional<PcapFrame>> next();

 private:
  PcapFile(pcap* handle, std::unique_ptr<char[]> buffer) : handle_(handle), buffer_(std::move(buffer)) {}
  pcap* handle_ = nullptr;
  std::unique_ptr<char[]> buffer_;  // the FILE's; outlives it (pcap_close in ~PcapFile)
};

}  // namespace rxerun::sys
