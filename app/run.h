#pragma once
// `rxerun run`: one scenario, or a suite (several files, directories, a
// kernel matrix), on the host or in the lab VM, one boot per kernel, up to
// -j lab VMs at once; a summary and the reports at the end. Also the pieces
// `cleanup` shares with it.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/journal.h"
#include "engine/model.h"
#include "engine/registry.h"
#include "engine/report.h"

namespace rxerun {

struct CommonOptions {
  std::vector<std::string> plugins;  // --plugin, absolute paths (loaded already)
  std::vector<std::string> vars;     // KEY=VALUE
  std::vector<std::string> only;
  std::vector<std::string> skip;
};

struct RunCommandOptions {
  std::vector<std::string> scenarios;  // files and directories, as given
  CommonOptions common;
  bool keep = false;
  bool force = false;
  std::vector<std::string> reports;
  bool verbose = false;
  bool quiet = false;
  std::string color = "auto";
  bool vm = false;
  bool host = false;
  std::string kernel;   // --kernel: a label, a list, all, or the path of a kernel of one's own
  std::string modules;  // --modules: with --kernel IMAGE, its modules directory
  std::size_t jobs = 1;
  bool fail_fast = false;
  std::string shard;          // --shard K/N
  std::string kernel_health;  // --kernel-health fail|warn|off; empty: the scenario's kernel_health
  std::string output_dir;     // --output-dir
  std::string guest_output;   // --guest-output: the lab VM's share (set by the host, not by people)
  // Set by the host for the guest, not by people: the lab kernel's label and
  // where this part of the suite starts in the whole ("3/8").
  std::string lab_kernel;
  std::string suite_position;
  bool progress = false;  // the live status line although stdout is no terminal (the lab VM's serial port)
};

int cmd_run(const RunCommandOptions& options, Registry& registry);

// Whether to colour: --color, NO_COLOR, TERM=dumb, a terminal on stdout.
bool want_color(const std::string& mode);
// Whether a step that waits shows a live status line: on a terminal
// (TERM other than dumb) and without -q.
bool want_progress(const RunCommandOptions& options);
// The terminal's look from -v/-q/--color, and the status line.
TerminalStyle terminal_style(const RunCommandOptions& options);
// Loads and checks one file, and the plugins it names; prints its
// diagnostics to stderr. `plugins_may_fail` (cleanup): a plugin that cannot
// be loaded is a warning.
std::optional<Scenario> load(const std::string& file, Registry& registry, const CommonOptions& common,
                             bool plugins_may_fail = false);
// A report's `host`: this machine's facts (kernel, hostname, ...) and this
// rxerun's version.
nlohmann::json host_record();
// Now, in UTC, as ISO 8601 ("2026-12-05T16:21:52Z"): a report's started_at.
std::string now_iso8601();
// The scenario's journal, locked for this process; prints why not.
std::optional<Journal> open_journal(const std::string& scenario);

}  // namespace rxerun
