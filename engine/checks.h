#pragma once
// Checks of parameter values against their declared types, shared by the
// loader (at load time) and the runner (after {{steps.X.Y}} is expanded at
// run time). Values are normalised in place: numeric strings become
// integers for Int, on/off become bools for OnOff.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/diag.h"
#include "engine/kind.h"
#include "engine/model.h"

namespace rxerun {

bool valid_ifname(std::string_view name, std::string* why = nullptr);
bool valid_netns_name(std::string_view name, std::string* why = nullptr);
bool valid_address(std::string_view text);  // IPv4 or IPv6
bool valid_cidr(std::string_view text, std::string* why = nullptr);

// Checks one step's parameters (the kind key's value, `step.params`) against
// its kind; diagnostics point at step.marks. A value still holding a
// {{steps...}} reference is accepted as is (checked again at run time).
// `earlier_steps` are the names a StepRef may name.
Diagnostics check_params(const KindSpec& kind, nlohmann::json& params, const StepSpec& step, const std::string& file,
                         const std::vector<std::string>& earlier_steps);

// A whole number written in decimal ("42", "+7", "-3", "18446744073709551615")
// as a JSON integer, exact up to 64 bits (signed, or unsigned above
// INT64_MAX); nullopt for anything else, and for one that does not fit.
std::optional<nlohmann::json> exact_integer(std::string_view text);

// Parses a matcher as written in `expect:` (a plain value, "> 0", "~ re", ...).
// nullopt with `error` set when it cannot be parsed (bad regex, no operand).
std::optional<Matcher> parse_matcher(const nlohmann::json& written, std::string* error);
// Why a list matcher is refused for one of its items: `got` says what the
// item is ("a list", "a mapping", ...).
std::string list_matcher_item_error(std::string_view got);

}  // namespace rxerun
