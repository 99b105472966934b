#include <doctest/doctest.h>

#include "engine/checks.h"
#include "support/test_kinds.h"

using namespace rxerun;
using nlohmann::json;

TEST_CASE("checks: valid_ifname") {
  std::string why;
  CHECK(valid_ifname("eth0"));
  CHECK(valid_ifname("vB"));
  CHECK(valid_ifname("a234567890abcde"));  // 15 bytes
  CHECK_FALSE(valid_ifname("a234567890abcdef", &why));
  CHECK(why == "longer than 15 bytes (16)");
  CHECK_FALSE(valid_ifname("", &why));
  CHECK(why == "an interface name cannot be empty");
  CHECK_FALSE(valid_ifname("a/b", &why));
  CHECK(why == "contains '/'");
  CHECK_FALSE(valid_ifname("a b", &why));
  CHECK(why == "contains whitespace or a control character");
  CHECK_FALSE(valid_ifname("a\tb"));
  CHECK_FALSE(valid_ifname("a\x01"));
  CHECK_FALSE(valid_ifname(".", &why));
  CHECK(why == "'.' and '..' are not interface names");
  CHECK_FALSE(valid_ifname(".."));
  CHECK_FALSE(valid_ifname("eth0:1"));
  CHECK(valid_ifname("eth0.100"));
  CHECK(valid_ifname("...", nullptr));
}

TEST_CASE("checks: valid_netns_name") {
  std::string why;
  CHECK(valid_netns_name("lab"));
  CHECK(valid_netns_name(std::string(255, 'n')));
  CHECK_FALSE(valid_netns_name(std::string(256, 'n'), &why));
  CHECK(why == "longer than 255 bytes (256)");
  CHECK_FALSE(valid_netns_name("", &why));
  CHECK_FALSE(valid_netns_name("a/b", &why));
  CHECK(why == "contains '/'");
  CHECK_FALSE(valid_netns_name("."));
  CHECK_FALSE(valid_netns_name(".."));
  CHECK_FALSE(valid_netns_name("a b"));
  CHECK(valid_netns_name("lab:1"));
}

TEST_CASE("checks: valid_address") {
  CHECK(valid_address("10.0.0.1"));
  CHECK(valid_address("::1"));
  CHECK(valid_address("fe80::1"));
  CHECK(valid_address("2001:db8::ff00:42:8329"));
  CHECK_FALSE(valid_address(""));
  CHECK_FALSE(valid_address("10.0.0"));
  CHECK_FALSE(valid_address("10.0.0.256"));
  CHECK_FALSE(valid_address("10.0.0.1/24"));
  CHECK_FALSE(valid_address("host"));
  CHECK_FALSE(valid_address(std::string_view("10.0.0.1\0junk", 13)));
}

TEST_CASE("checks: valid_cidr") {
  std::string why;
  CHECK(valid_cidr("10.0.0.1/24"));
  CHECK(valid_cidr("10.0.0.0/0"));
  CHECK(valid_cidr("10.0.0.1/32"));
  CHECK(valid_cidr("fd00::1/64"));
  CHECK(valid_cidr("fd00::1/128"));
  CHECK_FALSE(valid_cidr("10.0.0.1", &why));
  CHECK(why == "missing '/PREFIX'");
  CHECK_FALSE(valid_cidr("10.0.0.1/33", &why));
  CHECK(why == "prefix 33 is out of range 0..32");
  CHECK_FALSE(valid_cidr("fd00::1/129", &why));
  CHECK(why == "prefix 129 is out of range 0..128");
  CHECK_FALSE(valid_cidr("10.0.0.1/+8", &why));
  CHECK(why == "prefix '+8' is not a decimal number");
  CHECK_FALSE(valid_cidr("10.0.0.1/", &why));
  CHECK_FALSE(valid_cidr("10.0.0.1/0x8"));
  CHECK_FALSE(valid_cidr("10.0.0.1/ 8"));
  CHECK_FALSE(valid_cidr("10.0.0.1/0008"));
  CHECK_FALSE(valid_cidr("10.0.0.300/8", &why));
  CHECK(why == "'10.0.0.300' is not an IPv4 or IPv6 address");
}

namespace {

// A kind with one parameter of every type; marks point at line N for parameter N.
KindSpec every_type_kind() {
  KindSpec k;
  k.name = "every";
  k.params = rxerun::testing::one_param_of_each_plain_type();
  const std::vector<ParamSpec> rest = {
      {.name = "e", .type = ParamType::Enum, .choices = {"udp", "tcp"}},
      {.name = "sc", .type = ParamType::Scalar},
      {.name = "ref", .type = ParamType::StepRef},
      {.name = "obj",
       .type = ParamType::Object,
       .fields = {{.name = "dev", .type = ParamType::IfName, .required = true},
                  {.name = "port", .type = ParamType::Int, .default_value = 1}}},
      {.name = "req", .type = ParamType::String, .required = true},
      {.name = "def", .type = ParamType::Int, .default_value = 7},
  };
  k.params.insert(k.params.end(), rest.begin(), rest.end());
  return k;
}

StepSpec step_with_marks() {
  StepSpec s;
  s.mark = {1, 1};
  s.marks[""] = {1, 3};
  int line = 2;
  // No marks for "req" and "obj.dev": a missing parameter has no value to point at.
  for (const char* p : {"s", "i",  "b",   "o",   "d",   "dev", "ns",      "addr",     "cidr",   "list",
                        "e", "sc", "ref", "obj", "nul", "def", "obj.dev", "obj.port", "list.1", "bogus"})
    s.marks[p] = {line++, 5};
  return s;
}

Diagnostics check(json& params, const StepSpec& step = step_with_marks()) {
  static const KindSpec kind = every_type_kind();
  return check_params(kind, params, step, "f.yaml", {"first"});
}

std::string one_error(json params) {
  auto d = check(params);
  REQUIRE(d.size() == 1);
  return d.front().to_string();
}

}  // namespace

TEST_CASE("checks: valid values are normalised and defaults filled in") {
  json p = {{"s", "x"},         {"i", "5"},
            {"b", "true"},      {"o", "off"},
            {"d", "1.5s"},      {"dev", "vB"},
            {"ns", "lab"},      {"addr", "10.0.0.1"},
            {"cidr", "::1/64"}, {"list", {"10.0.0.1", "::1"}},
            {"e", "udp"},       {"sc", 0},
            {"ref", "first"},   {"obj", {{"dev", "rxe0"}}},
            {"req", "r"}};
  auto d = check(p);
  CHECK(d.empty());
  CHECK(p["i"] == json(5));
  CHECK(p["b"] == json(true));
  CHECK(p["o"] == json(false));
  CHECK(p["d"] == json("1.5s"));
  CHECK(p["sc"] == json(0));
  CHECK(p["def"] == json(7));
  CHECK(p["obj"]["port"] == json(1));
}

TEST_CASE("checks: OnOff and Bool spellings") {
  for (auto [in, out] : std::vector<std::pair<json, bool>>{
           {"on", true}, {"off", false}, {"true", true}, {"false", false}, {true, true}, {"ON", true}}) {
    json p = {{"req", "r"}, {"o", in}};
    CHECK(check(p).empty());
    CHECK(p["o"] == json(out));
  }
  json p = {{"req", "r"}, {"b", "on"}};
  CHECK(check(p).size() == 1);
}

TEST_CASE("checks: wrong types name the expected type") {
  CHECK(one_error({{"req", "r"}, {"i", "abc"}}) == "f.yaml:3:5: 'i' must be an integer, got 'abc'");
  CHECK(one_error({{"req", "r"}, {"i", 1.5}}) == "f.yaml:3:5: 'i' must be an integer, got 1.5");
  CHECK(one_error({{"req", "r"}, {"i", "0x10"}}) == "f.yaml:3:5: 'i' must be an integer, got '0x10'");
  CHECK(one_error({{"req", "r"}, {"i", "99999999999999999999"}}) ==
        "f.yaml:3:5: 'i' must be an integer in range, got '99999999999999999999'");
  CHECK(one_error({{"req", "r"}, {"i", 0}}) == "f.yaml:3:5: 'i' must be >= 1, got 0");
  CHECK(one_error({{"req", "r"}, {"i", "11"}}) == "f.yaml:3:5: 'i' must be <= 10, got 11");
  CHECK(one_error({{"req", "r"}, {"b", "yes"}}) == "f.yaml:4:5: 'b' must be true or false, got 'yes'");
  CHECK(one_error({{"req", "r"}, {"o", "maybe"}}) == "f.yaml:5:5: 'o' must be on or off, got 'maybe'");
  CHECK(one_error({{"req", "r"}, {"d", "5"}}) ==
        "f.yaml:6:5: 'd' must be a duration with a unit (500ms, 5s, 1m, 1h), got '5'");
  CHECK(one_error({{"req", "r"}, {"dev", "a234567890abcdef"}}) ==
        "f.yaml:7:5: 'dev' is not a valid interface name: longer than 15 bytes (16) ('a234567890abcdef')");
  CHECK(one_error({{"req", "r"}, {"ns", "a/b"}}) ==
        "f.yaml:8:5: 'ns' is not a valid namespace name: contains '/' ('a/b')");
  CHECK(one_error({{"req", "r"}, {"addr", "10.0.0.256"}}) ==
        "f.yaml:9:5: 'addr' must be an IPv4 or IPv6 address, got '10.0.0.256'");
  CHECK(one_error({{"req", "r"}, {"cidr", "10.0.0.1/33"}}) ==
        "f.yaml:10:5: 'cidr' must be an address/prefix such as 10.0.0.1/24, got '10.0.0.1/33': prefix 33 is out of "
        "range 0..32");
  CHECK(one_error({{"req", "r"}, {"list", "10.0.0.1"}}) ==
        "f.yaml:11:5: 'list' must be a list of addresses, got '10.0.0.1'");
  CHECK(one_error({{"req", "r"}, {"list", {"10.0.0.1", "x"}}}) ==
        "f.yaml:20:5: 'list' must hold IPv4 or IPv6 addresses, got 'x'");
  CHECK(one_error({{"req", "r"}, {"e", "ucp"}}) ==
        "f.yaml:12:5: 'e' must be one of udp, tcp, got 'ucp' (did you mean 'udp'?)");
  CHECK(one_error({{"req", "r"}, {"sc", json::array()}}) ==
        "f.yaml:13:5: 'sc' must be a string, number or bool, got a list");
  CHECK(one_error({{"req", "r"}, {"ref", "frist"}}) ==
        "f.yaml:14:5: no earlier step is named 'frist' (did you mean 'first'?)");
  CHECK(one_error({{"req", "r"}, {"obj", "x"}}) == "f.yaml:15:5: 'obj' must be a mapping, got 'x'");
  CHECK(one_error({{"req", "r"}, {"s", {{"a", 1}}}}) == "f.yaml:2:5: 's' must be a string, got a mapping");
}

TEST_CASE("checks: numbers and bools read as text for text types") {
  json p = {{"req", 5}, {"s", true}, {"e", "tcp"}};
  CHECK(check(p).empty());
  CHECK(p["req"] == json("5"));
  CHECK(p["s"] == json("true"));
}

TEST_CASE("checks: missing, unknown and nested parameters") {
  CHECK(one_error(json::object()) == "f.yaml:1:3: missing required parameter 'req' for 'every'");
  StepSpec with_null = step_with_marks();
  with_null.marks["req"] = {30, 8};  // `req:` written without a value
  json null_req = {{"req", nullptr}};
  auto d = check(null_req, with_null);
  REQUIRE(d.size() == 1);
  CHECK(d[0].to_string() == "f.yaml:30:8: missing required parameter 'req' for 'every'");
  CHECK(one_error({{"req", "r"}, {"bogus", 1}}) == "f.yaml:21:5: unknown parameter 'bogus' for 'every'");
  CHECK(one_error({{"req", "r"}, {"dfe", 1}}) ==
        "f.yaml:1:3: unknown parameter 'dfe' for 'every' (did you mean "
        "'def'?)");
  CHECK(one_error({{"req", "r"}, {"obj", json::object()}}) ==
        "f.yaml:18:5: missing required parameter 'obj.dev' for 'every'");
  StepSpec no_obj_dev = step_with_marks();
  no_obj_dev.marks.erase("obj.dev");
  json obj_missing = {{"req", "r"}, {"obj", json::object()}};
  CHECK(check(obj_missing, no_obj_dev).front().to_string() ==
        "f.yaml:15:5: missing required parameter 'obj.dev' for 'every'");
  CHECK(one_error({{"req", "r"}, {"obj", {{"dev", "x"}, {"port", "p"}}}}) ==
        "f.yaml:19:5: 'obj.port' must be an integer, got 'p'");
  CHECK(one_error({{"req", "r"}, {"obj", {{"dev", "x"}, {"prot", 1}}}}) ==
        "f.yaml:15:5: unknown parameter 'obj.prot' for 'every' (did you mean 'port'?)");
  CHECK(one_error(json::array()) == "f.yaml:1:3: 'every' takes a mapping of parameters, got a list");
  json p = {{"req", "r"}, {"s", nullptr}};
  CHECK(check(p).empty());
  CHECK_FALSE(p.contains("s"));  // null is absent
}

TEST_CASE("checks: all problems are reported") {
  json p = {{"i", "x"}, {"b", "x"}, {"bogus", 1}};
  CHECK(check(p).size() == 4);
}

TEST_CASE("checks: {{steps...}} values are accepted until run time") {
  json p = {{"req", "r"},
            {"i", "{{steps.g.index}}"},
            {"addr", "{{ steps.g.addr }}"},
            {"list", {"{{steps.g.a}}", "10.0.0.1"}}};
  CHECK(check(p).empty());
  CHECK(p["i"] == json("{{steps.g.index}}"));
}

TEST_CASE("checks: scalar kinds and extra parameters") {
  KindSpec revert;
  revert.name = "revert";
  revert.scalar = ParamSpec{.name = "step", .type = ParamType::StepRef, .required = true};
  StepSpec step;
  step.marks[""] = {4, 3};
  step.marks["step"] = {4, 11};
  json v = "first";
  CHECK(check_params(revert, v, step, "f", {"first"}).empty());
  json bad = "frist";
  auto d = check_params(revert, bad, step, "f", {"first"});
  REQUIRE(d.size() == 1);
  CHECK(d[0].to_string() == "f:4:11: no earlier step is named 'frist' (did you mean 'first'?)");
  json none;
  d = check_params(revert, none, step, "f", {"first"});
  REQUIRE(d.size() == 1);
  CHECK(d[0].to_string() == "f:4:3: missing required parameter 'step' for 'revert'");

  KindSpec offload;
  offload.name = "offload";
  offload.params = {{.name = "dev", .type = ParamType::IfName, .required = true}};
  offload.extra = ParamSpec{.name = "feature", .type = ParamType::OnOff};
  json p = {{"dev", "vB"}, {"gro", "off"}, {"tso", "on"}};
  CHECK(check_params(offload, p, step, "f", {}).empty());
  CHECK(p["gro"] == json(false));
  CHECK(p["tso"] == json(true));
  json q = {{"dev", "vB"}, {"gro", "of"}};
  d = check_params(offload, q, step, "f", {});
  REQUIRE(d.size() == 1);
  CHECK(d[0].message == "'gro' must be on or off, got 'of'");
}
