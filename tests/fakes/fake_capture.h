#pragma once
// A fake sys::Captures for step tests: keeps the requests, knows which
// captures run, answers stop() with prepared facts and notes recover().

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "sys/capture.h"

namespace rxerun::fakes {

class FakeCaptures final : public sys::Captures {
 public:
  Result<void> start(const sys::CaptureRequest& request) override {
    requests.push_back(request);
    if (start_error) return *start_error;
    if (running.count(request.id)) return make_error("capture " + request.id + " is already running", EEXIST);
    running[request.id] = request;
    return {};
  }
  Result<nlohmann::json> stop(const std::string& id) override {
    stops.push_back(id);
    auto it = running.find(id);
    if (it == running.end()) return make_error("no capture " + id + " is running", ENOENT);
    nlohmann::json facts = this->facts;
    facts["file"] = it->second.file;
    running.erase(it);
    return facts;
  }

  Result<bool> recover(const std::string& partial, const std::string& file) override {
    recovered.emplace_back(partial, file);
    return true;
  }

  std::optional<Error> start_error;                    // set: start() fails with it
  nlohmann::json facts = {{"packets", 0}};             // what stop() reports (plus `file`)
  std::map<std::string, sys::CaptureRequest> running;  // by id
  std::vector<sys::CaptureRequest> requests;
  std::vector<std::string> stops;
  std::vector<std::pair<std::string, std::string>> recovered;  // recover(): {partial, file}
};

}  // namespace rxerun::fakes
