#pragma once
// A fake sys::Verbs for step tests: answers with a prepared result (or
// error) and keeps the requests it got.

#include <functional>
#include <optional>
#include <vector>

#include "sys/verbs.h"

namespace rxerun::fakes {

class FakeVerbs final : public sys::Verbs {
 public:
  Result<sys::VerbsResult> run(const sys::VerbsRequest& request, sys::SteadyTime deadline, sys::Interrupt&) override {
    requests.push_back(request);
    deadlines.push_back(deadline);
    if (on_run) on_run();
    if (error) return *error;
    if (result) return *result;
    // Unset: everything asked for passed, on rxe0.
    sys::VerbsResult r;
    r.ops_done = request.ops;
    r.server_device = r.client_device = "rxe0";
    for (unsigned size : request.sizes) r.bytes_verified += static_cast<std::uint64_t>(size) * request.ops.size();
    return r;
  }

  std::optional<sys::VerbsResult> result;  // the answer; unset: all passed
  std::optional<Error> error;              // set: run() fails with it (could not run)
  std::function<void()> on_run;            // set: called during run() (a test moves counters as traffic would)
  std::vector<sys::VerbsRequest> requests;
  std::vector<sys::SteadyTime> deadlines;
};

}  // namespace rxerun::fakes
