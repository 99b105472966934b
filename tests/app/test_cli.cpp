// The command line's front door (app/cli.h): what the first word means,
// every command's exit codes, and `validate`/`plan` taking directories.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "app/cli.h"

using namespace rxerun;

namespace {

bool parses_as(std::vector<std::string> args, const std::string& command, CommandLine& line) {
  auto parsed = parse_command_line(std::move(args), line);
  return std::holds_alternative<const Command*>(parsed) && std::get<const Command*>(parsed)->name == command;
}

}  // namespace

TEST_CASE("cli: the first word is a command, a scenario, or a mistyped command") {
  CHECK(first_word_is_command("validate"));
  CHECK(first_word_is_command("valdate"));  // no file, no '/', no .yaml: a typo
  CHECK(first_word_is_command("frobnicate"));
  CHECK_FALSE(first_word_is_command("lab.yaml"));  // a scenario even when missing: the loader names it
  CHECK_FALSE(first_word_is_command("lab.yml"));
  CHECK_FALSE(first_word_is_command("./valdate"));
  CHECK_FALSE(first_word_is_command("labs/x"));

  const auto dir = std::filesystem::temp_directory_path() / "rxerun-test-cli-first-word";
  std::filesystem::create_directories(dir);
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  std::ofstream("valdate") << "name: x\n";
  CHECK_FALSE(first_word_is_command("valdate"));  // an existing file is run
  std::filesystem::current_path(cwd);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli: a mistyped command is refused before anything runs") {
  CommandLine line;
  CHECK(parse_command_line({"valdate", "x.yaml"}, line) == std::variant<const Command*, int>(kExitUsage));
  CommandLine run;
  CHECK(parses_as({"x.yaml"}, "run", run));
  CHECK(run.run.scenarios == std::vector<std::string>{"x.yaml"});
  CommandLine help;
  CHECK(parses_as({"help", "vm", "setup"}, "help", help));
  CHECK(help.help_topic == std::vector<std::string>{"vm", "setup"});
}

TEST_CASE("cli: every command people use has its own exit codes, 0 and 2 among them") {
  std::vector<const Command*> pending;
  for (const Command& c : commands()) pending.push_back(&c);
  int checked = 0;
  while (!pending.empty()) {
    const Command* c = pending.back();
    pending.pop_back();
    for (const Command& sub : c->subcommands) pending.push_back(&sub);
    if (!*c->help || !c->subcommands.empty()) continue;
    CAPTURE(c->name);
    bool ok = false, usage = false;
    for (const ExitCode& e : c->exit_codes) {
      ok |= e.code == kExitOk;
      usage |= e.code == kExitUsage;
      CHECK(std::string(e.meaning).size() > 5);
    }
    CHECK(ok);
    CHECK(usage);
    CHECK(std::string(c->details).size() > 40);
    ++checked;
  }
  CHECK(checked >= 12);
}

TEST_CASE("cli: validate and plan take several files and directories") {
  CommandLine line;
  CHECK(parses_as({"plan", "a.yaml", "labs/"}, "plan", line));
  CHECK(line.plan_files == std::vector<std::string>{"a.yaml", "labs/"});
  CommandLine v;
  CHECK(parses_as({"validate", "--json", "labs/"}, "validate", v));
  CHECK(v.validate_json);
}
