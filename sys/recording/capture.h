#pragma once
// Captures for `rxerun plan` (sys/recording/system.h): notes what would be captured,
// as the tcpdump command a person would run, and captures nothing.

#include "sys/capture.h"

namespace rxerun::sys {

class ActionLog;

class RecordingCaptures final : public Captures {
 public:
  explicit RecordingCaptures(ActionLog& log) : log_(log) {}
  Result<void> start(const CaptureRequest& request) override;
  Result<nlohmann::json> stop(const std::string& id) override;

 private:
  ActionLog& log_;
};

}  // namespace rxerun::sys
