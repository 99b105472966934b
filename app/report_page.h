#pragma once
// The report page: one self-contained HTML file of what a command ran (a
// run, a suite, a two-node lab), for people to look at. It holds the lab's
// drawing (app/graph.h), a timeline of the steps, every step with its
// parameters, facts and expectations, counter charts, kernel findings, and
// a packet ladder per capture (app/report_ladder.h). Styles, scripts and
// drawings are inline; nothing is fetched. Everything but the packet panel
// and the timeline's scroll to the failing step shows with scripts off.
//
// Hooks for tests and users' tooling (docs/running.md): data-step="NAME"
// per step, data-expect="FACT" with data-verdict per expectation,
// data-packet="FRAME" per packet of a ladder, data-run="NAME@KERNEL" per
// run (NAME@host on this machine).

#include <filesystem>
#include <string>
#include <vector>

#include "base/result.h"
#include "engine/report.h"

namespace rxerun {

struct PageOptions {
  // Where a capture a step names is looked for, in order: its name as the
  // report has it (absolute, or from the current directory) under each of
  // these, then as it is.
  std::vector<std::filesystem::path> capture_dirs;
  std::size_t max_packets = 3000;  // per capture; beyond, the page says what it left out
};

std::string render_report_page(const SuiteReport& suite, const PageOptions& options);

// Renders and writes the page atomically (never through a symbolic link).
Result<void> write_report_page(const std::string& path, const SuiteReport& suite, const PageOptions& options);

// `rxerun report RUN.json [-o FILE.html] [--output-dir DIR]`.
struct ReportPageOptions {
  std::string report;      // the JSON report
  std::string output;      // -o FILE; "" for stdout
  std::string output_dir;  // where its run put the captures; "" for the report's directory
};
int cmd_report(const ReportPageOptions& options);

}  // namespace rxerun
