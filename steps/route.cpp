// route: a route in a routing table (`ip route add`), over rtnetlink. The
// kernel keys a route by table, destination and metric: a route with that
// key and the same interface, gateway, source, type and scope is adopted as
// it is (changed=false, no undo: it was not rxerun's to delete); one that
// differs is an error naming what is there. Undo deletes exactly the route
// the step added; one already gone (with its interface, or its namespace)
// is success. The forced wire's routes (docs/kernel-notes.md, "Forced wire") are this kind's
// reason to be: `10.10.0.2/32 dev vA src 10.10.0.1 table 100`. The journal
// records the namespace's inode and the interface's index
// (steps/common/identity.h): a route on an interface made since under the name, or
// in a namespace made again under its name, is not the run's and is left.

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <optional>

#include "base/try.h"
#include "engine/checks.h"
#include "engine/picture.h"
#include "engine/step.h"
#include "engine/vars.h"
#include "steps/common/identity.h"
#include "steps/common/journal_record.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

int type_number(const std::string& name) {
  if (name == "local") return RTN_LOCAL;
  if (name == "blackhole") return RTN_BLACKHOLE;
  if (name == "unreachable") return RTN_UNREACHABLE;
  if (name == "prohibit") return RTN_PROHIBIT;
  return RTN_UNICAST;
}

int scope_number(const std::string& name) {
  if (name == "link") return RT_SCOPE_LINK;
  if (name == "host") return RT_SCOPE_HOST;
  return RT_SCOPE_UNIVERSE;
}

// The route the parameters name, or the parameter at fault and why. `p`
// holds every parameter checked on its own (at load time also those that
// read a later fact: `deferred` says which to leave out then).
struct ParsedRoute {
  std::optional<sys::Route> route;
  std::string path, why;
};

ParsedRoute parse_route_spec(const nlohmann::json& p) {
  auto fail = [](std::string path, std::string why) {
    return ParsedRoute{std::nullopt, std::move(path), std::move(why)};
  };
  sys::Route r;
  r.type = type_number(p.value("type", "unicast"));
  const std::string dst = p.at("dst").get<std::string>();
  int family = 0;
  std::optional<sys::Prefix> via, src;
  if (p.contains("via")) via = sys::parse_address(p.at("via").get<std::string>());
  if (p.contains("src")) src = sys::parse_address(p.at("src").get<std::string>());
  if (via) family = via->family;
  if (src) {
    if (family && family != src->family) return fail("src", "'src' and 'via' are of different address families");
    family = src->family;
  }
  if (dst == "default") {
    r.family = family ? family : AF_INET;
    r.dst = r.family == AF_INET6 ? "::/0" : "0.0.0.0/0";
  } else {
    std::string why;
    auto prefix = sys::parse_prefix(dst, &why);
    if (!prefix) return fail("dst", "'dst' must be a prefix such as 10.10.0.2/32, an address or 'default': " + why);
    if (family && family != prefix->family)
      return fail(via ? "via" : "src",
                  "'dst' is " + sys::family_name(prefix->family) + " and '" + (via ? "via" : "src") + "' is not");
    r.family = prefix->family;
    r.dst = prefix->text;
  }
  if (via) r.via = via->text;
  if (src) r.src = src->text;
  if (p.contains("dev")) r.dev = p.at("dev").get<std::string>();
  const std::string table = p.contains("table") ? scalar_text(p.at("table")) : "main";
  auto t = sys::parse_table(table);
  if (!t) return fail("table", "'table' must be a number 1..4294967295 or main, local, default, got '" + table + "'");
  r.table = *t;
  r.metric = p.contains("metric") ? static_cast<unsigned>(p.at("metric").get<long long>())
                                  : (r.family == AF_INET6 ? 1024u : 0u);
  const bool reaches = r.type == RTN_UNICAST || r.type == RTN_LOCAL;
  if (reaches && r.dev.empty() && r.via.empty())
    return fail("", "a " + sys::route_type_name(r.type) + " route needs 'dev' or 'via' (or both)");
  if (!reaches && (!r.dev.empty() || !r.via.empty()))
    return fail(!r.dev.empty() ? "dev" : "via",
                "a " + sys::route_type_name(r.type) + " route goes nowhere: it takes no 'dev' and no 'via'");
  r.scope = p.contains("scope") ? scope_number(p.at("scope").get<std::string>()) : sys::default_scope(r);
  return ParsedRoute{r, "", ""};
}

// Defined after the spec below, which names them.
StepResult run_route(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_route(const nlohmann::json& args, UndoContext& ctx);

const std::vector<std::string> kTypes = {"unicast", "local", "blackhole", "unreachable", "prohibit"};
const std::vector<std::string> kScopes = {"global", "link", "host"};

bool deferred(const nlohmann::json& p, const char* key) {
  return p.contains(key) && has_step_references(p.at(key));
}

void validate_route(const nlohmann::json& p, const KindSpec::Complaint& complain) {
  for (const char* key : {"dst", "via", "src", "table", "dev"})
    if (deferred(p, key)) return;  // checked at run time, when the fact is known
  auto parsed = parse_route_spec(p);
  if (!parsed.route) complain(parsed.path, parsed.why);
}
void picture_route(const nlohmann::json& p, const StepSpec& step, LabPicture& picture);

}  // namespace

Kind route_kind() {
  KindSpec spec;
  spec.name = "route";
  spec.needs = {Need::NetAdmin};
  spec.objects = {{.effect = LabEffect::Uses, .object = LabObject::Interface, .param = "dev"}};
  spec.summary =
      "Add a route to a routing table (ip route add); a route already there as asked is left alone, undo deletes "
      "the route added.";
  spec.params = {
      {.name = "dst",
       .type = ParamType::String,
       .required = true,
       .help = "the destination: a prefix (10.10.0.2/32, fd00::/64), an address (its full length) or default"},
      {.name = "dev", .type = ParamType::IfName, .help = "the interface the route leaves by"},
      {.name = "via", .type = ParamType::Address, .help = "the gateway"},
      {.name = "src",
       .type = ParamType::Address,
       .help = "the preferred source address of traffic the host sends along the route (an address of its own)"},
      {.name = "table",
       .type = ParamType::Scalar,
       .default_value = "main",
       .help = "the table: a number 1..4294967295, or main, local, default"},
      {.name = "metric",
       .type = ParamType::Int,
       .help = "the route's metric (priority); default 0 for IPv4, 1024 for IPv6, as the kernel gives",
       .min = 0,
       .max = 4294967295LL},
      {.name = "scope",
       .type = ParamType::Enum,
       .help = "default as ip(8): host for a local route, link for an IPv4 route without a gateway, else global",
       .choices = kScopes},
      {.name = "type",
       .type = ParamType::Enum,
       .default_value = "unicast",
       .help = "unicast (dev and/or via), local, or one that drops: blackhole, unreachable, prohibit",
       .choices = kTypes},
  };
  spec.facts = {
      {"changed", "whether the step added the route (false: it was there, and is left there)"},
      {"route", "the route as ip(8) writes it: 10.10.0.2/32 dev vA src 10.10.0.1 table 100 (default: 0.0.0.0/0)"},
      {"dev", "the interface, \"\" when none"},
      {"table", "the table: main, local, default or its number"},
      {"metric", "the metric"},
      {.name = "removed",
       .help = "at its revert: whether the route was deleted (false: it was gone already)",
       .when = kAtRevert},
  };
  spec.example =
      "# The forced wire (docs/kernel-notes.md): traffic for the peer's address leaves by vA.\n"
      "- route: {dst: 10.10.0.2/32, dev: vA, src: 10.10.0.1, table: 100}\n";
  spec.validate = validate_route;
  Kind kind{std::move(spec), run_route, undo_route};
  kind.picture = picture_route;
  return kind;
}

namespace {

// The route the step added, on the interface it leaves by (or in the
// namespace, without one): the undo deletes exactly that route.
struct RouteRecord {
  static constexpr std::string_view kOp = "route";
  sys::Route route;
  nlohmann::json identity;  // link_identity() of its dev, else netns_identity(); null when not recorded

  nlohmann::json to_args() const {
    const sys::Route& r = route;
    nlohmann::json args = {{"op", kOp},        {"family", sys::family_name(r.family)},
                           {"dst", r.dst},     {"dev", r.dev},
                           {"via", r.via},     {"src", r.src},
                           {"table", r.table}, {"metric", r.metric},
                           {"scope", r.scope}, {"type", r.type}};
    if (!identity.is_null()) args["identity"] = identity;
    return args;
  }
  // Every field checked.
  static Result<RouteRecord> read(JournalArgs& a) {
    RouteRecord out;
    sys::Route& r = out.route;
    const std::string family = a.text("family");
    if (a.ok() && family != "inet" && family != "inet6") a.refuse("family", "inet or inet6");
    r.family = family == "inet6" ? AF_INET6 : AF_INET;
    r.dst = a.cidr("dst");
    r.dev = a.ifname("dev", true);
    r.via = a.address("via", true);
    r.src = a.address("src", true);
    r.table = static_cast<unsigned>(a.number("table", UINT32_MAX));
    r.metric = static_cast<unsigned>(a.number("metric", UINT32_MAX));
    r.scope = static_cast<int>(a.number("scope", 255));
    r.type = static_cast<int>(a.number("type", 255));
    out.identity = a.identity();
    if (!a.ok()) return a.error();
    return out;
  }
};

nlohmann::json route_facts(const sys::Route& r, bool changed) {
  return {{"changed", changed},
          {"route", sys::route_args(r)},
          {"dev", r.dev},
          {"table", sys::table_name(r.table)},
          {"metric", r.metric}};
}

// Whether `have` is the route asked for, to the last field the kernel keeps.
bool identical(const sys::Route& have, const sys::Route& want) {
  return have.dev == want.dev && have.via == want.via && have.src == want.src && have.type == want.type &&
         have.scope == want.scope && have.other.empty();
}

StepResult run_route(const Params& params, StepContext& ctx) {
  auto parsed = parse_route_spec(params.raw());
  if (!parsed.route)
    return StepResult::error((parsed.path.empty() ? std::string() : params.where(parsed.path) + ": ") + parsed.why);
  const sys::Route want = *parsed.route;
  auto& routes = ctx.sys().routes;

  RXERUN_TRY_ASSIGN(const auto present, routes.routes(want.family, want.table));
  for (const auto& have : present) {
    if (have.dst != want.dst || have.metric != want.metric) continue;
    if (identical(have, want)) return StepResult::ok(route_facts(want, false));
    return StepResult::error("table " + sys::table_name(want.table) + " has a route to " + want.dst + " with metric " +
                             std::to_string(want.metric) + " already, not this one: " + sys::route_args(have) +
                             " (not rxerun's, left as it is): delete it, or give this "
                             "route another metric or table");
  }

  const Footprint where = want.dev.empty() ? ctx.in_netns() : ctx.on_link(want.dev);
  RXERUN_TRY_ASSIGN(const auto identity,
                    want.dev.empty() ? netns_identity(ctx.sys()) : link_identity(ctx.sys(), want.dev));
  RXERUN_TRY(ctx.will_change(RouteRecord{want, identity}.to_args(), "delete route " + sys::route_args(want), where));
  if (auto r = routes.add_route(want); !r) {
    const Error& e = r.error();
    if (e.code == ENODEV) return StepResult::error("no interface " + want.dev + " (create it first)");
    if (e.code == EEXIST)
      return StepResult::error("table " + sys::table_name(want.table) + " has a route to " + want.dst +
                               " with metric " + std::to_string(want.metric) +
                               " already (the kernel says so: it appeared meanwhile, or differs in a way rxerun "
                               "does not list): " +
                               e.message);
    return StepResult::error(e);
  }
  return StepResult::ok(route_facts(want, true));
}

// Deletes exactly the route added; gone already (by hand, with its
// interface or its namespace) is success.
Result<nlohmann::json> undo_route(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<RouteRecord>(args, ctx));
  const sys::Route& r = record.route;
  const nlohmann::json& recorded = record.identity;
  RXERUN_TRY(check_netns(ctx.sys(), recorded, ctx.netns()));
  if (!r.dev.empty() && recorded.contains("ifindex")) {
    RXERUN_TRY_ASSIGN(const Found found, check_link(ctx.sys(), r.dev, recorded));
    if (found == Found::Gone) return nlohmann::json{{"removed", false}};  // the interface took the route along
  }
  auto removed = ctx.sys().routes.remove_route(r);
  if (!removed) {
    const int code = removed.error().code;
    if (code == ESRCH || code == ENOENT || code == ENODEV) return nlohmann::json{{"removed", false}};
    return removed.error();
  }
  return nlohmann::json{{"removed", true}};
}

}  // namespace

namespace {

// A route that leaves by a named interface, on that interface; one without
// `dev` is not drawn (where it leaves is the kernel's choice).
void picture_route(const nlohmann::json& p, const StepSpec& step, LabPicture& picture) {
  const std::string dev = picture_param(p, "dev");
  if (dev.empty()) return;
  std::string route = "route " + picture_param(p, "dst");
  if (const std::string via = picture_param(p, "via"); !via.empty()) route += " via " + via;
  if (const std::string table = picture_param(p, "table"); !table.empty() && table != "main")
    route += " table " + table;
  picture.add_interface(place_of(step), dev).routes.push_back(route);
}

}  // namespace

}  // namespace rxerun::steps
