#pragma once
// An undo's arguments as read back from the journal, which may come from
// another rxerun version or a hand edit: every value is checked with the
// loader's own validators (engine/checks.h) before the undo acts on it. The
// accessors return a neutral value when a check fails and remember the
// first problem, so that an undo reads all it needs and then asks once:
//
//   JournalArgs a(args, ctx);
//   const std::string dev = a.ifname("dev");
//   const std::string cidr = a.cidr("cidr");
//   if (!a.ok()) return a.error();
//
// The error reads "journal entry for step S holds dev: \"a b\", not an
// interface name (contains whitespace...): not acting on it".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "engine/step.h"

namespace rxerun::steps {

class JournalArgs {
 public:
  // `within`: where `args` sits in the entry's arguments ("rule"), for messages.
  JournalArgs(const nlohmann::json& args, const UndoContext& ctx, std::string within = {});

  bool has(std::string_view key) const;
  // A string, any text.
  std::string text(std::string_view key);
  // An interface name (valid_ifname); `optional`: "" is allowed too.
  std::string ifname(std::string_view key, bool optional = false);
  // A namespace name (valid_netns_name); `optional`: "" is allowed too.
  std::string netns_name(std::string_view key, bool optional = false);
  std::string cidr(std::string_view key);  // address/prefix (valid_cidr)
  // An address (valid_address); `optional`: "" is allowed too.
  std::string address(std::string_view key, bool optional = false);
  bool flag(std::string_view key);
  std::uint64_t number(std::string_view key, std::uint64_t max = UINT64_MAX);
  std::vector<std::string> texts(std::string_view key);  // an array of strings
  // An object (of anything); `optional`: a missing key reads as {}.
  nlohmann::json object(std::string_view key, bool optional = false);
  // What the journal recorded to identify the object (steps/common/identity.h):
  // null when nothing was (an older journal, a crash before identify()),
  // else an object whose values are non-negative integers (or such
  // objects, one level down: a rule's interfaces).
  nlohmann::json identity();

  // The object `value` (read with object()) that sits under `within`,
  // checked the same way; merge() brings its first problem back here.
  // `value` must outlive it.
  JournalArgs part(const nlohmann::json& value, std::string within) const;
  // Takes `part`'s problem when this one has none yet: what was read here
  // before it keeps precedence.
  void merge(const JournalArgs& part);

  // The scenario the entry belongs to: checks of names made from it (the
  // run's nftables table).
  const std::string& scenario() const { return scenario_; }

  // Records a problem found by the undo itself: `what` says what the value
  // should have been ("a hook: input, output or forward").
  void refuse(std::string_view key, std::string_view what);

  bool ok() const { return !problem_; }
  Error error() const;

 private:
  JournalArgs(const nlohmann::json& args, std::string step, std::string scenario, std::string within);
  const nlohmann::json* get(std::string_view key);  // null (and a problem) when missing
  void bad(std::string_view key, const nlohmann::json& value, std::string_view what);

  std::string key_name(std::string_view key) const;

  const nlohmann::json& args_;
  std::string step_;
  std::string scenario_;
  std::string within_;
  std::optional<std::string> problem_;
};

}  // namespace rxerun::steps
