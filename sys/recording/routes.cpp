#include "sys/recording/routes.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

namespace {

bool same_route(const Route& a, const Route& b) {
  return a.family == b.family && a.dst == b.dst && a.table == b.table && a.metric == b.metric && a.dev == b.dev &&
         a.via == b.via && a.src == b.src && a.type == b.type && a.scope == b.scope;
}

// `ip [-6] OBJECT VERB WORDS...`, quoted for a shell.
std::string ip_shell(int family, std::vector<std::string> verb, const std::vector<std::string>& words) {
  std::vector<std::string> argv = ip_argv(family);
  argv.insert(argv.end(), verb.begin(), verb.end());
  argv.insert(argv.end(), words.begin(), words.end());
  return shell_join(argv);
}

Rule kernel_rule(int family, unsigned pref, unsigned table) {
  Rule r;
  r.family = family;
  r.pref = pref;
  r.table = table;
  r.action = FR_ACT_TO_TBL;
  r.protocol = RTPROT_KERNEL;
  return r;
}

}  // namespace

std::vector<Route>& RecordingRoutes::routes_here() {
  return routes_[log_.netns()];
}

std::vector<Rule>& RecordingRoutes::rules_here(int family) {
  auto [it, fresh] = rules_.try_emplace({log_.netns(), family});
  if (fresh) {
    it->second.push_back(kernel_rule(family, 0, kTableLocal));
    it->second.push_back(kernel_rule(family, 32766, kTableMain));
    if (family == AF_INET) it->second.push_back(kernel_rule(family, 32767, kTableDefault));
  }
  return it->second;
}

Result<std::vector<Route>> RecordingRoutes::routes(int family, unsigned table) {
  std::vector<Route> out;
  for (const auto& r : routes_here())
    if (r.family == family && r.table == table) out.push_back(r);
  return out;
}

Result<void> RecordingRoutes::add_route(const Route& r) {
  log_.record("add route " + route_args(r), ip_shell(r.family, {"route", "add"}, route_argv(r)));
  routes_here().push_back(r);
  return {};
}

Result<void> RecordingRoutes::remove_route(const Route& r) {
  log_.record("delete route " + route_args(r), ip_shell(r.family, {"route", "del"}, route_argv(r)));
  auto& all = routes_here();
  all.erase(std::remove_if(all.begin(), all.end(), [&](const Route& x) { return same_route(x, r); }), all.end());
  return {};
}

Result<std::vector<Rule>> RecordingRoutes::rules(int family) {
  return rules_here(family);
}

Result<void> RecordingRoutes::add_rule(const Rule& r) {
  // A rule put back carries its protocol ("kernel" for the kernel's own).
  std::vector<std::string> words = rule_argv(r);
  if (r.protocol == RTPROT_KERNEL)
    words.insert(words.end(), {"protocol", "kernel"});
  else if (r.protocol == RTPROT_BOOT)
    words.insert(words.end(), {"protocol", "boot"});
  else if (r.protocol == RTPROT_STATIC)
    words.insert(words.end(), {"protocol", "static"});
  else if (r.protocol)
    words.insert(words.end(), {"protocol", std::to_string(r.protocol)});
  log_.record("add rule " + rule_args(r), ip_shell(r.family, {"rule", "add"}, words));
  auto& all = rules_here(r.family);
  // After the rules of lower or equal priority, as the kernel inserts it.
  auto at = std::find_if(all.begin(), all.end(), [&](const Rule& x) { return x.pref > r.pref; });
  all.insert(at, r);
  return {};
}

Result<void> RecordingRoutes::remove_rule(const Rule& r) {
  log_.record("delete rule " + rule_args(r), ip_shell(r.family, {"rule", "del"}, rule_argv(r)));
  auto& all = rules_here(r.family);
  auto it = std::find_if(all.begin(), all.end(), [&](const Rule& x) { return same_rule(x, r); });
  if (it != all.end()) all.erase(it);
  return {};
}

}  // namespace rxerun::sys
