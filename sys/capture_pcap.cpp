#include "sys/capture_pcap.h"

#include <pcap/pcap.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "base/files.h"

#include "roce/packet.h"
#include "roce/summary.h"

namespace rxerun::sys {

struct PcapCaptures::Running {
  CaptureRequest request;
  pcap_t* pcap = nullptr;
  // The file being written aside; pcap_dump writes to a stream of its own
  // over a duplicate of its descriptor, so that closing the dumper leaves
  // the file to commit (fsync, rename) or to abort (removed).
  std::optional<AtomicFile> file;
  pcap_dumper_t* dumper = nullptr;
  int link_type = 0;
  std::thread reader;
  std::atomic<bool> stopping{false};
  // Written by the reader thread only, read after it was joined.
  roce::Summary summary;
  std::uint64_t frames = 0;
  std::string error;

  ~Running() {
    if (dumper) pcap_dump_close(dumper);
    if (pcap) pcap_close(pcap);
  }

  static void on_frame(u_char* user, const pcap_pkthdr* header, const u_char* bytes) {
    auto* self = reinterpret_cast<Running*>(user);
    pcap_dump(reinterpret_cast<u_char*>(self->dumper), header, bytes);
    ++self->frames;
    self->summary.add(roce::decode(bytes, header->caplen, self->link_type), header->len);
  }

  void read_until_stopped() {
    while (!stopping.load()) {
      const int r = pcap_dispatch(pcap, -1, on_frame, reinterpret_cast<u_char*>(this));
      if (r == PCAP_ERROR) {
        error = pcap_geterr(pcap);
        return;
      }
    }
    // What the kernel captured before the stop and the reader has not seen.
    char errbuf[PCAP_ERRBUF_SIZE];
    if (pcap_setnonblock(pcap, 1, errbuf) != 0) return;
    // A break requested while the loop above was between two reads shows
    // here once (libpcap then clears it); anything else <= 0: nothing left.
    for (int breaks = 0;;) {
      const int r = pcap_dispatch(pcap, -1, on_frame, reinterpret_cast<u_char*>(this));
      if (r == PCAP_ERROR_BREAK && ++breaks < 3) continue;
      if (r <= 0) return;
    }
  }
};

namespace {

// libpcap's activation errors, as errno where one fits.
int errno_of_activate(int status) {
  switch (status) {
    case PCAP_ERROR_NO_SUCH_DEVICE: return ENODEV;
    case PCAP_ERROR_PERM_DENIED: return EPERM;
    case PCAP_ERROR_IFACE_NOT_UP: return ENETDOWN;
    default: return EIO;
  }
}

}  // namespace

PcapCaptures::PcapCaptures() = default;

PcapCaptures::~PcapCaptures() {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, _] : running_) ids.push_back(id);
  }
  for (const auto& id : ids) (void)stop(id);
}

Result<void> PcapCaptures::start(const CaptureRequest& request) {
  {
    std::lock_guard lock(mutex_);
    if (running_.count(request.id)) return make_error("capture " + request.id + " is already running", EEXIST);
  }
  auto run = std::make_unique<Running>();
  run->request = request;
  char errbuf[PCAP_ERRBUF_SIZE] = "";
  run->pcap = pcap_create(request.dev.c_str(), errbuf);
  if (!run->pcap) return make_error(std::string("cannot capture on ") + request.dev + ": " + errbuf, EIO);
  // Frames are handed over as they come (no batching delay), so that a stop
  // right after the traffic finds them all.
  pcap_set_snaplen(run->pcap, request.snaplen);
  pcap_set_immediate_mode(run->pcap, 1);
  pcap_set_timeout(run->pcap, 100);
  // Immediate mode reads frame by frame from a ring of snaplen-sized slots:
  // 32 MiB hold 3,500 full-sized frames, a burst rxe sends faster than the
  // reader thread takes them under software emulation.
  pcap_set_buffer_size(run->pcap, 32 << 20);
  if (const int status = pcap_activate(run->pcap); status < 0) {
    std::string why = status == PCAP_ERROR_NO_SUCH_DEVICE ? "no such interface" : pcap_statustostr(status);
    if (status == PCAP_ERROR || status == PCAP_ERROR_PERM_DENIED) why = pcap_geterr(run->pcap);
    return make_error("cannot capture on " + request.dev + ": " + why, errno_of_activate(status));
  }
  run->link_type = pcap_datalink(run->pcap);

  bpf_program program{};
  if (pcap_compile(run->pcap, &program, request.filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
    return make_error("capture filter '" + request.filter + "': " + pcap_geterr(run->pcap), EINVAL);
  const int set = pcap_setfilter(run->pcap, &program);
  pcap_freecode(&program);
  if (set != 0) return make_error("capture filter '" + request.filter + "': " + pcap_geterr(run->pcap), EINVAL);

  auto file = request.partial.empty() ? AtomicFile::create(request.file, "capture")
                                      : AtomicFile::create_at(request.file, request.partial, "capture");
  if (!file) return file.error();
  run->file.emplace(std::move(*file));
  const int stream_fd = ::fcntl(run->file->fd(), F_DUPFD_CLOEXEC, 3);
  std::FILE* stream = stream_fd < 0 ? nullptr : ::fdopen(stream_fd, "wb");
  if (!stream) {
    const int code = errno;
    if (stream_fd >= 0) ::close(stream_fd);
    return make_error("cannot write capture " + request.file + ": " + std::strerror(code), code);
  }
  // From here the dumper owns `stream` (libpcap closes it when the header cannot be written).
  run->dumper = pcap_dump_fopen(run->pcap, stream);
  if (!run->dumper) return make_error("cannot write capture " + request.file + ": " + pcap_geterr(run->pcap), EIO);

  Running* raw = run.get();
  run->reader = std::thread([raw] { raw->read_until_stopped(); });
  std::lock_guard lock(mutex_);
  running_.emplace(request.id, std::move(run));
  return {};
}

Result<nlohmann::json> PcapCaptures::stop(const std::string& id) {
  std::unique_ptr<Running> run;
  {
    std::lock_guard lock(mutex_);
    auto it = running_.find(id);
    if (it == running_.end()) return make_error("no capture " + id + " is running", ENOENT);
    run = std::move(it->second);
    running_.erase(it);
  }
  run->stopping.store(true);
  pcap_breakloop(run->pcap);
  run->reader.join();

  nlohmann::json facts = run->summary.facts();
  facts["frames"] = run->frames;
  pcap_stat stats{};
  facts["dropped"] = pcap_stats(run->pcap, &stats) == 0 ? stats.ps_drop : 0;
  facts["file"] = run->request.file;
  if (!run->error.empty()) facts["error"] = run->error;
  const bool flushed = pcap_dump_flush(run->dumper) == 0;
  const int code = errno;
  pcap_dump_close(run->dumper);
  run->dumper = nullptr;
  if (!flushed) return make_error("cannot write capture " + run->request.file + ": " + std::strerror(code), code);
  if (auto r = run->file->commit(); !r) return r.error();
  return facts;
}

Result<bool> PcapCaptures::recover(const std::string& partial, const std::string& file) {
  return rename_leftover(partial, file, "capture");
}

}  // namespace rxerun::sys
