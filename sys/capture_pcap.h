#pragma once
// Captures with libpcap: one packet socket and one reading thread per
// capture, frames written with pcap_dump as they arrive and decoded on the
// way (sys/capture.h). Captures still running when this object goes (a run
// with --keep, an error) are stopped and their files closed.

#include <map>
#include <memory>
#include <mutex>

#include "sys/capture.h"

namespace rxerun::sys {

class PcapCaptures final : public Captures {
 public:
  PcapCaptures();
  PcapCaptures(const PcapCaptures&) = delete;
  PcapCaptures& operator=(const PcapCaptures&) = delete;
  ~PcapCaptures() override;

  Result<void> start(const CaptureRequest& request) override;
  Result<nlohmann::json> stop(const std::string& id) override;
  Result<bool> recover(const std::string& partial, const std::string& file) override;

  struct Running;

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Running>> running_;
};

}  // namespace rxerun::sys
