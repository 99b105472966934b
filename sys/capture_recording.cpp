#include "sys/capture_recording.h"

#include <fmt/format.h>

#include "sys/recording.h"

namespace rxerun::sys {

Result<void> RecordingCaptures::start(const CaptureRequest& r) {
  log_.record(fmt::format("capture on {} ({}) to {}", r.dev, r.filter, r.file),
              fmt::format("tcpdump -i {} -s {} -w {} '{}' &", r.dev, r.snaplen, r.file, r.filter));
  return {};
}

Result<nlohmann::json> RecordingCaptures::stop(const std::string& id) {
  log_.record("stop capture " + id, "kill %tcpdump");
  return nlohmann::json::object();
}

}  // namespace rxerun::sys
