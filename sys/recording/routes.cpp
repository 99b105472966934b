#include "sys/recording/routes.h"

#include <linux/rtnetlink.h>

#include "base/strings.h"
#include "sys/recording/system.h"

namespace rxerun::sys {

namespace {

// `ip [-6] OBJECT VERB WORDS...`, quoted for a shell.
std::string ip_shell(int family, std::vector<std::string> verb, const std::vector<std::string>& words) {
  std::vector<std::string> argv = ip_argv(family);
  argv.insert(argv.end(), verb.begin(), verb.end());
  argv.insert(argv.end(), words.begin(), words.end());
  return shell_join(argv);
}

}  // namespace

RoutesModel& RecordingRoutes::here() {
  return models_[log_.netns()];
}

Result<std::vector<Route>> RecordingRoutes::routes(int family, unsigned table) {
  return here().routes_of(family, table);
}

Result<void> RecordingRoutes::add_route(const Route& r) {
  if (auto added = here().insert_route(r); refused(added)) return added;
  log_.record("add route " + route_args(r), ip_shell(r.family, {"route", "add"}, route_argv(r)));
  return {};
}

Result<void> RecordingRoutes::remove_route(const Route& r) {
  if (auto removed = here().delete_route(r); refused(removed)) return removed;
  log_.record("delete route " + route_args(r), ip_shell(r.family, {"route", "del"}, route_argv(r)));
  return {};
}

Result<std::vector<Rule>> RecordingRoutes::rules(int family) {
  return here().rules_of(family);
}

Result<void> RecordingRoutes::add_rule(const Rule& r) {
  if (auto added = here().insert_rule(r); refused(added)) return added;
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
  return {};
}

Result<void> RecordingRoutes::remove_rule(const Rule& r) {
  if (auto removed = here().delete_rule(r); refused(removed)) return removed;
  log_.record("delete rule " + rule_args(r), ip_shell(r.family, {"rule", "del"}, rule_argv(r)));
  return {};
}

}  // namespace rxerun::sys
