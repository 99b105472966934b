#include <doctest/doctest.h>

#include <csignal>

#include "engine/step.h"
#include "fakes/fake_system.h"
#include "steps/kinds.h"

using namespace rxerun;

namespace {

class TestContext final : public StepContext {
 public:
  TestContext(sys::System& sys, sys::SteadyTime deadline) : sys_(sys), deadline_(deadline) {}
  sys::System& sys() override { return sys_; }
  const std::string& scenario() const override { return name_; }
  const StepSpec& step() const override { return step_; }
  sys::SteadyTime deadline() const override { return deadline_; }
  Result<void> will_change(nlohmann::json, std::string, Footprint) override {
    return make_error("sleep changes nothing");
  }
  Result<nlohmann::json> revert(const std::string&) override { return make_error("no"); }

 private:
  sys::System& sys_;
  sys::SteadyTime deadline_;
  std::string name_ = "t";
  StepSpec step_;
};

StepResult sleep_for(const char* duration, fakes::FakeSystem& fake, sys::SteadyTime deadline) {
  static const StepSpec spec;
  nlohmann::json values = {{"duration", duration}};
  TestContext ctx(fake.system, deadline);
  return steps::sleep_kind().run(Params(values, spec, "t.yaml"), ctx);
}

}  // namespace

TEST_CASE("sleep: waits the whole duration") {
  fakes::FakeSystem fake;
  auto r = sleep_for("2s", fake, sys::SteadyTime::max());
  CHECK(r.outcome == Outcome::Ok);
  CHECK(r.facts.at("slept_ms") == 2000);
  CHECK(fake.clock.waits == std::vector<Duration>{Duration(2000)});
}

TEST_CASE("sleep: stops at the step's deadline and says timeout") {
  fakes::FakeSystem fake;
  auto r = sleep_for("1m", fake, fake.clock.now() + std::chrono::milliseconds(1500));
  CHECK(r.outcome == Outcome::Timeout);
  CHECK(r.facts.at("slept_ms") == 1500);
}

TEST_CASE("sleep: Ctrl-C cuts it short") {
  fakes::FakeSystem fake;
  fake.clock.interrupt_at(fake.clock.now() + std::chrono::milliseconds(300));
  auto r = sleep_for("1h", fake, sys::SteadyTime::max());
  CHECK(r.outcome == Outcome::Error);
  CHECK(fake.interrupt.signal() == SIGINT);
}
