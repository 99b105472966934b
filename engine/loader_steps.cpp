#include "engine/loader_steps.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "base/duration.h"
#include "base/utf8.h"
#include "engine/checks.h"
#include "engine/loader_params.h"

namespace rxerun::loading {

namespace {

const std::vector<std::string> kCommonKeys{"name", "netns", "node", "expect", "timeout", "retries", "delay", "tags"};

bool is_common_key(const std::string& k) {
  return std::find(kCommonKeys.begin(), kCommonKeys.end(), k) != kCommonKeys.end();
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool StepReader::check_list(const StepList& list) {
  if (list.steps.IsNull() || (list.steps.IsSequence() && list.steps.size() == 0)) {
    sink_.error(list.steps.IsNull() ? list.key : list.steps, "'steps' is empty: a scenario needs at least one step");
    return false;
  }
  if (!list.steps.IsSequence()) {
    sink_.error(list.steps, fmt::format("'steps' must be a list of steps, got {}", type_name(list.steps)));
    return false;
  }
  return true;
}

void StepReader::read(const std::vector<StepList>& lists) {
  std::vector<StepHead> heads;
  std::vector<const StepList*> readable;
  int index = 0;
  for (const auto& list : lists) {
    ReadingFile reading(sink_, list.file, list.note);
    if (!check_list(list)) continue;
    readable.push_back(&list);
    for (const auto& node : list.steps) heads.push_back(read_head(node, index++));
  }
  steps_.set_heads(std::move(heads));
  struct Named {
    std::string file;
    Mark mark;
  };
  std::map<std::string, Named> first_named;
  index = 0;
  for (const StepList* list : readable) {
    ReadingFile reading(sink_, list->file, list->note);
    for (const auto& node : list->steps) {
      const StepHead& head = steps_.head(index);
      const Mark name_mark = head.named ? head.name_mark : mark_of(node);
      if (auto [it, fresh] = first_named.emplace(head.name, Named{list->file, name_mark}); !fresh) {
        const std::string in = it->second.file == list->file ? "" : it->second.file + ":";
        sink_.error(name_mark, fmt::format("duplicate step name '{}' (first at {}{}:{})", excerpt(head.name), in,
                                           it->second.mark.line, it->second.mark.col));
      }
      read_step(node, index++);
    }
  }
}

std::vector<std::pair<std::string, YAML::Node>> StepReader::kind_keys(const YAML::Node& node) {
  std::vector<std::pair<std::string, YAML::Node>> kinds, ambiguous;
  bool unknown = false;
  for_each_pair(node, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node&) {
    if (!registry_.find(key)) {
      unknown |= !is_common_key(key);
      return;
    }
    (is_common_key(key) ? ambiguous : kinds).emplace_back(key, key_node);
  });
  // Beside a key that may be the kind of a plugin that could not be loaded,
  // `netns` is the common key.
  if (kinds.empty() && ambiguous.size() == 1 && !(unknown && lenient_kinds_)) return ambiguous;
  return kinds;
}

StepHead StepReader::read_head(const YAML::Node& node, int index) {
  StepHead head;
  if (!node.IsMap()) {
    head.name = fmt::format("step-{}", index + 1);
    return head;
  }
  const auto kinds = kind_keys(node);
  if (kinds.size() == 1) {
    head.kind = kinds.front().first;
    head.kind_key = kinds.front().second;
  }
  for_each_pair(node, [&](const std::string& key, const YAML::Node&, const YAML::Node& value) {
    if (key == "name" && value.IsScalar() && valid_step_name(value.Scalar())) {
      head.named = true;
      head.name = value.Scalar();
      head.name_mark = mark_of(value);
    }
  });
  if (!head.named) head.name = fmt::format("{}-{}", head.kind.empty() ? "step" : head.kind, index + 1);
  return head;
}

void StepReader::read_step(const YAML::Node& node, int index) {
  const StepHead& head = steps_.head(index);
  StepSpec step;
  step.index = index;
  step.file = sink_.file();
  step.name = head.name;
  step.named = head.named;
  step.mark = mark_of(node);
  step.kind = head.kind;
  if (!node.IsMap()) {
    std::string hint;
    if (node.IsScalar() && registry_.find(node.Scalar()))
      hint = fmt::format(" ('{}' needs its parameters: '{}: ...')", node.Scalar(), node.Scalar());
    sink_.error(node, fmt::format("a step must be a mapping with one kind key, got {}{}", type_name(node), hint));
    steps_.add(std::move(step));
    return;
  }
  check_step_keys(node, step.mark);
  YAML::Node params_node, expect_node, expect_key;
  bool has_expect = false, has_node = false;
  for_each_pair(node, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
    if (!head.kind.empty() && key == head.kind) {
      params_node = value;
    } else if (key == "expect") {
      expect_node = value;
      expect_key = key_node;
      has_expect = true;
    } else if (is_common_key(key)) {
      has_node |= key == "node";
      read_common(step, key, key_node, value);
    }
  });
  if (!head.kind.empty()) {
    step.marks[""] = mark_of(head.kind_key);
    if (const Kind* kind = registry_.find(step.kind))
      ParamReader(step, vars_, steps_, sink_).read(kind->spec, params_node, head.kind_key);
  }
  nodes_.check_step_nodes(step, has_node, steps_);
  if (has_expect) expect_.read(step, expect_node, expect_key);
  steps_.add(std::move(step));
}

void StepReader::check_step_keys(const YAML::Node& node, Mark step_mark) {
  std::vector<std::string> all_keys = kCommonKeys;
  all_keys.insert(all_keys.end(), registry_.names().begin(), registry_.names().end());
  const auto kinds = kind_keys(node);
  if (kinds.empty() && lenient_kinds_) return;  // a kind of the plugin that could not be loaded, perhaps
  for (std::size_t i = 1; i < kinds.size(); ++i)
    sink_.error(kinds[i].second, fmt::format("step has two kinds, '{}' and '{}': a step does exactly one thing",
                                             kinds.front().first, kinds[i].first));
  std::vector<std::pair<std::string, YAML::Node>> unknown;
  for_each_pair(node, [&](const std::string& key, const YAML::Node& key_node, const YAML::Node&) {
    if (!is_common_key(key) && !registry_.find(key)) unknown.emplace_back(key, key_node);
  });
  std::size_t close_to_kind = unknown.size();
  if (kinds.empty()) {
    for (std::size_t i = 0; i < unknown.size() && close_to_kind == unknown.size(); ++i)
      if (suggest(unknown[i].first, registry_.names())) close_to_kind = i;
    const std::string kinds = fmt::format("{}", fmt::join(registry_.names(), ", "));
    if (close_to_kind < unknown.size())
      sink_.error(unknown[close_to_kind].second,
                  fmt::format("step has no kind: '{}' is not one of {}{}", excerpt(unknown[close_to_kind].first), kinds,
                              did_you_mean(unknown[close_to_kind].first, registry_.names())));
    else
      sink_.error(step_mark, fmt::format("step has no kind: expected one of {}", kinds));
  }
  for (std::size_t i = 0; i < unknown.size(); ++i) {
    if (i == close_to_kind) continue;
    sink_.error(unknown[i].second, fmt::format("unknown key '{}' in step{}", excerpt(unknown[i].first),
                                               did_you_mean(unknown[i].first, all_keys)));
  }
}

std::optional<std::string> StepReader::common_text(const YAML::Node& key_node, const YAML::Node& value,
                                                   const std::string& key) {
  if (!value.IsScalar()) {
    sink_.error(value.IsNull() ? key_node : value, fmt::format("'{}' must be a scalar, got {}", key, type_name(value)));
    return std::nullopt;
  }
  return vars_.expand(value.Scalar(), mark_of(value), fmt::format("'{}'", key));
}

void StepReader::read_common(StepSpec& step, const std::string& key, const YAML::Node& key_node,
                             const YAML::Node& value) {
  if (key == "name") {
    read_name(key_node, value);
  } else if (key == "netns") {
    step.marks["@netns"] = mark_of(value);  // what the lab check points at (engine/lab_check.h)
    auto s = common_text(key_node, value, key);
    std::string why;
    if (s && !valid_netns_name(*s, &why))
      sink_.error(value, fmt::format("'netns' is not a valid namespace name: {} ('{}')", why, excerpt(*s)));
    else if (s)
      step.netns = *s;
  } else if (key == "node") {
    if (auto s = common_text(key_node, value, key)) nodes_.read_step_node(step, *s, value);
  } else if (key == "timeout" || key == "delay") {
    read_duration(step, key, key_node, value);
  } else if (key == "retries") {
    auto s = common_text(key_node, value, key);
    if (!s) return;
    if (!all_digits(*s) || s->size() > 3 || std::stoi(*s) > 100)
      sink_.error(value, fmt::format("'retries' must be an integer from 0 to 100, got '{}'", excerpt(*s)));
    else
      step.retries = std::stoi(*s);
  } else if (key == "tags") {
    read_tags(step, key_node, value);
  }
}

void StepReader::read_duration(StepSpec& step, const std::string& key, const YAML::Node& key_node,
                               const YAML::Node& value) {
  auto s = common_text(key_node, value, key);
  if (!s) return;
  bool too_long = false;
  auto d = parse_duration(*s, &too_long);
  if (!d && too_long)
    sink_.error(value, fmt::format("'{}' is '{}', longer than 876000h (a hundred years), the longest duration rxerun "
                                   "takes",
                                   key, excerpt(*s)));
  else if (!d)
    sink_.error(value,
                fmt::format("'{}' must be a duration with a unit (500ms, 5s, 1m, 1h), got '{}'", key, excerpt(*s)));
  else if (key == "timeout")
    step.timeout = *d;
  else
    step.delay = *d;
}

void StepReader::read_name(const YAML::Node& key_node, const YAML::Node& value) {
  if (!value.IsScalar()) {
    sink_.error(value.IsNull() ? key_node : value,
                fmt::format("a step's 'name' must be a string, got {}", type_name(value)));
  } else if (!valid_step_name(value.Scalar())) {
    sink_.error(value,
                fmt::format("step name '{}' may hold only letters, digits, '_', '.' and '-'", excerpt(value.Scalar())));
  }
}

void StepReader::read_tags(StepSpec& step, const YAML::Node& key_node, const YAML::Node& value) {
  auto add = [&](const YAML::Node& tag) {
    if (!tag.IsScalar() || tag.Scalar().empty()) {
      sink_.error(tag.IsNull() ? key_node : tag,
                  fmt::format("a tag must be a non-empty string, got {}", type_name(tag)));
      return;
    }
    if (auto s = vars_.expand(tag.Scalar(), mark_of(tag), "'tags'")) step.tags.push_back(*s);
  };
  if (value.IsSequence()) {
    for (const auto& tag : value) add(tag);
  } else {
    add(value);
  }
}

}  // namespace rxerun::loading
