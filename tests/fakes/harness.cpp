#include "fakes/harness.h"

#include <algorithm>

#include "steps/kinds.h"

namespace rxerun::fakes {

Harness::Harness() : ScenarioHarness(Registry(steps::all_kinds())) {}
Harness::Harness(Registry r) : ScenarioHarness(std::move(r)) {}

std::vector<std::string> service_log(const FakeSystem& f, std::string_view service) {
  return service_log(f, {service});
}

std::vector<std::string> service_log(const FakeSystem& f, std::initializer_list<std::string_view> services) {
  std::vector<std::string> out;
  for (const auto& a : f.kernel.actions)
    if (std::find(services.begin(), services.end(), a.service) != services.end()) out.push_back(a.what);
  return out;
}

long position(const std::vector<std::string>& log, std::string_view entry) {
  auto it = std::find(log.begin(), log.end(), entry);
  return it == log.end() ? -1 : it - log.begin();
}

RxePairHarness::RxePairHarness() {
  fake.tools.clock = &fake.clock;
  fake.netns.existing = {"a", "b"};
  fake.links.add_host_link("a", {.name = "vA", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  fake.links.add_host_link("b", {.name = "vB", .kind = "veth", .up = true, .carrier = true, .mtu = 1500});
  fake.rdma.devices.push_back({.index = 1, .name = "rxe0", .netns = "a", .netdev = "vA"});
  fake.rdma.devices.push_back({.index = 2, .name = "rxe1", .netns = "b", .netdev = "vB"});
  fake.rdma.device_counters["rxe0"] = {{"sent_pkts", 10}, {"rcvd_pkts", 10}};
  fake.rdma.device_counters["rxe1"] = {{"sent_pkts", 5}, {"rcvd_pkts", 5}};
}

}  // namespace rxerun::fakes
