#include "engine/vars.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "engine/diag.h"

namespace rxerun {

namespace {

constexpr std::string_view kOpen = "{{";
constexpr std::string_view kClose = "}}";
constexpr std::string_view kStepsPrefix = "steps.";

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

// One {{...}} found in a text.
struct Placeholder {
  std::size_t begin = 0;               // offset of "{{"
  std::size_t end = 0;                 // offset just past "}}"
  std::string name;                    // trimmed
  bool is_step = false;                // steps.NAME.FACT
  StepReference ref;                   // when is_step
  std::optional<std::string> literal;  // {{ '...' }} or {{ "..." }}: this text, as it is
};

// {{ 'TEXT' }} or {{ "TEXT" }} (blanks optional) from `open`: TEXT is
// written as it is, so that a value may hold '{{' ({{ '{{' }}) and '}}'.
// TEXT cannot hold its own quote. Before literals existed, a quote after
// '{{' was an invalid variable name: no valid scenario reads differently.
Result<Placeholder> read_literal(std::string_view text, std::size_t open, std::size_t quote_at) {
  const char quote = text[quote_at];
  const std::size_t closing = text.find(quote, quote_at + 1);
  if (closing == std::string_view::npos)
    return make_error(fmt::format("unterminated literal {} in '{}': write {{{{ '{{{{' }}}} for a literal '{{{{'", quote,
                                  excerpt(text.substr(open))));
  const std::size_t after = text.find_first_not_of(kBlanks, closing + 1);
  if (after == std::string_view::npos || text.substr(after, kClose.size()) != kClose)
    return make_error(
        fmt::format("a literal {{{{ {}...{} }}}} must end with '}}}}' right after its closing quote, "
                    "in '{}'",
                    quote, quote, excerpt(text.substr(open))));
  Placeholder p;
  p.begin = open;
  p.end = after + kClose.size();
  p.literal = std::string(text.substr(quote_at + 1, closing - quote_at - 1));
  return p;
}

// The placeholder starting at `open` (an offset of "{{"), or an error.
Result<Placeholder> read_placeholder(std::string_view text, std::size_t open) {
  const std::size_t first = text.find_first_not_of(kBlanks, open + kOpen.size());
  if (first != std::string_view::npos && (text[first] == '\'' || text[first] == '"'))
    return read_literal(text, open, first);
  const std::size_t close = text.find(kClose, open + kOpen.size());
  if (close == std::string_view::npos)
    return make_error(fmt::format("unterminated '{{{{' in '{}'", excerpt(text.substr(open))));
  Placeholder p;
  p.begin = open;
  p.end = close + kClose.size();
  const std::string_view name = trim(text.substr(open + kOpen.size(), close - open - kOpen.size()), kBlanks);
  if (name.empty())
    return make_error(fmt::format("empty variable name in '{}'", excerpt(text.substr(open, p.end - open))));
  for (char c : name) {
    if (!is_name_char(c))
      return make_error(
          fmt::format("invalid variable name '{}': use letters, digits, '_', '.' and '-'", excerpt(name)));
  }
  p.name = std::string(name);
  if (name.starts_with(kStepsPrefix)) {
    // The step is the first segment; the fact may hold dots itself (rxe1.sent_pkts).
    const std::string_view rest = name.substr(kStepsPrefix.size());
    const std::size_t dot = rest.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size())
      return make_error(
          fmt::format("expected {{{{steps.NAME.FACT}}}}, got '{}'", excerpt(text.substr(open, p.end - open))));
    p.is_step = true;
    p.ref = {std::string(rest.substr(0, dot)), std::string(rest.substr(dot + 1))};
  }
  return p;
}

// How a fact reads inside a string: numbers without quotes, strings raw.
std::string fact_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The placeholder's value: a view into `vars`, or into `scratch` for a fact
// (no copy of a large variable is made before the caps are checked).
Result<std::string_view> substitute(const Placeholder& p, std::string_view text, const Vars& vars,
                                    const FactLookup* facts, std::string& scratch) {
  if (p.literal) {
    if (!facts) return text.substr(p.begin, p.end - p.begin);  // written as it is at run time
    return std::string_view(*p.literal);
  }
  if (p.is_step) {
    if (!facts || !*facts) return text.substr(p.begin, p.end - p.begin);  // resolved at run time
    auto value = (*facts)(p.ref.step, p.ref.fact);
    if (!value)
      return make_error(
          fmt::format("step '{}' did not report fact '{}' ({})", p.ref.step, p.ref.fact, value.error().message));
    scratch = fact_text(*value);
    return std::string_view(scratch);
  }
  if (auto it = vars.find(p.name); it != vars.end()) return std::string_view(it->second);
  std::vector<std::string> names;
  for (const auto& [name, value] : vars) names.push_back(name);
  // {{.Id}}: a Go template (docker, kubectl), not a variable.
  const std::string literal = p.name.starts_with('.') ? ": a literal '{{' is written {{ '{{' }}" : "";
  return make_error(fmt::format("undefined variable '{}'{}{}", excerpt(p.name), did_you_mean(p.name, names), literal));
}

}  // namespace

Result<std::string> expand(std::string_view text, const Vars& vars, const FactLookup* facts, ExpansionBudget* budget) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find(kOpen, pos);
    if (open == std::string_view::npos) break;
    auto p = read_placeholder(text, open);
    if (!p) return p.error();
    std::string scratch;
    auto value = substitute(*p, text, vars, facts, scratch);
    if (!value) return value.error();
    const std::size_t grown = out.size() + (open - pos) + value->size();
    if (grown > kMaxExpandedValue)
      return make_error(
          fmt::format("this value grows past 64 KiB when {{{{{}}}}} is expanded: rxerun caps a value "
                      "at 64 KiB after expansion",
                      excerpt(p->name)));
    if (budget) {
      if (value->size() > kMaxExpandedScenario - budget->used) {
        ++budget->refused;
        return make_error(
            fmt::format("expanding {{{{{}}}}} here takes the variables substituted in this scenario "
                        "past 4 MiB, rxerun's cap for a scenario: use large values fewer times",
                        excerpt(p->name)));
      }
      budget->used += value->size();
    }
    out.append(text.substr(pos, open - pos));
    out.append(*value);
    pos = p->end;
  }
  if (pos > 0 && out.size() + (text.size() - pos) > kMaxExpandedValue)
    return make_error("this value grows past 64 KiB after expansion: rxerun caps a value at 64 KiB after expansion");
  out.append(text.substr(pos));
  return out;
}

Result<void> expand_json(nlohmann::json& value, const Vars& vars, const FactLookup* facts, ExpansionBudget* budget) {
  if (value.is_string()) {
    auto r = expand(value.get_ref<const std::string&>(), vars, facts, budget);
    if (!r) return r.error();
    value = std::move(r).value();
    return {};
  }
  if (value.is_array() || value.is_object()) {
    for (auto& item : value) {
      if (auto r = expand_json(item, vars, facts, budget); !r) return r;
    }
  }
  return {};
}

namespace {

// Calls `fn` with every well-formed placeholder of `text`, in order (a
// malformed one is skipped: expand() reports it).
template <typename Fn>
void each_placeholder(std::string_view text, Fn&& fn) {
  std::size_t pos = 0;
  while (true) {
    const std::size_t open = text.find(kOpen, pos);
    if (open == std::string_view::npos) return;
    auto p = read_placeholder(text, open);
    if (!p) {
      pos = open + kOpen.size();
      continue;
    }
    fn(*p);
    pos = p->end;
  }
}

}  // namespace

std::vector<StepReference> step_references(std::string_view text) {
  std::vector<StepReference> refs;
  each_placeholder(text, [&](const Placeholder& p) {
    if (p.is_step) refs.push_back(p.ref);
  });
  return refs;
}

std::vector<std::string> variable_references(std::string_view text) {
  std::vector<std::string> names;
  each_placeholder(text, [&](const Placeholder& p) {
    if (!p.is_step && !p.literal) names.push_back(p.name);
  });
  return names;
}

namespace {
const FactLookup kNoFacts = [](const std::string&, const std::string&) -> Result<nlohmann::json> {
  return make_error("facts are not read in this pass");
};
}  // namespace

Result<std::string> resolve_literals(std::string_view text) {
  return expand(text, Vars{}, &kNoFacts);
}

Result<void> resolve_literals(nlohmann::json& value) {
  return expand_json(value, Vars{}, &kNoFacts);
}

bool has_step_references(const nlohmann::json& value) {
  if (value.is_string()) return !step_references(value.get_ref<const std::string&>()).empty();
  if (value.is_array() || value.is_object()) {
    for (const auto& item : value) {
      if (has_step_references(item)) return true;
    }
  }
  return false;
}

}  // namespace rxerun
