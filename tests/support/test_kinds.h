#pragma once
// Step kinds and parameters the engine is tested with, by the loader's and
// the checks' tests (tests/engine/) and by the loader's fuzz target
// (tests/fuzz/loader_fuzz.cpp, which compiles only the engine files the
// loader needs).

#include <vector>

#include "engine/registry.h"

namespace rxerun::testing {

// One parameter of each type that takes a plain value, in this order: the
// start of the `every` kinds.
inline std::vector<ParamSpec> one_param_of_each_plain_type() {
  std::vector<ParamSpec> params = {
      {.name = "s", .type = ParamType::String},     {.name = "i", .type = ParamType::Int, .min = 1, .max = 10},
      {.name = "b", .type = ParamType::Bool},       {.name = "o", .type = ParamType::OnOff},
      {.name = "d", .type = ParamType::Duration},   {.name = "dev", .type = ParamType::IfName},
      {.name = "ns", .type = ParamType::NetnsName}, {.name = "addr", .type = ParamType::Address},
      {.name = "cidr", .type = ParamType::Cidr},    {.name = "list", .type = ParamType::AddressList},
  };
  return params;
}

// Kinds shaped like the shipped ones (sleep, revert, netns, offload, block)
// plus one with a parameter of every ParamType, a scalar StepRef kind, an
// `extra` parameter and dynamic facts: every checking path of the loader is
// reachable with them.
inline std::vector<Kind> loader_test_kinds() {
  std::vector<Kind> kinds;
  auto add = [&](KindSpec spec) { kinds.push_back(Kind{std::move(spec), {}, {}}); };
  add({.name = "sleep",
       .params = {{.name = "duration", .type = ParamType::Duration, .required = true}},
       .facts = {{"slept_ms", ""}}});
  add({.name = "revert",
       .scalar = ParamSpec{.name = "step", .type = ParamType::StepRef, .required = true},
       .facts_of_target = true});
  add({.name = "netns", .params = {{.name = "name", .type = ParamType::NetnsName, .required = true}}});
  add({.name = "offload",
       .params = {{.name = "dev", .type = ParamType::IfName, .required = true}},
       .extra = ParamSpec{.name = "feature", .type = ParamType::OnOff}});
  add({.name = "counters",
       .params = {{.name = "devs", .type = ParamType::String}},
       .facts = {{"DEV.COUNTER", ""}},
       .dynamic_facts = true});
  add({.name = "rping",
       .params = {{.name = "server", .type = ParamType::Address, .required = true},
                  {.name = "count", .type = ParamType::Int, .default_value = 1, .min = 1, .max = 1000}},
       .facts = {{"sent", ""}, {"DEV.COUNTER", ""}}});
  add({.name = "block",
       .params = {{.name = "proto", .type = ParamType::Enum, .required = true, .choices = {"udp", "tcp", "icmp"}}},
       .facts = {{"packets", ""}, {"bytes", ""}}});
  std::vector<ParamSpec> every = one_param_of_each_plain_type();
  const std::vector<ParamSpec> rest = {
      {.name = "e", .type = ParamType::Enum, .choices = {"write_bw", "read_bw"}},
      {.name = "sc", .type = ParamType::Scalar},
      {.name = "ref", .type = ParamType::StepRef},
      {.name = "server",
       .type = ParamType::Object,
       .fields = {{.name = "dev", .type = ParamType::IfName, .required = true},
                  {.name = "netns", .type = ParamType::NetnsName},
                  {.name = "port", .type = ParamType::Int, .default_value = 1}}},
      {.name = "def", .type = ParamType::String, .default_value = "dflt"},
  };
  every.insert(every.end(), rest.begin(), rest.end());
  add({.name = "every", .params = std::move(every), .facts = {{"index", ""}, {"state", ""}}});
  return kinds;
}

}  // namespace rxerun::testing
