#include "app/cli_manual.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/manual_prose.h"
#include "base/roff.h"
#include "base/strings.h"
#include "base/version.h"
#include "engine/reference.h"

namespace rxerun {

namespace {

// The options people see (not --help, not the hidden ones), in their order.
std::vector<CLI::Option*> shown_options(CLI::App& app, bool positional) {
  std::vector<CLI::Option*> shown;
  for (CLI::Option* o : app.get_options()) {
    if (o == app.get_help_ptr() || o == app.get_help_all_ptr() || o->get_group().empty()) continue;
    if (o->get_positional() == positional) shown.push_back(o);
  }
  return shown;
}

bool repeatable(const CLI::Option* o) {
  return o->get_items_expected_max() > 1 || o->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
}

// "-v, --verbose" in bold, then the value's name in italic.
std::string option_tag(const CLI::Option* o) {
  std::vector<std::string> names;
  for (const auto& n : o->get_snames()) names.push_back(roff_bold("-" + n));
  for (const auto& n : o->get_lnames()) names.push_back(roff_bold("--" + n));
  std::string tag = join(names, ", ");
  if (!value_name(*o).empty()) tag += " " + roff_italic(value_name(*o));
  return tag;
}

// One option in a synopsis: [--name VALUE]... ; a positional: SCENARIO...
std::string synopsis_word(const CLI::Option* o) {
  if (o->get_positional()) {
    const std::string value = value_name(*o);
    std::string word = roff_italic(value) + (repeatable(o) && !value.ends_with("...]") ? "\\&..." : "");
    return o->get_required() ? word : "[" + word + "]";
  }
  const auto& longs = o->get_lnames();
  std::string word = roff_bold(longs.empty() ? "-" + o->get_snames().front() : "--" + longs.front());
  if (!value_name(*o).empty()) word += "\\~" + roff_italic(value_name(*o));
  return "[" + word + "]" + (repeatable(o) ? "\\&..." : "");
}

std::string synopsis(CLI::App& app, std::span<const Command> commands, const std::string& prefix) {
  std::string out;
  for (const Command& c : commands) {
    if (!*c.help) continue;
    CLI::App* cmd = app.get_subcommand(c.name);
    const std::string name = prefix + " " + c.name;
    if (!c.subcommands.empty()) {
      out += synopsis(*cmd, c.subcommands, name);
      continue;
    }
    std::vector<std::string> words;
    for (const CLI::Option* o : shown_options(*cmd, false)) words.push_back(synopsis_word(o));
    for (const CLI::Option* o : shown_options(*cmd, true)) words.push_back(synopsis_word(o));
    out += fmt::format(".SY \"{}\"\n", roff_text(name));
    for (const auto& w : words) out += w + "\n";
    out += ".YS\n";
  }
  return out;
}

// A list of tagged paragraphs, indented, under a lead-in line.
std::string tagged_list(const std::string& title, const std::vector<std::pair<std::string, std::string>>& items) {
  if (items.empty()) return "";
  std::string out = ".PP\n" + title + "\n.RS\n";
  for (const auto& [tag, text] : items) out += ".TP\n" + tag + "\n" + roff_text(text) + "\n";
  return out + ".RE\n";
}

std::string option_text(CLI::Option* o) {
  std::string text = o->get_description();
  if (text.empty()) text = "-";
  // A fixed set of values (CLI::IsMember) says which.
  try {
    const std::string values = o->get_validator()->get_description();
    if (values.starts_with('{')) text += " (one of " + values + ")";
  } catch (const CLI::OptionNotFound&) {
  }
  return text;
}

std::string command_entry(CLI::App& cmd, const Command& c, const std::string& name) {
  std::string out = fmt::format(".SS \"{}\"\n{}\n", roff_text(name), roff_text(c.help));
  if (*c.details) out += ".PP\n" + roff_text(c.details) + "\n";
  std::vector<std::pair<std::string, std::string>> arguments, options, codes;
  for (CLI::Option* o : shown_options(cmd, true)) arguments.emplace_back(roff_italic(value_name(*o)), option_text(o));
  for (CLI::Option* o : shown_options(cmd, false)) options.emplace_back(option_tag(o), option_text(o));
  for (const ExitCode& e : c.exit_codes) codes.emplace_back(roff_bold(std::to_string(e.code)), e.meaning);
  return out + tagged_list("Arguments:", arguments) + tagged_list("Options:", options) +
         tagged_list("Exit status:", codes);
}

std::string command_entries(CLI::App& app, std::span<const Command> commands, const std::string& prefix) {
  std::string out;
  for (const Command& c : commands) {
    if (!*c.help) continue;
    CLI::App* cmd = app.get_subcommand(c.name);
    const std::string name = prefix + " " + c.name;
    out += c.subcommands.empty() ? command_entry(*cmd, c, name) : command_entries(*cmd, c.subcommands, name);
  }
  return out;
}

// The codes of `run` (the first command), which the others share in part.
std::string exit_status(const Command& run) {
  std::string out = ".SH EXIT STATUS\nThe codes of " + roff_bold(run.name) +
                    "; every command lists its own under COMMANDS, with the same meaning where they meet.\n";
  for (const ExitCode& e : run.exit_codes)
    out += fmt::format(".TP\n{}\n{}\n", roff_bold(std::to_string(e.code)), roff_text(e.meaning));
  return out;
}

// What the first argument means (first_word_is_command()), for people.
constexpr const char* kFirstWordRule =
    "When the first argument is not a command, rxerun runs it: rxerun lab.yaml --keep is rxerun run lab.yaml "
    "--keep, and so is rxerun -v lab.yaml. A first word that names no file, has no '/' and does not end in .yaml "
    "or .yml is taken for a mistyped command instead, after options too: rxerun valdate x.yaml and rxerun -v "
    "valdate x.yaml exit 2 with \"unknown command 'valdate'; did you mean 'validate'?\".";

}  // namespace

std::string manual_page(CLI::App& app, std::span<const Command> commands, const Registry& registry) {
  const std::string description = app.get_description();
  const std::string tool = description.substr(0, description.find('\n'));
  std::string out =
      ".\\\" rxerun(1). Generated by `rxerun help --man` (scripts/generate) from the commands' and\n"
      ".\\\" the step kinds' declarations, and docs/rxerun.1.prose: edit those, not this file.\n";
  out += fmt::format(".TH RXERUN 1 \"\" \"rxerun {}\" \"User Commands\"\n.nh\n.ad l\n", RXERUN_VERSION);
  out += ".SH NAME\nrxerun \\- run Soft\\-RoCE lab scenarios from YAML files\n";
  out += ".SH SYNOPSIS\n.SY rxerun\n" + roff_italic("SCENARIO.yaml") + "\n[" + roff_italic("options") + "]\n.YS\n";
  out += synopsis(app, commands, "rxerun");
  out += ".SY rxerun\n[" + roff_bold("--help") + "|" + roff_bold("--version") + "]\n.YS\n";
  out += ".SH DESCRIPTION\n" + roff_text(tool) + "\n.PP\n" + roff_text(kFirstWordRule) + "\n";
  out += ".PP\n" + roff_text(app.get_footer()) + "\n";
  out += ".SH COMMANDS\n" + command_entries(app, commands, "rxerun");
  out += exit_status(commands.front());
  out +=
      ".SH STEP KINDS\nWhat rxerun steps lists, and rxerun steps KIND describes: each kind's parameters "
      "(type, and whether required or its default), the facts it reports, its default timeout and an "
      "example.\n";
  out += kinds_manual(registry);
  out += kManualProse;
  return out;
}

}  // namespace rxerun
