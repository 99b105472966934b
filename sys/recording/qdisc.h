#pragma once
// Root qdiscs for `rxerun plan` (sys/recording/system.h): netem is taken to
// be there; the netems the plan added are the root of their interfaces
// (sys/model/qdisc.h), and their statistics read as nothing counted yet.

#include <map>
#include <string>

#include "sys/model/qdisc.h"
#include "sys/qdisc.h"

namespace rxerun::sys {

class ActionLog;

class RecordingQdiscs final : public Qdiscs {
 public:
  explicit RecordingQdiscs(ActionLog& log) : log_(log) {}
  Result<bool> netem_available() override { return true; }
  Result<std::optional<std::string>> root_kind(const std::string& dev) override;
  Result<void> add_netem(const std::string& dev, const NetemSpec& spec) override;
  Result<QdiscStats> root_stats(const std::string& dev) override;
  Result<void> remove_root(const std::string& dev) override;

 private:
  ActionLog& log_;
  std::map<std::string, QdiscModel> models_;  // by namespace
};

}  // namespace rxerun::sys
