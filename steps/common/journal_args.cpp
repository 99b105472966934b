#include "steps/common/journal_args.h"

#include <algorithm>

#include "engine/checks.h"
#include "engine/diag.h"

namespace rxerun::steps {

namespace {

// The value as the journal holds it, cut short; never throws on bytes that
// are not UTF-8.
std::string shown_arg(const nlohmann::json& v) {
  return excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

bool is_count(const nlohmann::json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<long long>() >= 0);
}

}  // namespace

JournalArgs::JournalArgs(const nlohmann::json& args, const UndoContext& ctx, std::string within)
    : JournalArgs(args, ctx.step(), ctx.scenario(), std::move(within)) {}

JournalArgs::JournalArgs(const nlohmann::json& args, std::string step, std::string scenario, std::string within)
    : args_(args), step_(std::move(step)), scenario_(std::move(scenario)), within_(std::move(within)) {
  if (!args_.is_object()) bad("", args_, "an object of arguments");
}

JournalArgs JournalArgs::part(const nlohmann::json& value, std::string within) const {
  return JournalArgs(value, step_, scenario_, std::move(within));
}

void JournalArgs::merge(const JournalArgs& part) {
  if (!problem_) problem_ = part.problem_;
}

std::string JournalArgs::key_name(std::string_view key) const {
  if (within_.empty()) return std::string(key);
  return key.empty() ? within_ : within_ + "." + std::string(key);
}

bool JournalArgs::has(std::string_view key) const {
  return args_.is_object() && args_.contains(key);
}

const nlohmann::json* JournalArgs::get(std::string_view key) {
  if (!args_.is_object()) return nullptr;
  auto it = args_.find(key);
  if (it == args_.end()) {
    if (!problem_)
      problem_ = "journal entry" + (step_.empty() ? std::string() : " for step " + step_) + " has no " + key_name(key) +
                 ": not acting on it";
    return nullptr;
  }
  return &*it;
}

void JournalArgs::bad(std::string_view key, const nlohmann::json& value, std::string_view what) {
  if (problem_) return;
  std::string where = "journal entry" + (step_.empty() ? std::string() : " for step " + step_);
  const std::string name = key_name(key);
  problem_ = where + " holds " + (name.empty() ? std::string() : name + ": ") + shown_arg(value) + ", not " +
             std::string(what) + ": not acting on it";
}

void JournalArgs::refuse(std::string_view key, std::string_view what) {
  static const nlohmann::json kNull;
  const nlohmann::json* v = has(key) ? &args_.at(std::string(key)) : &kNull;
  bad(key, *v, what);
}

std::string JournalArgs::text(std::string_view key) {
  const auto* v = get(key);
  if (!v) return {};
  if (!v->is_string()) {
    bad(key, *v, "a string");
    return {};
  }
  return v->get<std::string>();
}

std::string JournalArgs::ifname(std::string_view key, bool optional) {
  const auto* v = get(key);
  if (!v) return {};
  std::string why;
  if (!v->is_string()) {
    bad(key, *v, "an interface name");
  } else if (optional && v->get<std::string>().empty()) {
    return {};
  } else if (!valid_ifname(v->get_ref<const std::string&>(), &why)) {
    bad(key, *v, "an interface name (" + why + ")");
  } else {
    return v->get<std::string>();
  }
  return {};
}

std::string JournalArgs::netns_name(std::string_view key, bool optional) {
  const auto* v = get(key);
  if (!v) return {};
  std::string why;
  if (!v->is_string()) {
    bad(key, *v, "a network namespace name");
  } else if (optional && v->get<std::string>().empty()) {
    return {};
  } else if (!valid_netns_name(v->get_ref<const std::string&>(), &why)) {
    bad(key, *v, "a network namespace name (" + why + ")");
  } else {
    return v->get<std::string>();
  }
  return {};
}

std::string JournalArgs::cidr(std::string_view key) {
  const auto* v = get(key);
  if (!v) return {};
  std::string why;
  if (!v->is_string()) {
    bad(key, *v, "an address/prefix");
  } else if (!valid_cidr(v->get_ref<const std::string&>(), &why)) {
    bad(key, *v, "an address/prefix (" + why + ")");
  } else {
    return v->get<std::string>();
  }
  return {};
}

std::string JournalArgs::address(std::string_view key, bool optional) {
  const auto* v = get(key);
  if (!v) return {};
  if (v->is_string() && optional && v->get<std::string>().empty()) return {};
  if (!v->is_string() || !valid_address(v->get_ref<const std::string&>())) {
    bad(key, *v, "an IPv4 or IPv6 address");
    return {};
  }
  return v->get<std::string>();
}

bool JournalArgs::flag(std::string_view key) {
  const auto* v = get(key);
  if (!v) return false;
  if (!v->is_boolean()) {
    bad(key, *v, "true or false");
    return false;
  }
  return v->get<bool>();
}

std::uint64_t JournalArgs::number(std::string_view key, std::uint64_t max) {
  const auto* v = get(key);
  if (!v) return 0;
  if (!is_count(*v) || v->get<std::uint64_t>() > max) {
    bad(key, *v, "a number from 0 to " + std::to_string(max));
    return 0;
  }
  return v->get<std::uint64_t>();
}

std::vector<std::string> JournalArgs::texts(std::string_view key) {
  const auto* v = get(key);
  if (!v) return {};
  std::vector<std::string> out;
  if (!v->is_array()) {
    bad(key, *v, "a list of strings");
    return out;
  }
  for (const auto& item : *v) {
    if (!item.is_string()) {
      bad(key, *v, "a list of strings");
      return {};
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

nlohmann::json JournalArgs::object(std::string_view key, bool optional) {
  if (optional && !has(key)) return nlohmann::json::object();
  const auto* v = get(key);
  if (!v) return nlohmann::json::object();
  if (!v->is_object()) {
    bad(key, *v, "an object");
    return nlohmann::json::object();
  }
  return *v;
}

nlohmann::json JournalArgs::identity() {
  if (!has("identity") || args_.at("identity").is_null()) return nullptr;
  const auto& id = args_.at("identity");
  auto counts = [](const nlohmann::json& o) {
    return o.is_object() && std::all_of(o.begin(), o.end(), [](const nlohmann::json& v) { return is_count(v); });
  };
  bool fine = id.is_object();
  if (fine)
    for (const auto& [k, v] : id.items()) fine = fine && (is_count(v) || counts(v));
  if (!fine) {
    bad("identity", id, "an object of indexes and inodes");
    return nullptr;
  }
  return id;
}

Error JournalArgs::error() const {
  return make_error(problem_.value_or("journal entry: not acting on it"));
}

}  // namespace rxerun::steps
