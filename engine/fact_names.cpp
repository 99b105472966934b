#include "engine/fact_names.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "base/strings.h"
#include "base/utf8.h"
#include "engine/diag.h"

namespace rxerun {

namespace {

bool is_placeholder(std::string_view segment) {
  return !segment.empty() && std::isupper(static_cast<unsigned char>(segment.front())) &&
         std::all_of(segment.begin(), segment.end(), [](char c) {
           return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                  c == '_';
         });
}

std::vector<std::string> split_dots(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto dot = text.find('.', start);
    out.push_back(text.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

// A segment's literal head and trailing placeholder: "lat_avg_us_SIZE" ->
// ("lat_avg_us_", "SIZE"), "DEV" -> ("", "DEV"), "after" -> ("after", "").
std::pair<std::string, std::string> split_segment(const std::string& segment) {
  for (std::size_t i = 0; i < segment.size(); ++i)
    if ((i == 0 || segment[i - 1] == '_') && is_placeholder(std::string_view(segment).substr(i)))
      return {segment.substr(0, i), segment.substr(i)};
  return {segment, ""};
}

bool is_pattern(const std::string& name) {
  const auto segments = split_dots(name);
  return std::any_of(segments.begin(), segments.end(),
                     [](const std::string& s) { return !split_segment(s).second.empty(); });
}

// Whether a parameter counts as set: present, not null, not false, not empty.
bool param_set(const nlohmann::json& params, const std::string& name) {
  if (!params.is_object() || !params.contains(name)) return false;
  const auto& v = params[name];
  return !(v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_string() && v.get<std::string>().empty()) ||
           ((v.is_object() || v.is_array()) && v.empty()));
}

// What a pattern's word may stand for, from `spec.names` or the keys of a
// map parameter; empty with `any` set when it may be anything.
std::vector<std::string> allowed_words(const KindSpec& kind, const FactSpec& spec, const nlohmann::json& params,
                                       bool* any) {
  *any = false;
  if (!spec.names.empty()) return spec.names;
  std::vector<std::string> words;
  if (spec.names_from.empty()) {
    *any = true;
  } else if (spec.names_from == "*") {  // the keys `extra` took: every key that is no declared parameter
    if (params.is_object())
      for (const auto& item : params.items()) {
        const std::string& key = item.key();
        if (std::none_of(kind.params.begin(), kind.params.end(), [&](const ParamSpec& p) { return p.name == key; }))
          words.push_back(key);
      }
  } else if (params.is_object() && params.contains(spec.names_from)) {
    const auto& from = params[spec.names_from];
    if (from.is_object())
      for (const auto& [key, value] : from.items()) words.push_back(key);
    else if (from.is_array())  // a list: its items (verbs' sizes)
      for (const auto& item : from) words.push_back(item.is_string() ? item.get<std::string>() : item.dump());
  }
  return words;
}

// The counter part of DEV.COUNTER / NODE.DEV.COUNTER: nullopt with `why`
// when the name cannot be one.
std::optional<CounterFact> split_counter(const std::string& pattern, const std::string& fact,
                                         const std::vector<std::string>& nodes, std::string* why) {
  const auto dot = fact.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == fact.size()) return std::nullopt;
  CounterFact c{.dev = fact.substr(0, dot), .counter = fact.substr(dot + 1)};
  const bool node_first = std::find(nodes.begin(), nodes.end(), c.dev.substr(0, c.dev.find('.'))) != nodes.end() &&
                          c.dev.find('.') != std::string::npos;
  if (pattern == "DEV.COUNTER" && node_first) return std::nullopt;  // NODE.DEV.COUNTER's
  if (pattern == "NODE.DEV.COUNTER") {
    const auto first = c.dev.find('.');
    if (first == std::string::npos || nodes.empty()) return std::nullopt;
    c.node = c.dev.substr(0, first);
    if (std::find(nodes.begin(), nodes.end(), c.node) == nodes.end()) return std::nullopt;
    c.dev = c.dev.substr(first + 1);
  }
  std::vector<std::string> all = rxe_counter_names();
  for (const auto* more : {&port_counter_names(), &netdev_counter_names()})
    all.insert(all.end(), more->begin(), more->end());
  if (std::find(all.begin(), all.end(), c.counter) != all.end()) return c;
  *why = fmt::format("'{}' is no counter of an RDMA device or a netdev{}", excerpt(c.counter),
                     did_you_mean(c.counter, all));
  return std::nullopt;
}

// Whether `fact` has the shape of the pattern `name`, its upper-case words
// standing for `allowed` (for anything with `any`); `why` says what is
// wrong with a word that does not fit.
bool pattern_fits(const std::string& name, const std::string& fact, bool any, const std::vector<std::string>& allowed,
                  std::string* why) {
  const auto pattern = split_dots(name);
  const auto words = split_dots(fact);
  // Literal segments must appear as written; one placeholder may stand for
  // several segments only when the pattern is nothing but placeholders
  // (PATH.TO.VALUE) or ends in one (parameters.NAME).
  if (std::all_of(pattern.begin(), pattern.end(), [](const std::string& s) { return is_placeholder(s); })) {
    if (any || std::find(allowed.begin(), allowed.end(), fact) != allowed.end()) return true;
    if (why->empty() && !allowed.empty())
      *why = fmt::format("'{}' is no {} this step reports{}", excerpt(fact), name, did_you_mean(fact, allowed));
    return false;
  }
  if (words.size() < pattern.size()) return false;
  const std::size_t extra = words.size() - pattern.size();
  std::size_t w = 0;
  for (std::size_t p = 0; p < pattern.size(); ++p) {
    std::string word = words[w++];
    const auto [head, placeholder] = split_segment(pattern[p]);
    if (!placeholder.empty() && !head.empty()) {  // lat_avg_us_SIZE: the head as written, then the word
      if (word.rfind(head, 0) != 0 || word.size() == head.size()) return false;
      word = word.substr(head.size());
    }
    if (!placeholder.empty()) {
      // The placeholder takes the surplus segments: a name with dots (an
      // extract key "a.b" cannot be, but parameters.NAME may hold them).
      for (std::size_t k = 0; k < (p == pattern.size() - 1 || p == 0 ? extra : 0); ++k) word += "." + words[w++];
      if (!any && std::find(allowed.begin(), allowed.end(), word) == allowed.end()) {
        if (why->empty())
          *why = allowed.empty() ? fmt::format("'{}' names no {} this step has", excerpt(word), placeholder)
                                 : fmt::format("'{}' is no {} this step reports{}", excerpt(word), placeholder,
                                               did_you_mean(word, allowed));
        return false;
      }
    } else if (word != pattern[p]) {
      return false;
    }
  }
  return w == words.size();
}

// The same, for the words a step of `kind` with `params` has.
bool pattern_matches(const KindSpec& kind, const FactSpec& spec, const nlohmann::json& params, const std::string& fact,
                     std::string* why) {
  bool any = false;
  const auto allowed = allowed_words(kind, spec, params, &any);
  return pattern_fits(spec.name, fact, any, allowed, why);
}

std::string param_list(const std::string& name) {
  return fmt::format("`{}`", name);
}

}  // namespace

const std::vector<std::string>& rxe_counter_names() {
  static const std::vector<std::string> kNames{
      "sent_pkts",           "rcvd_pkts",    "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
      "send_rnr_err",        "rcvd_seq_err", "ack_deferred",      "retry_exceeded_err", "retry_rnr_exceeded_err",
      "completer_retry_err", "send_err",     "link_downed",       "rdma_sends",         "rdma_recvs"};
  return kNames;
}

const std::vector<std::string>& port_counter_names() {
  static const std::vector<std::string> kNames{"VL15_dropped",
                                               "excessive_buffer_overrun_errors",
                                               "link_downed",
                                               "link_error_recovery",
                                               "local_link_integrity_errors",
                                               "multicast_rcv_packets",
                                               "multicast_xmit_packets",
                                               "port_rcv_constraint_errors",
                                               "port_rcv_data",
                                               "port_rcv_errors",
                                               "port_rcv_packets",
                                               "port_rcv_remote_physical_errors",
                                               "port_rcv_switch_relay_errors",
                                               "port_xmit_constraint_errors",
                                               "port_xmit_data",
                                               "port_xmit_discards",
                                               "port_xmit_packets",
                                               "port_xmit_wait",
                                               "symbol_error",
                                               "unicast_rcv_packets",
                                               "unicast_xmit_packets"};
  return kNames;
}

const std::vector<std::string>& netdev_counter_names() {
  static const std::vector<std::string> kNames{"rx_packets", "tx_packets", "rx_bytes",   "tx_bytes",
                                               "rx_errors",  "tx_errors",  "rx_dropped", "tx_dropped"};
  return kNames;
}

unsigned step_moment(const KindSpec& kind, const nlohmann::json& params) {
  return !kind.background.empty() && param_set(params, kind.background) ? kAtStart : kAtStep;
}

unsigned revert_moment(const KindSpec& kind, const nlohmann::json& params) {
  return step_moment(kind, params) == kAtStart ? kAtEnd : kAtRevert;
}

std::string moment_words(unsigned moment) {
  switch (moment & ~kAtEnd ? moment & ~kAtEnd : moment) {  // a start that may end: named by its start
    case kAtStart: return "when it starts in the background";
    case kAtEnd: return "when its background run ends";
    case kAtRevert: return "at its revert";
    default: return "when it runs";
  }
}

std::optional<ListItem> list_item(const std::string& fact) {
  const auto dot = fact.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == fact.size() || fact.size() - dot > 7) return std::nullopt;
  const std::string digits = fact.substr(dot + 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return ListItem{fact.substr(0, dot), std::stoul(digits)};
}

Result<nlohmann::json> reported_fact(const nlohmann::json& facts, const std::string& fact) {
  if (auto it = facts.find(fact); it != facts.end()) return *it;
  if (auto item = list_item(fact); item && facts.contains(item->list)) {
    const auto& list = facts.at(item->list);
    if (!list.is_array()) return make_error(fmt::format("'{}' is no list", excerpt(item->list)));
    if (item->index >= list.size())
      return make_error(
          fmt::format("'{}' has {} item{}", excerpt(item->list), list.size(), list.size() == 1 ? "" : "s"));
    return list[item->index];
  }
  std::vector<std::string> keys;
  for (const auto& [k, v] : facts.items()) keys.push_back(k);
  return make_error(fmt::format("reported: {}", keys.empty() ? "none" : join(keys, ", ")));
}

bool fact_declared(const KindSpec& kind, const std::string& fact) {
  if (kind.dynamic_facts) return true;
  // Each upper-case word of a pattern stands for one word at least.
  const auto dots = [](const std::string& s) { return std::count(s.begin(), s.end(), '.'); };
  std::string ignored;
  const auto declared = [&](const std::string& name) {
    return std::any_of(kind.facts.begin(), kind.facts.end(), [&](const FactSpec& spec) {
      return spec.name == name || (is_pattern(spec.name) && name.size() <= 256 && dots(name) >= dots(spec.name) &&
                                   pattern_fits(spec.name, name, true, {}, &ignored));
    });
  };
  if (declared(fact)) return true;
  const auto item = list_item(fact);  // one item of a list fact, one level deep
  return item && declared(item->list);
}

namespace {

// match_fact for the fact as written, without the item of a list fact.
std::optional<FactMatch> match_as_written(const KindSpec& kind, const nlohmann::json& params, unsigned moment,
                                          const std::string& fact, const std::vector<std::string>& nodes,
                                          std::string* why) {
  if (kind.dynamic_facts) return FactMatch{};
  std::string shape_problem;           // a pattern fits but a word of it does not
  const FactSpec* elsewhen = nullptr;  // matches, but at another moment
  const FactSpec* needs = nullptr;     // matches, but needs a parameter
  for (const auto& spec : kind.facts) {
    std::optional<CounterFact> counter;
    bool fits = spec.name == fact;
    if (!fits && (spec.name == "DEV.COUNTER" || spec.name == "NODE.DEV.COUNTER")) {
      counter = split_counter(spec.name, fact, nodes, &shape_problem);
      fits = counter.has_value();
    } else if (!fits && is_pattern(spec.name)) {
      fits = pattern_matches(kind, spec, params, fact, &shape_problem);
    }
    if (!fits) continue;
    if (!(spec.when & moment)) {
      elsewhen = elsewhen ? elsewhen : &spec;
      continue;
    }
    if (!spec.only_with.empty() && !param_set(params, spec.only_with)) {
      needs = needs ? needs : &spec;
      continue;
    }
    return FactMatch{&spec, std::move(counter)};
  }
  // What names the fact as written says most; a pattern's complaint about
  // a word beats a pattern that takes anything but needs a parameter
  // (PATH.TO.VALUE) or is reported at another moment.
  const bool needs_named = needs && needs->name == fact;
  const bool elsewhen_named = elsewhen && elsewhen->name == fact;
  if (needs_named || (needs && shape_problem.empty() && !elsewhen_named)) {
    *why = fmt::format("'{}' is reported only with {} set", excerpt(fact), param_list(needs->only_with));
  } else if (elsewhen_named || (elsewhen && shape_problem.empty())) {
    std::vector<std::string> moments;
    for (unsigned m : {kAtStep, kAtStart, kAtEnd, kAtRevert})
      if (elsewhen->when & m) moments.push_back(moment_words(m));
    *why = fmt::format("'{}' is reported {}, not {}", excerpt(fact), fmt::join(moments, " and "), moment_words(moment));
  } else if (!shape_problem.empty()) {
    *why = shape_problem;
  } else {
    std::vector<std::string> names;
    for (const auto& spec : kind.facts)
      if ((spec.when & moment) && (spec.only_with.empty() || param_set(params, spec.only_with)))
        names.push_back(spec.name);
    *why = names.empty() ? fmt::format("unknown fact '{}': it reports no facts {}", excerpt(fact), moment_words(moment))
                         : fmt::format("unknown fact '{}'{}; {} it reports {}", excerpt(fact),
                                       did_you_mean(fact, names), moment_words(moment), fmt::join(names, ", "));
  }
  return std::nullopt;
}

}  // namespace

std::optional<FactMatch> match_fact(const KindSpec& kind, const nlohmann::json& params, unsigned moment,
                                    const std::string& fact, const std::vector<std::string>& nodes, std::string* why) {
  if (auto match = match_as_written(kind, params, moment, fact, nodes, why)) return match;
  if (auto item = list_item(fact)) {  // one item of a list fact, one level deep
    std::string ignored;
    return match_as_written(kind, params, moment, item->list, nodes, &ignored);
  }
  return std::nullopt;
}

}  // namespace rxerun
