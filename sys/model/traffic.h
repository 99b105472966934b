#pragma once
// What traffic does in the model (sys/model/kernel.h): pings answered,
// verbs checks passed and captures counted as a test says; unset, as a plan
// assumes: every reply back, every byte verified, nothing captured.

#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sys/capture.h"
#include "sys/model/clock.h"
#include "sys/ping.h"
#include "sys/verbs.h"

namespace rxerun::sys {

class ModelPinger final : public Pinger {
 public:
  ModelPinger(ModelKernel& k, ModelClock& clock) : k_(k), clock_(clock) {}
  Result<PingResult> ping(const PingSpec& spec, SteadyTime deadline, Interrupt& interrupt) override;

  std::optional<int> replies;     // of `count` sent; unset: all
  std::string send_error;         // set: every request was refused with this text, nothing came back
  std::optional<Duration> takes;  // set: virtual time a whole ping takes; cut short at the deadline
  std::vector<PingSpec> calls;

 private:
  ModelKernel& k_;
  ModelClock& clock_;
};

class ModelVerbs final : public Verbs {
 public:
  explicit ModelVerbs(ModelKernel& k) : k_(k) {}
  Result<VerbsResult> run(const VerbsRequest& request, SteadyTime deadline, Interrupt& interrupt) override;
  // "verbs check 10.10.0.2 in netns b -> 10.10.0.1:18515 in netns a: send, write, read; sizes 64, 4096"
  static std::string describe(const VerbsRequest& request);

  std::optional<VerbsResult> result;  // the answer; unset: every operation passed
  std::function<void()> on_run;       // called during run(): a test moves counters as traffic would
  std::vector<VerbsRequest> requests;
  std::vector<SteadyTime> deadlines;

 private:
  ModelKernel& k_;
};

class ModelCaptures final : public Captures {
 public:
  explicit ModelCaptures(ModelKernel& k) : k_(k) {}
  // EEXIST when that capture runs already.
  Result<void> start(const CaptureRequest& request) override;
  // `facts` plus `file`; ENOENT when no such capture runs.
  Result<nlohmann::json> stop(const std::string& id) override;
  Result<bool> recover(const std::string& partial, const std::string& file) override;

  nlohmann::json facts = {{"packets", 0}};
  std::map<std::string, CaptureRequest> running;  // by id
  std::vector<CaptureRequest> requests;
  std::vector<std::string> stops;
  std::vector<std::pair<std::string, std::string>> recovered;  // {partial, file}

 private:
  ModelKernel& k_;
};

}  // namespace rxerun::sys
