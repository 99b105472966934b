#include "engine/schema.h"

#include "engine/nodes.h"

namespace rxerun {

namespace {

using nlohmann::json;

// Any string may hold a {{variable}}; typed parameters accept one too.
json or_template(json schema) {
  return json{{"anyOf", json::array({std::move(schema), {{"$ref", "#/definitions/template"}}})}};
}

// YAML writes `mtu: 1024` as a number: a choice that reads as an integer is
// accepted as that integer too, as the loader does.
json enum_schema(const std::vector<std::string>& choices) {
  json values = json::array();
  for (const auto& c : choices) {
    values.push_back(c);
    if (!c.empty() && c.find_first_not_of("0123456789") == std::string::npos && c.size() < 10)
      values.push_back(std::stoi(c));
  }
  return or_template({{"enum", values}});
}

// The loader reads a YAML scalar of any type as text where it wants text
// (`dev: 1`, `argv: [sleep, 1]`, `vm: {kernel: 7.3}`): a number or a bool
// written there is its text, and `schema` checks the strings.
json or_scalar_text(json schema) {
  return json{{"anyOf", json::array({std::move(schema), {{"type", json::array({"number", "boolean"})}}})}};
}

// A quoted number where an integer goes ("1024") is that integer to the
// loader too; its bounds are then the loader's to check.
json integer_schema(const ParamSpec& p) {
  json i = {{"type", "integer"}};
  if (p.min) i["minimum"] = *p.min;
  if (p.max) i["maximum"] = *p.max;
  return json{
      {"anyOf",
       json::array({i, {{"type", "string"}, {"pattern", "^-?[0-9]+$"}}, {{"$ref", "#/definitions/template"}}})}};
}

json param_schema(const ParamSpec& p) {
  json s;
  switch (p.type) {
    case ParamType::String: s = {{"type", json::array({"string", "number", "boolean"})}}; break;
    case ParamType::Int: s = integer_schema(p); break;
    case ParamType::Bool: s = {{"$ref", "#/definitions/bool"}}; break;
    case ParamType::OnOff: s = {{"$ref", "#/definitions/on_off"}}; break;
    case ParamType::Duration: s = {{"$ref", "#/definitions/duration"}}; break;
    case ParamType::Size: {
      json bytes = {{"type", "integer"}, {"minimum", p.min.value_or(0)}};
      if (p.max) bytes["maximum"] = *p.max;
      s = {{"anyOf", json::array({bytes, {{"$ref", "#/definitions/size"}}, {{"$ref", "#/definitions/template"}}})}};
      break;
    }
    case ParamType::IfName: s = or_scalar_text({{"$ref", "#/definitions/ifname"}}); break;
    case ParamType::NetnsName: s = or_scalar_text({{"$ref", "#/definitions/netns"}}); break;
    case ParamType::Address: s = {{"type", "string"}, {"minLength", 2}}; break;
    case ParamType::Cidr: s = {{"type", "string"}, {"pattern", "/|\\{\\{"}}; break;
    case ParamType::AddressList: s = {{"type", "array"}, {"items", {{"type", "string"}}}}; break;
    case ParamType::Enum: s = enum_schema(p.choices); break;
    case ParamType::Scalar: s = {{"type", json::array({"string", "number", "boolean"})}}; break;
    case ParamType::StepRef: s = {{"type", json::array({"string", "number", "boolean"})}}; break;
    case ParamType::List:
    case ParamType::Map: {
      // Each item (list) or value (map) as fields[0] says.
      const bool list = p.type == ParamType::List;
      s = {{"type", list ? "array" : "object"}};
      if (!p.fields.empty()) {
        json item = param_schema(p.fields.front());
        item.erase("description");
        s[list ? "items" : "additionalProperties"] = item;
      }
      break;
    }
    case ParamType::Object: {
      json props = json::object();
      json required = json::array();
      for (const auto& f : p.fields) {
        props[f.name] = param_schema(f);
        if (f.required) required.push_back(f.name);
      }
      s = {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
      if (!required.empty()) s["required"] = required;
      break;
    }
  }
  if (!p.help.empty()) s["description"] = p.help;
  if (!p.default_value.is_null()) s["default"] = p.default_value;
  return s;
}

json kind_value_schema(const KindSpec& k) {
  if (k.scalar) return param_schema(*k.scalar);
  json props = json::object();
  json required = json::array();
  for (const auto& p : k.params) {
    props[p.name] = param_schema(p);
    if (p.required) required.push_back(p.name);
  }
  json s = {{"type", required.empty() ? json::array({"object", "null"}) : json("object")}, {"properties", props}};
  s["additionalProperties"] = k.extra ? param_schema(*k.extra) : json(false);
  if (!required.empty()) s["required"] = required;
  s["description"] = k.summary;
  return s;
}

json step_schema(const KindSpec& k) {
  json props = {
      {k.name, kind_value_schema(k)},
      {"name", {{"$ref", "#/definitions/step_name"}, {"description", "label; how later steps refer to it"}}},
      {"netns", or_scalar_text({{"$ref", "#/definitions/netns"}})},
      {"node", {{"$ref", "#/definitions/node"}, {"description", "the node (lab VM of `nodes:`) it runs on"}}},
      {"expect", {{"$ref", "#/definitions/expect"}}},
      {"timeout", {{"$ref", "#/definitions/duration"}}},
      {"retries",
       {{"anyOf", json::array({{{"type", "integer"}, {"minimum", 0}, {"maximum", 100}},
                               {{"type", "string"}, {"pattern", "^([0-9]{1,2}|0[0-9]{2}|100)$"}}})}}},
      {"delay", {{"$ref", "#/definitions/duration"}}},
      {"tags",
       {{"anyOf", json::array({{{"$ref", "#/definitions/tag"}},
                               {{"type", "array"}, {"items", {{"$ref", "#/definitions/tag"}}}}})}}},
  };
  return {{"title", k.name},     {"description", k.summary},          {"type", "object"},
          {"properties", props}, {"required", json::array({k.name})}, {"additionalProperties", false}};
}

// The schema's shared definitions: templates, durations, sizes, names, MACs,
// outcomes and matchers.
json schema_definitions() {
  return {
      {"template", {{"type", "string"}, {"pattern", "\\{\\{[^}]+\\}\\}"}}},
      {"bool",
       {{"anyOf", json::array({{{"type", "boolean"}},
                               {{"type", "string"}, {"pattern", "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$"}},
                               {{"$ref", "#/definitions/template"}}})}}},
      {"step_name", or_scalar_text({{"type", "string"}, {"pattern", "^[A-Za-z0-9_.-]+$"}})},
      {"tag", {{"anyOf", json::array({{{"type", "string"}, {"minLength", 1}}, {{"type", {"number", "boolean"}}}})}}},
      {"duration", {{"type", "string"}, {"pattern", "^([0-9]+(\\.[0-9]+)?(ms|s|m|h)|.*\\{\\{.*\\}\\}.*)$"}}},
      {"size", {{"type", "string"}, {"pattern", "^[0-9]+(B|KiB|MiB|GiB|TiB)?$"}}},
      {"ifname", {{"type", "string"}, {"pattern", "^([^/\\s]{1,15}|.*\\{\\{.*\\}\\}.*)$"}}},
      {"netns", {{"type", "string"}, {"pattern", "^[^/\\s]+$"}}},
      {"node", {{"type", "string"}, {"pattern", "^([A-Za-z][A-Za-z0-9_-]{0,14}|.*\\{\\{.*\\}\\}.*)$"}}},
      {"mac",
       {{"type", "string"},
        {"pattern", "^([0-9A-Fa-f][02468ACEace](:[0-9A-Fa-f]{2}){5}|.*\\{\\{.*\\}\\}.*)$"},
        {"description", "a unicast MAC address: 52:54:00:12:34:56"}}},
      {"on_off",
       {{"anyOf", json::array({{{"type", "boolean"}},
                               {{"type", "string"},
                                {"pattern", "^([Oo][Nn]|[Oo][Ff][Ff]|[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$"}},
                               {{"$ref", "#/definitions/template"}}})}}},
      {"outcome", {{"enum", {"ok", "fail", "timeout"}}}},
      {"matcher",
       {{"type", json::array({"string", "number", "boolean", "array"})},
        {"items", {{"type", json::array({"string", "number", "boolean"})}}}}},
      {"expect",
       {{"anyOf", json::array({{{"$ref", "#/definitions/outcome"}},
                               {{"type", "object"},
                                {"properties", {{"outcome", {{"$ref", "#/definitions/outcome"}}}}},
                                {"additionalProperties", {{"$ref", "#/definitions/matcher"}}}}})}}},
  };
}

json vm_schema() {
  return {{"type", "object"},
          {"properties",
           {{"kernel",
             {{"anyOf", json::array({{{"type", "string"}, {"minLength", 1}}, {{"type", "number"}}})},
              {"description", "the lab kernel the scenario needs (6.1, 7.3)"}}},
            {"kernels",
             {{"type", "array"},
              {"minItems", 1},
              {"uniqueItems", true},
              {"items", {{"anyOf", json::array({{{"type", "string"}, {"minLength", 1}}, {{"type", "number"}}})}}},
              {"description", "run the scenario once on each of these lab kernels (a matrix: NAME@KERNEL)"}}},
            {"timeout",
             {{"type", "string"},
              {"description", "time for the whole run in the lab VM (default: the steps' timeouts plus 5m)"}}}}},
          {"not", {{"required", {"kernel", "kernels"}}}},
          {"additionalProperties", false}};
}

// Names (not `steps`, which {{steps.NAME.FACT}} reads) to scalars; a
// string value cannot hold '{{' (values are not expanded).
json vars_schema() {
  return {{"type", json::array({"object", "null"})},
          {"propertyNames", {{"pattern", "^(?!steps(\\.|$))[A-Za-z0-9_.-]+$"}}},
          {"additionalProperties",
           {{"anyOf", json::array({{{"type", "string"}, {"not", {{"pattern", "\\{\\{"}}}},
                                   {{"type", json::array({"number", "boolean"})}}})}}}};
}

json nodes_schema() {
  return {{"type", "object"},
          {"minProperties", 1},
          {"maxProperties", kMaxLabNodes},
          {"propertyNames", {{"pattern", "^[A-Za-z][A-Za-z0-9_-]{0,14}$"}}},
          {"additionalProperties",
           {{"type", json::array({"object", "null"})},
            {"properties",
             {{"kernel",
               {{"anyOf", json::array({{{"type", "string"}, {"minLength", 1}}, {{"type", "number"}}})},
                {"description", "the lab kernel the node boots (default: vm.kernel's, else the newest prepared)"}}}}},
            {"additionalProperties", false}}},
          {"description",
           "the lab VMs of a two-node lab (at most 4, each about 1.4 GB of memory): a mapping from a node's name to "
           "{kernel: \"6.1\"}; every step that touches a kernel names its node"}};
}

json wires_schema() {
  return {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"minProperties", 2},
            {"maxProperties", 2},
            {"propertyNames", {{"pattern", "^[A-Za-z][A-Za-z0-9_-]{0,14}$"}}},
            {"additionalProperties",
             {{"anyOf",
               json::array({{{"$ref", "#/definitions/ifname"}},
                            {{"type", "object"},
                             {"properties",
                              {{"nic", {{"$ref", "#/definitions/ifname"}}}, {"mac", {{"$ref", "#/definitions/mac"}}}}},
                             {"required", json::array({"nic"})},
                             {"additionalProperties", false}}})}}}}},
          {"description",
           "wires between the nodes' NICs: {a: eth1, b: eth1}, or {a: {nic: eth1, mac: \"52:54:00:12:34:56\"}, b: "
           "eth1}; a MAC not given is 52:54:00:0a:WW:NN (WW: the wire's position, NN: 01 or 02, its end)"}};
}

}  // namespace

json scenario_schema(const Registry& registry) {
  json steps = json::array();
  for (const auto& k : registry.kinds()) steps.push_back(step_schema(k.spec));
  return {
      {"$schema", "http://json-schema.org/draft-07/schema#"},
      {"title", "rxerun scenario"},
      {"description", "A Soft-RoCE lab: steps that build it, check it and inject faults; rxerun cleans up."},
      {"type", "object"},
      {"required", json::array({"steps"})},
      {"additionalProperties", false},
      // The author's own keys: a place for YAML anchors (&common) to merge (<<: *common).
      {"patternProperties", {{"^x-", json::object()}}},
      {"properties",
       {{"name", or_scalar_text({{"type", "string"}, {"pattern", "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"}})},
        {"description", {{"type", json::array({"string", "number", "boolean", "null"})}}},
        {"include",
         {{"anyOf", json::array({{{"type", "string"}, {"minLength", 1}},
                                 {{"type", "array"}, {"items", {{"type", "string"}, {"minLength", 1}}}}})},
          {"description",
           "files whose vars (defaults) and steps (first) this scenario builds on, each path relative to this "
           "file: [topology/veth-pair.yaml]"}}},
        {"vars", vars_schema()},
        {"vm", vm_schema()},
        {"kernel_health",
         {{"enum", json::array({"fail", "warn", "off"})},
          {"description",
           "what the kernel's own reports during the run (WARNING, BUG, Oops, panic, ...) do: fail the run "
           "(default), show them only (warn), or go unread (off)"}}},
        {"plugins",
         {{"type", "array"},
          {"items", {{"anyOf", json::array({{{"type", "string"}, {"minLength", 1}}, {{"type", "number"}}})}}},
          {"description",
           "plugins whose step kinds the scenario uses: shared objects built against rxerun's SDK, each path "
           "relative to the scenario file"}}},
        {"nodes", nodes_schema()},
        {"wires", wires_schema()},
        {"steps", {{"type", "array"}, {"minItems", 1}, {"items", {{"oneOf", steps}}}}}}},
      // wires join nodes; a node names its own kernel (no vm.kernels matrix).
      {"dependencies", {{"wires", json::array({"nodes"})}}},
      {"not",
       {{"required", json::array({"nodes", "vm"})},
        {"properties", {{"vm", {{"required", json::array({"kernels"})}}}}}}},
      {"definitions", schema_definitions()},
  };
}

}  // namespace rxerun
