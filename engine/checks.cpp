#include "engine/checks.h"

#include <arpa/inet.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <charconv>
#include <climits>

#include "base/size.h"
#include "engine/vars.h"

namespace rxerun {

namespace {

bool is_space_or_control(unsigned char c) {
  return c <= 0x20 || c == 0x7f;
}

bool set_why(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return false;
}

}  // namespace

bool valid_ifname(std::string_view name, std::string* why) {
  // The kernel's dev_valid_name(): IFNAMSIZ - 1 bytes, no '/', ':' or whitespace.
  if (name.empty()) return set_why(why, "an interface name cannot be empty");
  if (name.size() > 15) return set_why(why, fmt::format("longer than 15 bytes ({})", name.size()));
  if (name == "." || name == "..") return set_why(why, "'.' and '..' are not interface names");
  for (char c : name) {
    if (c == '/') return set_why(why, "contains '/'");
    if (c == ':') return set_why(why, "contains ':'");
    if (is_space_or_control(static_cast<unsigned char>(c)))
      return set_why(why, "contains whitespace or a control character");
  }
  return true;
}

bool valid_netns_name(std::string_view name, std::string* why) {
  // A file name under /run/netns.
  if (name.empty()) return set_why(why, "a namespace name cannot be empty");
  if (name.size() > 255) return set_why(why, fmt::format("longer than 255 bytes ({})", name.size()));
  if (name == "." || name == "..") return set_why(why, "'.' and '..' are not namespace names");
  for (char c : name) {
    if (c == '/') return set_why(why, "contains '/'");
    if (is_space_or_control(static_cast<unsigned char>(c)))
      return set_why(why, "contains whitespace or a control character");
  }
  return true;
}

namespace {

bool parses_as(int family, std::string_view text) {
  // inet_pton reads a C string: an embedded NUL would hide trailing junk.
  if (text.empty() || text.size() > 64 || text.find('\0') != std::string_view::npos) return false;
  unsigned char buf[16];
  return inet_pton(family, std::string(text).c_str(), buf) == 1;
}

}  // namespace

bool valid_address(std::string_view text) {
  return parses_as(AF_INET, text) || parses_as(AF_INET6, text);
}

bool valid_cidr(std::string_view text, std::string* why) {
  const std::size_t slash = text.rfind('/');
  if (slash == std::string_view::npos) return set_why(why, "missing '/PREFIX'");
  const std::string_view addr = text.substr(0, slash);
  const std::string_view prefix = text.substr(slash + 1);
  int max_prefix = 0;
  if (parses_as(AF_INET, addr))
    max_prefix = 32;
  else if (parses_as(AF_INET6, addr))
    max_prefix = 128;
  else
    return set_why(why, fmt::format("'{}' is not an IPv4 or IPv6 address", excerpt(addr)));
  const bool digits_only = !prefix.empty() && prefix.size() <= 3 &&
                           std::all_of(prefix.begin(), prefix.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits_only) return set_why(why, fmt::format("prefix '{}' is not a decimal number", excerpt(prefix)));
  int value = 0;
  std::from_chars(prefix.data(), prefix.data() + prefix.size(), value);
  if (value > max_prefix) return set_why(why, fmt::format("prefix {} is out of range 0..{}", value, max_prefix));
  return true;
}

namespace {

// How a wrong value is named in "must be X, got Y".
std::string got(const nlohmann::json& v) {
  if (v.is_string()) return "'" + excerpt(v.get_ref<const std::string&>()) + "'";
  if (v.is_array()) return "a list";
  if (v.is_object()) return "a mapping";
  if (v.is_null()) return "nothing";
  return excerpt(v.dump());
}

std::vector<std::string> names_of(const std::vector<ParamSpec>& specs) {
  std::vector<std::string> names;
  for (const auto& p : specs) names.push_back(p.name);
  return names;
}

bool is_scalar(const nlohmann::json& v) {
  return v.is_string() || v.is_number() || v.is_boolean();
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// Checks the parameters of one step; one instance per call of check_params.
class ParamChecker {
 public:
  ParamChecker(const KindSpec& kind, const StepSpec& step, const std::string& file,
               const std::vector<std::string>& earlier)
      : kind_(kind), step_(step), file_(file), earlier_(earlier) {}

  Diagnostics take() { return std::move(diags_); }

  void check_scalar_kind(nlohmann::json& value) {
    const ParamSpec& spec = *kind_.scalar;
    if (value.is_null()) {
      if (spec.required) error("", fmt::format("missing required parameter '{}' for '{}'", spec.name, kind_.name));
      if (!spec.default_value.is_null()) value = spec.default_value;
      return;
    }
    check_value(spec, value, spec.name);
  }

  // `prefix` is "" for the step's own parameters, "server." inside an Object.
  void check_fields(const std::vector<ParamSpec>& specs, const ParamSpec* extra, nlohmann::json& object,
                    const std::string& prefix, const std::string& owner_path) {
    for (const ParamSpec& spec : specs) {
      const std::string path = prefix + spec.name;
      auto it = object.find(spec.name);
      const bool present = it != object.end() && !it->is_null();
      if (present) {
        check_value(spec, *it, path);
        continue;
      }
      if (it != object.end()) object.erase(it);  // null: absent
      if (spec.required) {
        // A `dev:` written without a value is pointed at; a missing one at its owner.
        const std::string where = step_.marks.contains(path) ? path : owner_path;
        error(where, fmt::format("missing required parameter '{}' for '{}'", path, kind_.name));
      } else if (!spec.default_value.is_null()) {
        object[spec.name] = spec.default_value;
      }
    }
    for (auto it = object.begin(); it != object.end(); ++it) {
      const bool known =
          std::any_of(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == it.key(); });
      if (known) continue;
      const std::string path = prefix + it.key();
      if (extra) {
        ParamSpec spec = *extra;
        spec.name = it.key();
        if (!it->is_null()) check_value(spec, *it, path);
        continue;
      }
      error(path, fmt::format("unknown parameter '{}' for '{}'{}", excerpt(path), kind_.name,
                              did_you_mean(it.key(), names_of(specs))));
    }
  }

  void check_params(nlohmann::json& params) {
    if (kind_.scalar) {
      check_scalar_kind(params);
      return;
    }
    if (params.is_null()) params = nlohmann::json::object();
    if (!params.is_object()) {
      error("", fmt::format("'{}' takes a mapping of parameters, got {}", kind_.name, got(params)));
      return;
    }
    const std::size_t before = diags_.size();
    check_fields(kind_.params, kind_.extra ? &*kind_.extra : nullptr, params, "", "");
    if (kind_.validate && diags_.size() == before)
      kind_.validate(params, [&](const std::string& path, std::string message) { error(path, std::move(message)); });
  }

 private:
  void error(const std::string& path, std::string message) {
    diags_.push_back({file_, step_.mark_of(path), std::move(message)});
  }

  void must_be(const std::string& path, std::string_view what, const nlohmann::json& v) {
    error(path, fmt::format("'{}' must be {}, got {}", path, what, got(v)));
  }

  // Strings for the text-like types; a number or bool written where a name is
  // expected reads as its text (`port: 1` for an Enum of "1", "2").
  bool want_string(nlohmann::json& v, const std::string& path, std::string_view what) {
    if (v.is_number() || v.is_boolean()) v = v.dump();
    if (v.is_string()) return true;
    must_be(path, what, v);
    return false;
  }

  void check_value(const ParamSpec& spec, nlohmann::json& v, const std::string& path) {
    // Facts of earlier steps are known only at run time, when this runs again.
    if (v.is_string() && !step_references(v.get_ref<const std::string&>()).empty()) return;
    switch (spec.type) {
      case ParamType::String: want_string(v, path, "a string"); return;
      case ParamType::Int: check_int(spec, v, path); return;
      case ParamType::Bool: check_bool(v, path, false); return;
      case ParamType::OnOff: check_bool(v, path, true); return;
      case ParamType::Duration: check_duration(v, path); return;
      case ParamType::Size: check_size(spec, v, path); return;
      case ParamType::IfName: check_name(v, path, valid_ifname, "an interface name"); return;
      case ParamType::NetnsName: check_name(v, path, valid_netns_name, "a namespace name"); return;
      case ParamType::Address: check_address(v, path); return;
      case ParamType::Cidr: check_cidr(v, path); return;
      case ParamType::AddressList: check_address_list(v, path); return;
      case ParamType::Enum: check_enum(spec, v, path); return;
      case ParamType::Scalar:
        if (!is_scalar(v)) must_be(path, "a string, number or bool", v);
        return;
      case ParamType::StepRef: check_step_ref(v, path); return;
      case ParamType::Object: check_object(spec, v, path); return;
      case ParamType::List: check_list(spec, v, path); return;
      case ParamType::Map: check_map(spec, v, path); return;
    }
  }

  void check_int(const ParamSpec& spec, nlohmann::json& v, const std::string& path) {
    if (v.is_string()) {
      // "{{count}}" expanded, or a quoted number: digits only, as the kernel's tools want.
      const std::string& s = v.get_ref<const std::string&>();
      const std::size_t start = !s.empty() && s[0] == '-' ? 1 : 0;
      const bool digits = s.size() > start && std::all_of(s.begin() + static_cast<long>(start), s.end(),
                                                          [](char c) { return c >= '0' && c <= '9'; });
      long long n = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
      if (!digits || ec != std::errc() || end != s.data() + s.size()) {
        must_be(path, ec == std::errc::result_out_of_range ? "an integer in range" : "an integer", v);
        return;
      }
      v = n;
    }
    if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(LLONG_MAX)) {
      must_be(path, "an integer in range", v);
      return;
    }
    if (!v.is_number_integer()) {
      must_be(path, "an integer", v);
      return;
    }
    const long long n = v.get<long long>();
    if (spec.min && n < *spec.min) error(path, fmt::format("'{}' must be >= {}, got {}", path, *spec.min, n));
    if (spec.max && n > *spec.max) error(path, fmt::format("'{}' must be <= {}, got {}", path, *spec.max, n));
  }

  void check_bool(nlohmann::json& v, const std::string& path, bool on_off) {
    if (v.is_boolean()) return;
    if (v.is_string()) {
      const std::string s = lower(v.get<std::string>());
      if (s == "true" || (on_off && s == "on")) {
        v = true;
        return;
      }
      if (s == "false" || (on_off && s == "off")) {
        v = false;
        return;
      }
    }
    must_be(path, on_off ? "on or off" : "true or false", v);
  }

  void check_duration(nlohmann::json& v, const std::string& path) {
    bool too_long = false;
    if (v.is_string() && parse_duration(v.get_ref<const std::string&>(), &too_long)) return;
    if (too_long)
      error(path, fmt::format("'{}' is {}, longer than 876000h (a hundred years), the longest duration rxerun takes",
                              path, got(v)));
    else
      must_be(path, "a duration with a unit (500ms, 5s, 1m, 1h)", v);
  }

  // Normalised to an integer of bytes.
  void check_size(const ParamSpec& spec, nlohmann::json& v, const std::string& path) {
    std::optional<std::uint64_t> bytes;
    SizeProblem problem = SizeProblem::NotASize;
    if (v.is_number_unsigned() || (v.is_number_integer() && v.get<long long>() >= 0)) {
      bytes = v.get<std::uint64_t>();
      if (*bytes > kMaxSize) {
        bytes.reset();
        problem = SizeProblem::TooLarge;
      }
    } else if (v.is_string()) {
      bytes = parse_size(v.get_ref<const std::string&>(), &problem);
    }
    if (!bytes) {
      switch (problem) {
        case SizeProblem::TooLarge:
          error(path, fmt::format("'{}' is {}, larger than {} (the largest size rxerun takes)", path, got(v),
                                  format_size(kMaxSize)));
          return;
        case SizeProblem::DecimalUnit:
          error(path, fmt::format("'{}' must be a size in bytes or with a binary unit (B, KiB, MiB, GiB, TiB), got "
                                  "{}: decimal units are ambiguous, write MiB or GiB",
                                  path, got(v)));
          return;
        default: must_be(path, "a size in bytes or with a binary unit (4096, 64KiB, 64MiB, 1GiB)", v); return;
      }
    }
    v = *bytes;
    const auto n = static_cast<long long>(*bytes);
    if (spec.min && n < *spec.min)
      error(path, fmt::format("'{}' must be at least {}, got {}", path, format_size(*spec.min), format_size(*bytes)));
    if (spec.max && n > *spec.max)
      error(path, fmt::format("'{}' must be at most {}, got {}", path, format_size(*spec.max), format_size(*bytes)));
  }

  void check_name(nlohmann::json& v, const std::string& path, bool (*valid)(std::string_view, std::string*),
                  std::string_view what) {
    if (!want_string(v, path, what)) return;
    std::string why;
    if (!valid(v.get_ref<const std::string&>(), &why))
      error(path, fmt::format("'{}' is not a valid {}: {} ({})", path, what.substr(what.find(' ') + 1), why, got(v)));
  }

  void check_address(nlohmann::json& v, const std::string& path) {
    if (!want_string(v, path, "an IPv4 or IPv6 address")) return;
    if (!valid_address(v.get_ref<const std::string&>())) must_be(path, "an IPv4 or IPv6 address", v);
  }

  void check_cidr(nlohmann::json& v, const std::string& path) {
    if (!want_string(v, path, "an address/prefix")) return;
    std::string why;
    if (!valid_cidr(v.get_ref<const std::string&>(), &why))
      error(path, fmt::format("'{}' must be an address/prefix such as 10.0.0.1/24, got {}: {}", path, got(v), why));
  }

  void check_address_list(nlohmann::json& v, const std::string& path) {
    if (!v.is_array()) {
      must_be(path, "a list of addresses", v);
      return;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto& item = v[i];
      if (item.is_string() && !step_references(item.get_ref<const std::string&>()).empty()) continue;
      const std::string item_path = fmt::format("{}.{}", path, i);
      if (!item.is_string() || !valid_address(item.get_ref<const std::string&>()))
        error(item_path, fmt::format("'{}' must hold IPv4 or IPv6 addresses, got {}", path, got(item)));
    }
  }

  void check_list(const ParamSpec& spec, nlohmann::json& v, const std::string& path) {
    if (!v.is_array()) {
      must_be(path, "a list", v);
      return;
    }
    if (spec.fields.empty()) return;
    for (std::size_t i = 0; i < v.size(); ++i) check_value(spec.fields.front(), v[i], fmt::format("{}.{}", path, i));
  }

  void check_map(const ParamSpec& spec, nlohmann::json& v, const std::string& path) {
    if (!v.is_object()) {
      must_be(path, "a mapping", v);
      return;
    }
    if (spec.fields.empty()) return;
    for (auto& [key, item] : v.items()) check_value(spec.fields.front(), item, path + "." + key);
  }

  void check_enum(const ParamSpec& spec, nlohmann::json& v, const std::string& path) {
    if (!want_string(v, path, "a string")) return;
    const std::string& s = v.get_ref<const std::string&>();
    if (std::find(spec.choices.begin(), spec.choices.end(), s) != spec.choices.end()) return;
    error(path, fmt::format("'{}' must be one of {}, got {}{}", path, fmt::join(spec.choices, ", "), got(v),
                            did_you_mean(s, spec.choices)));
  }

  void check_step_ref(nlohmann::json& v, const std::string& path) {
    if (!want_string(v, path, "the name of an earlier step")) return;
    const std::string& s = v.get_ref<const std::string&>();
    if (std::find(earlier_.begin(), earlier_.end(), s) != earlier_.end()) return;
    error(path, fmt::format("no earlier step is named '{}'{}", excerpt(s), did_you_mean(s, earlier_)));
  }

  void check_object(const ParamSpec& spec, nlohmann::json& v, const std::string& path) {
    if (!v.is_object()) {
      must_be(path, "a mapping", v);
      return;
    }
    check_fields(spec.fields, nullptr, v, path + ".", path);
  }

  const KindSpec& kind_;
  const StepSpec& step_;
  const std::string& file_;
  const std::vector<std::string>& earlier_;
  Diagnostics diags_;
};

}  // namespace

Diagnostics check_params(const KindSpec& kind, nlohmann::json& params, const StepSpec& step, const std::string& file,
                         const std::vector<std::string>& earlier_steps) {
  ParamChecker checker(kind, step, file, earlier_steps);
  checker.check_params(params);
  return checker.take();
}

}  // namespace rxerun
