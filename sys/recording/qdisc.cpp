#include "sys/recording/qdisc.h"

#include "base/duration.h"
#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

Result<std::optional<std::string>> RecordingQdiscs::root_kind(const std::string& dev) {
  return models_[log_.netns()].root_of(dev);
}

Result<void> RecordingQdiscs::add_netem(const std::string& dev, const NetemSpec& spec) {
  if (auto r = models_[log_.netns()].attach_netem(dev, spec); refused(r)) return r;
  std::vector<std::string> cmd{"tc", "qdisc", "add", "dev", dev, "root", "netem"};
  if (spec.delay) {
    cmd.insert(cmd.end(), {"delay", format_duration(*spec.delay)});
    if (spec.jitter) cmd.push_back(format_duration(*spec.jitter));
  }
  if (spec.loss_pct) cmd.insert(cmd.end(), {"loss", decimal_text(*spec.loss_pct) + "%"});
  if (spec.duplicate_pct) cmd.insert(cmd.end(), {"duplicate", decimal_text(*spec.duplicate_pct) + "%"});
  if (spec.corrupt_pct) cmd.insert(cmd.end(), {"corrupt", decimal_text(*spec.corrupt_pct) + "%"});
  if (spec.reorder_pct) cmd.insert(cmd.end(), {"reorder", decimal_text(*spec.reorder_pct) + "%"});
  if (spec.rate_bytes_per_s) cmd.insert(cmd.end(), {"rate", std::to_string(*spec.rate_bytes_per_s * 8) + "bit"});
  log_.record("add netem on " + dev, shell_join(cmd));
  return {};
}

Result<QdiscStats> RecordingQdiscs::root_stats(const std::string& dev) {
  log_.record("read the qdisc statistics of " + dev, shell_join({"tc", "-s", "qdisc", "show", "dev", dev}));
  return QdiscStats{};
}

Result<void> RecordingQdiscs::remove_root(const std::string& dev) {
  if (auto r = models_[log_.netns()].detach_root(dev); refused(r)) return r;
  log_.record("remove the root qdisc of " + dev, shell_join({"tc", "qdisc", "del", "dev", dev, "root"}));
  return {};
}

}  // namespace rxerun::sys
