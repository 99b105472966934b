#include "sys/pcap_file.h"

#include <pcap/pcap.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rxerun::sys {

namespace {

constexpr std::size_t kReadBuffer = 1 << 20;

}  // namespace

Result<PcapFile> PcapFile::open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return make_error(std::strerror(errno), errno);
  auto buffer = std::make_unique<char[]>(kReadBuffer);
  std::setvbuf(file, buffer.get(), _IOFBF, kReadBuffer);
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  // On success the pcap_t owns the FILE (pcap_close() closes it); on failure
  // it is still ours.
  pcap_t* handle = pcap_fopen_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!handle) {
    std::fclose(file);
    return make_error(errbuf);
  }
  return PcapFile(handle, std::move(buffer));
}

PcapFile& PcapFile::operator=(PcapFile&& other) noexcept {
  if (this != &other) {
    if (handle_) pcap_close(handle_);
    handle_ = other.handle_;
    other.handle_ = nullptr;
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

PcapFile::~PcapFile() {
  if (handle_) pcap_close(handle_);
}

int PcapFile::link_type() const {
  return pcap_datalink(handle_);
}

Result<std::optional<PcapFrame>> PcapFile::next() {
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  switch (pcap_next_ex(handle_, &header, &data)) {
    case 1:
      // With nanosecond precision, tv_usec holds nanoseconds.
      return std::optional<PcapFrame>(PcapFrame{static_cast<std::int64_t>(header->ts.tv_sec),
                                                static_cast<std::uint32_t>(header->ts.tv_usec),
                                                {data, header->caplen},
                                                header->len});
    case PCAP_ERROR_BREAK: return std::optional<PcapFrame>();
    default: return make_error(pcap_geterr(handle_));
  }
}

}  // namespace rxerun::sys
