#include "sys/recording/capture.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

Result<void> RecordingCaptures::start(const CaptureRequest& r) {
  log_.record(fmt::format("capture on {} ({}) to {}", r.dev, r.filter, r.file),
              shell_join({"tcpdump", "-i", r.dev, "-s", std::to_string(r.snaplen), "-w", r.file, r.filter}) + " &");
  return {};
}

Result<nlohmann::json> RecordingCaptures::stop(const std::string& id) {
  log_.record("stop capture " + id, "kill %tcpdump");
  return nlohmann::json::object();
}

}  // namespace rxerun::sys
