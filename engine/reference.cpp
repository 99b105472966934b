#include "engine/reference.h"

#include <fmt/format.h>

#include "base/duration.h"
#include "base/roff.h"
#include "base/strings.h"

namespace rxerun {

namespace {

// A fact's help, with the moments it is reported at besides the step
// itself (the moments alone are in its help when it has no kAtStep).
std::string fact_help(const FactSpec& f) {
  std::string h = f.help;
  if ((f.when & kAtStep) && (f.when & kAtRevert)) h += "; again at its revert";
  if ((f.when & kAtStep) && (f.when & kAtEnd)) h += "; in the background: at its wait or revert";
  return h;
}

std::string type_of(const ParamSpec& p) {
  return p.type == ParamType::Enum ? join(p.choices, "|") : std::string(to_string(p.type));
}

// "required", "default 5", or nothing.
std::string presence_of(const ParamSpec& p) {
  if (!p.default_value.is_null())
    return "default " + (p.default_value.is_string() ? p.default_value.get<std::string>() : p.default_value.dump());
  return p.required ? "required" : "";
}

std::string timeout_of(const KindSpec& s) {
  if (!s.default_timeout) return "the engine's default (30s)";
  if (s.default_timeout->count() == 0) return "none unless given";
  return format_duration(*s.default_timeout);
}

std::string param_line(const ParamSpec& p, const std::string& prefix) {
  return fmt::format("  {:<18} {:<14} {:<16} {}\n", prefix + p.name, type_of(p), presence_of(p), p.help);
}

// Text inside a Markdown table cell: '|' would end the cell, a newline the row.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string param_row(const ParamSpec& p, const std::string& prefix) {
  return fmt::format("| `{}{}` | {} | {} | {} |\n", prefix, p.name, cell(type_of(p)), cell(presence_of(p)),
                     cell(p.help));
}

// One parameter as a tagged paragraph of the manual page.
std::string param_entry(const ParamSpec& p, const std::string& prefix) {
  const std::string presence = presence_of(p);
  return fmt::format(".TP\n{} {}{}\n{}\n", roff_bold(prefix + p.name), roff_italic(type_of(p)),
                     presence.empty() ? "" : ", " + roff_text(presence), roff_text(p.help.empty() ? "-" : p.help));
}

std::string kind_manual(const KindSpec& s) {
  std::string out = fmt::format(".SS {}\n{}\n.PP\nParameters:", roff_text(s.name), roff_text(s.summary));
  if (s.scalar) {
    out += fmt::format(" a single value ({}): {}\n", roff_italic(to_string(s.scalar->type)), roff_text(s.scalar->help));
  } else if (s.params.empty() && !s.extra) {
    out += " none.\n";
  } else {
    out += "\n.RS\n";
    for (const auto& p : s.params) {
      out += param_entry(p, "");
      for (const auto& f : p.fields) out += param_entry(f, p.name + ".");
    }
    if (s.extra)
      out +=
          fmt::format(".TP\nany other key {}\n{}\n", roff_italic(to_string(s.extra->type)), roff_text(s.extra->help));
    out += ".RE\n";
  }
  if (s.facts_of_target) {
    out += ".PP\nFacts: those of the step it reverts.\n";
  } else if (s.facts.empty()) {
    out += ".PP\nFacts: none.\n";
  } else {
    out += ".PP\nFacts:\n.RS\n";
    for (const auto& f : s.facts) out += fmt::format(".TP\n{}\n{}\n", roff_bold(f.name), roff_text(fact_help(f)));
    out += ".RE\n";
  }
  out += fmt::format(".PP\nTimeout: {}.\n", roff_text(timeout_of(s)));
  if (!s.example.empty()) {
    std::string example = s.example;
    if (example.back() == '\n') example.pop_back();
    out += fmt::format(".PP\nExample:\n.RS\n.nf\n{}\n.fi\n.RE\n", roff_text(example));
  }
  return out;
}

}  // namespace

std::string describe_kind(const KindSpec& s) {
  std::string out = fmt::format("{}: {}\n\nparameters:\n", s.name, s.summary);
  if (s.scalar) {
    out += fmt::format("  (a single value: {} — {})\n", to_string(s.scalar->type), s.scalar->help);
  } else {
    for (const auto& p : s.params) {
      out += param_line(p, "");
      for (const auto& f : p.fields) out += param_line(f, p.name + ".");
    }
    if (s.extra)
      out += fmt::format("  {:<18} {:<14} {:<16} {}\n", "(any other key)", to_string(s.extra->type), "", s.extra->help);
  }
  out += "\nfacts:\n";
  if (s.facts_of_target) out += "  those of the step it reverts\n";
  for (const auto& f : s.facts) out += fmt::format("  {:<18} {}\n", f.name, fact_help(f));
  if (s.facts.empty() && !s.facts_of_target) out += "  (none)\n";
  out += fmt::format("\ntimeout: {}\n\nexample:\n", timeout_of(s));
  for (std::size_t pos = 0; pos < s.example.size();) {
    auto nl = s.example.find('\n', pos);
    if (nl == std::string::npos) nl = s.example.size();
    out += "  " + s.example.substr(pos, nl - pos) + "\n";
    pos = nl + 1;
  }
  return out;
}

std::string kinds_markdown(const Registry& registry) {
  std::string out = "\n## Step kinds\n\nOne section per kind, in the order `rxerun steps` lists them.\n";
  for (const auto& kind : registry.kinds()) {
    const KindSpec& s = kind.spec;
    out += fmt::format("\n### {}\n\n{}\n\n", s.name, s.summary);
    if (s.scalar) {
      out += fmt::format("Parameter: a single value ({}): {}\n", to_string(s.scalar->type), s.scalar->help);
    } else if (s.params.empty() && !s.extra) {
      out += "Parameters: none.\n";
    } else {
      out += "| parameter | type | | |\n|---|---|---|---|\n";
      for (const auto& p : s.params) {
        out += param_row(p, "");
        for (const auto& f : p.fields) out += param_row(f, p.name + ".");
      }
      if (s.extra) out += fmt::format("| any other key | {} | | {} |\n", to_string(s.extra->type), cell(s.extra->help));
    }
    if (s.facts_of_target) {
      out += "\nFacts: those of the step it reverts.\n";
    } else if (s.facts.empty()) {
      out += "\nFacts: none.\n";
    } else {
      out += "\n| fact | |\n|---|---|\n";
      for (const auto& f : s.facts) out += fmt::format("| `{}` | {} |\n", f.name, cell(fact_help(f)));
    }
    out += fmt::format("\nTimeout: {}.\n\n```yaml\n{}", timeout_of(s), s.example);
    if (!s.example.empty() && s.example.back() != '\n') out += '\n';
    out += "```\n";
  }
  return out;
}

std::string kinds_manual(const Registry& registry) {
  std::string out;
  for (const auto& kind : registry.kinds()) out += kind_manual(kind.spec);
  return out;
}

}  // namespace rxerun
