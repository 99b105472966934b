#include "fakes/fake_system.h"

namespace rxerun::fakes {

sys::WaitResult FakeClock::wait_until(sys::SteadyTime until, sys::Interrupt& interrupt) {
  if (interrupt.requested()) return sys::WaitResult::Interrupted;
  if (interrupt_at_ && *interrupt_at_ <= until) {
    if (*interrupt_at_ > now_) now_ = *interrupt_at_;
    interrupt_at_.reset();
    interrupt.request(SIGINT);
    return sys::WaitResult::Interrupted;
  }
  if (until == sys::SteadyTime::max()) throw std::logic_error("a test waited for ever");
  if (until > now_) {
    waits.push_back(std::chrono::duration_cast<Duration>(until - now_));
    now_ = until;
  }
  return sys::WaitResult::Reached;
}

namespace {
class FakeScope final : public sys::NetnsScope {
 public:
  FakeScope(FakeNetns& ns, std::string previous) : ns_(ns), previous_(std::move(previous)) {}
  ~FakeScope() override {
    ns_.log.push_back("leave " + ns_.current);
    ns_.current = previous_;
  }

 private:
  FakeNetns& ns_;
  std::string previous_;
};
}  // namespace

Result<std::unique_ptr<sys::NetnsScope>> FakeNetns::enter(const std::string& name) {
  if (!existing.count(name)) return make_error("network namespace '" + name + "' does not exist", ENOENT);
  auto scope = std::make_unique<FakeScope>(*this, current);
  current = name;
  log.push_back("enter " + name);
  return std::unique_ptr<sys::NetnsScope>(std::move(scope));
}

}  // namespace rxerun::fakes
