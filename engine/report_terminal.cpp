// TerminalReporter: what a person watching a run sees. One line per step,
// columns aligned, the reasons under a failure, a step's warnings under it
// even when it passed, the cleanup, one summary line.
//
//   rxerun: selftest (scenarios/selftest.yaml, 4 steps)
//     ok    nap                   sleep     0.10s  slept_ms=100
//     FLAKY settle                ping      0.31s  passed on attempt 3  received=2  sent=2
//     ok    no-roce-out           block     0.04s  bytes=0  chain=output  changed=true  handle=2
//           hint: dropping UDP 4791 on the output hook wedges rxe: ...
//     FAIL  expected-to-fail      sleep     0.10s  slept_ms=100
//           expected fail, got ok
//     skip  optional-check        sleep            skipped (tags: slow)
//   cleanup: 2 undone, nothing left
//   FAIL selftest: 2 passed (1 flaky), 1 failed, 1 skipped in 0.72s (exit 1)
//
// Status words are plain ASCII so that a log without colour (CI, `| less`,
// a non-UTF-8 locale) reads the same; colour only underlines them.
// The reporter keeps no state between calls: every line is built from what
// the call carries, so the runner may call it in any order it needs.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/output.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "engine/progress_line.h"
#include "engine/report.h"

namespace rxerun {
namespace {

constexpr std::size_t kLineWidth = 100;                 // facts are cut to keep a step on one line
constexpr std::size_t kNameWidth = 20;                  // longer names push the columns, never cut
constexpr std::size_t kKindWidth = 8;                   // the longest kind names ("perftest", "counters")
constexpr std::size_t kMaxKeyFacts = 4;                 // facts shown on a step line (all of them with -v)
constexpr std::string_view kDetailIndent = "        ";  // under the name column

// ---- text that came from outside (names, facts, tool messages) -----------

// Columns a code point takes on a terminal: East Asian wide and emoji take two
// (a lab's names may be Chinese, for one).
std::size_t columns_of(char32_t cp) {
  const bool wide =
      (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
      (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
      (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1FAFF) || (cp >= 0x20000 && cp <= 0x3FFFD);
  return wide ? 2 : 1;
}

// One printable line: control characters and bytes that are not UTF-8 become
// visible escapes, so a fact or a tool message can neither break the layout
// nor send escape sequences to the user's terminal.
std::string printable(std::string_view s) {
  return escape_utf8(s, [](char32_t cp, std::string_view bytes, std::string& out) {
    if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += ' ';
    } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) {
      out += hex_escape(static_cast<unsigned char>(cp));
    } else {
      out.append(bytes);
    }
  });
}

// Display columns of printable() text.
std::size_t width_of(std::string_view s) {
  std::size_t w = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto [cp, len] = decode_utf8(s, i);
    w += len ? columns_of(cp) : 1;
    i += len ? len : 1;
  }
  return w;
}

// Cuts printable() text to `max` columns, marking the cut with "...".
std::string fit(std::string_view s, std::size_t max) {
  if (width_of(s) <= max) return std::string(s);
  const std::size_t keep = max > 3 ? max - 3 : 0;
  std::size_t w = 0, i = 0;
  while (i < s.size()) {
    const auto [cp, len] = decode_utf8(s, i);
    const std::size_t cw = len ? columns_of(cp) : 1;
    if (w + cw > keep) break;
    w += cw;
    i += len ? len : 1;
  }
  return std::string(s.substr(0, i)) + "...";
}

std::string pad(std::string s, std::size_t width) {
  const std::size_t w = width_of(s);
  if (w < width) s.append(width - w, ' ');
  return s;
}

// A fact value the way a user would type it: strings bare unless they need
// quotes, everything else as compact JSON.
std::string fact_value(const nlohmann::json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.empty() || s.find_first_of(" \t\n\"") != std::string::npos) {
      return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return s;
  }
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_zero(const nlohmann::json& v) {
  return v.is_number() && v.get<double>() == 0;
}

// The facts worth a place on the step line: the step's own facts first, then
// counter deltas (DEV.COUNTER) that moved; zero deltas only with -v.
std::vector<std::string> key_facts(const nlohmann::json& facts) {
  std::vector<std::string> own, moved;
  if (!facts.is_object()) return own;
  for (const auto& [key, value] : facts.items()) {
    auto kv = printable(key) + "=" + printable(fact_value(value));
    if (key.find('.') == std::string::npos) {
      own.push_back(std::move(kv));
    } else if (!is_zero(value)) {
      moved.push_back(std::move(kv));
    }
  }
  own.insert(own.end(), moved.begin(), moved.end());
  if (own.size() > kMaxKeyFacts) own.resize(kMaxKeyFacts);
  return own;
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// ---- colour ---------------------------------------------------------------

enum class Tone { Plain, Good, Bad, Warn, Dim, Bold };

struct StatusLook {
  std::string_view word;  // at most 5 characters: the status column
  Tone tone;
};

StatusLook look_of(StepStatus s) {
  switch (s) {
    case StepStatus::Passed: return {"ok", Tone::Good};
    case StepStatus::Flaky: return {"FLAKY", Tone::Warn};
    case StepStatus::Failed: return {"FAIL", Tone::Bad};
    case StepStatus::Error: return {"ERROR", Tone::Bad};
    case StepStatus::Skipped: return {"skip", Tone::Warn};
    case StepStatus::NotRun: return {"--", Tone::Dim};
    case StepStatus::Interrupted: return {"INTR", Tone::Warn};
  }
  return {"?", Tone::Plain};
}

}  // namespace

// Member helpers would need private declarations in report.h; these take the
// style instead.
namespace {

std::string paint(const TerminalStyle& style, Tone tone, std::string_view text) {
  if (!style.color || tone == Tone::Plain || text.empty()) return std::string(text);
  std::string_view code;
  switch (tone) {
    case Tone::Good: code = "32"; break;
    case Tone::Bad: code = "31"; break;
    case Tone::Warn: code = "33"; break;
    case Tone::Dim: code = "2"; break;
    case Tone::Bold: code = "1"; break;
    case Tone::Plain: break;
  }
  return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
}

// Users watch long runs through pipes (tee, CI): every line leaves at once.
void emit(std::FILE* out, std::string_view line) {
  std::string text(line);
  text += '\n';
  write_out(out, text);
}

// A multi-line text from a tool, each line indented under the step (or at
// `indent`), a trailing newline ignored.
void emit_block(std::FILE* out, std::string_view indent, std::string_view painted_prefix, std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::size_t start = 0;
  while (true) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    auto line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    emit(out, fmt::format("{}{}{}", indent, painted_prefix, printable(line)));
    if (end == text.size()) break;
    start = end + 1;
  }
}

// "  STATUS NAME  KIND  DURATION  detail  detail", as many details as fit the
// line width; a dropped one leaves "..." behind, a first one too long is cut.
// `duration` is "" for steps that did not run.
std::string row(const TerminalStyle& style, StatusLook look, std::string_view name, std::string_view kind,
                std::string_view duration, const std::vector<std::string>& details) {
  const std::string status = pad(std::string(look.word), 5);
  const std::string name_col = pad(printable(name), kNameWidth);
  const std::string kind_col = pad(printable(kind), kKindWidth);
  const std::string duration_col = fmt::format("{:>6}", duration);
  // Widths are measured on the plain text; colour goes around it afterwards.
  std::string line =
      fmt::format("  {}{} {}  {} {}", paint(style, look.tone, look.word), status.substr(look.word.size()), name_col,
                  kind_col, paint(style, Tone::Dim, duration_col));
  std::size_t used = 2 + status.size() + 1 + width_of(name_col) + 2 + width_of(kind_col) + 1 + duration_col.size();
  for (std::size_t i = 0; i < details.size(); ++i) {
    const std::size_t w = width_of(details[i]);
    const bool last = i + 1 == details.size();
    // Room for "  ..." after this one unless it is the last.
    if (used + 2 + w + (last ? 0 : 5) <= kLineWidth) {
      line += "  " + details[i];
      used += 2 + w;
    } else if (i == 0) {
      line += "  " + fit(details[i], used + 2 + 20 < kLineWidth ? kLineWidth - used - 2 : 20);
      break;
    } else {
      line += "  ...";
      break;
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// Facts wrapped to the line width under the step (-v).
void emit_all_facts(std::FILE* out, const nlohmann::json& facts) {
  if (!facts.is_object() || facts.empty()) return;
  std::string line = std::string(kDetailIndent) + "facts:";
  const std::size_t base = line.size();
  for (const auto& [key, value] : facts.items()) {
    auto kv = printable(key) + "=" + printable(fact_value(value));
    if (line.size() > base && width_of(line) + 1 + width_of(kv) > kLineWidth) {
      emit(out, line);
      line = std::string(kDetailIndent) + "      ";
    }
    line += " " + kv;
  }
  emit(out, line);
}

// The hints a step attached, one indented line each.
void emit_hints(std::FILE* out, const TerminalStyle& style, const std::vector<std::string>& hints) {
  for (const auto& h : hints) emit_block(out, kDetailIndent, paint(style, Tone::Warn, "hint: "), h);
}

bool is_problem(StepStatus s) {
  return s == StepStatus::Failed || s == StepStatus::Error || s == StepStatus::Interrupted;
}

}  // namespace

TerminalReporter::TerminalReporter(std::FILE* out, TerminalStyle style)
    : out_(out),
      style_(style),
      progress_(style.progress && style.verbosity != Verbosity::Quiet ? std::make_unique<ProgressLine>(out) : nullptr) {
}

TerminalReporter::~TerminalReporter() = default;

void TerminalReporter::step_waiting(const StepSpec& s, Duration timeout) {
  if (!progress_) return;
  // The columns of the result line that replaces it: status, name, kind, then
  // the time where the duration will be.
  progress_->show(
      paint(style_, Tone::Dim,
            fmt::format("  ..    {}  {} ", pad(printable(s.name), kNameWidth), pad(printable(s.kind), kKindWidth))),
      timeout);
}

void TerminalReporter::run_started(const Scenario& s) {
  if (style_.verbosity == Verbosity::Quiet) return;
  emit(out_, fmt::format("rxerun: {} ({}, {})", paint(style_, Tone::Bold, printable(s.name)), printable(s.file),
                         plural(s.steps.size(), "step", "steps")));
  if (style_.verbosity == Verbosity::Verbose && !s.description.empty()) {
    emit_block(out_, "  ", "", s.description);
  }
}

void TerminalReporter::step_started(const StepSpec& s) {
  if (style_.verbosity != Verbosity::Verbose) return;
  std::string where = s.netns ? fmt::format(" in netns {}", printable(*s.netns)) : "";
  if (s.node) where += fmt::format(" on node {}", printable(*s.node));
  emit(out_, paint(style_, Tone::Dim,
                   fmt::format("  ..    running {} ({}){}...", printable(s.name), printable(s.kind), where)));
}

void TerminalReporter::step_finished(const StepReport& r) {
  if (progress_) progress_->clear();
  const bool verbose = style_.verbosity == Verbosity::Verbose;
  if (style_.verbosity == Verbosity::Quiet && !is_problem(r.status)) return;

  std::vector<std::string> detail;
  std::string duration = format_seconds(r.duration);
  switch (r.status) {
    case StepStatus::Passed:
      if (r.expected != Outcome::Ok) detail.push_back(fmt::format("{}, as expected", to_string(r.outcome)));
      break;
    case StepStatus::Flaky: detail.push_back(fmt::format("passed on attempt {}", r.attempts)); break;
    case StepStatus::Failed:
    case StepStatus::Error: break;
    case StepStatus::Skipped:
      duration.clear();
      detail.push_back(r.tags.empty() ? "skipped" : fmt::format("skipped (tags: {})", printable(join(r.tags, ","))));
      break;
    case StepStatus::NotRun:
      duration.clear();
      detail.push_back("not run");
      break;
    case StepStatus::Interrupted: detail.push_back("interrupted"); break;
  }
  if (!r.node.empty()) detail.insert(detail.begin(), "on " + printable(r.node));
  if (!r.netns.empty() && verbose) detail.push_back("netns=" + printable(r.netns));
  if (!verbose) {
    auto facts = key_facts(r.facts);
    detail.insert(detail.end(), facts.begin(), facts.end());
  }
  emit(out_, row(style_, look_of(r.status), r.name, r.kind, duration, detail));

  if (verbose) emit_all_facts(out_, r.facts);
  if (r.status == StepStatus::Failed || r.status == StepStatus::Error || r.status == StepStatus::Interrupted) {
    if (r.status == StepStatus::Failed && r.failures.empty() && r.outcome != r.expected) {
      emit(out_, fmt::format("{}expected {}, got {}", kDetailIndent, to_string(r.expected), to_string(r.outcome)));
    }
    for (const auto& f : r.failures) emit_block(out_, kDetailIndent, "", f);
    if (!r.message.empty()) emit_block(out_, kDetailIndent, "", r.message);
    emit_hints(out_, style_, r.hints);
  } else if ((r.status == StepStatus::Passed || r.status == StepStatus::Flaky) && r.outcome == Outcome::Ok) {
    // A step that did its job and still has something to say warns (a block
    // of UDP 4791 on the output hook). The likely causes a failure carries
    // are not news when the scenario expected that failure.
    emit_hints(out_, style_, r.hints);
  }
}

void TerminalReporter::cleanup_started(std::string_view phase, std::size_t pending) {
  if (style_.verbosity != Verbosity::Verbose || pending == 0) return;
  emit(out_, fmt::format("{}: undoing {}", printable(phase), plural(pending, "change", "changes")));
}

void TerminalReporter::undo_finished(const UndoReport& u) {
  // A failed undo is residue on the user's host: shown at every verbosity.
  if (u.ok && style_.verbosity != Verbosity::Verbose) return;
  const StatusLook look = u.ok ? StatusLook{"undo", Tone::Dim} : StatusLook{"LEFT", Tone::Bad};
  std::string line = row(style_, look, u.summary, u.kind, format_seconds(u.duration), {});
  if (!u.ok) {
    // The reason is what the user needs to clean up by hand: never cut.
    line += fmt::format("  {}", paint(style_, Tone::Bad, printable(u.error.empty() ? "failed" : u.error)));
  } else if (!u.step.empty()) {
    line += fmt::format("  (step {})", printable(u.step));
  }
  emit(out_, line);
  if (!u.ok && !u.journal_text.empty()) emit_block(out_, kDetailIndent, "journal ", u.journal_text);
}

void TerminalReporter::cleanup_finished(const CleanupReport& c) {
  const bool clean = c.clean();
  if (style_.verbosity == Verbosity::Quiet && clean) return;
  const std::string phase = printable(c.phase.empty() ? "cleanup" : c.phase);
  const bool preclean = c.phase == "preclean";
  if (preclean && c.undos.empty()) return;  // a preclean that found nothing is not news

  std::size_t failed = 0;
  for (const auto& u : c.undos) failed += u.ok ? 0 : 1;
  const std::size_t undone = c.undos.size() - failed;
  std::string text;
  if (c.kept) {
    text = fmt::format("{}: skipped (--keep), the lab is still up", phase);
  } else if (failed > 0) {
    text = fmt::format("{}: {} undone, {}", phase, undone,
                       paint(style_, Tone::Bad, fmt::format("{} left behind", failed)));
  } else if (c.undos.empty()) {
    text = fmt::format("{}: nothing to undo", phase);
  } else if (preclean) {
    text = fmt::format("{}: removed {} of an earlier run", phase, plural(undone, "leftover", "leftovers"));
  } else {
    text = fmt::format("{}: {} undone, nothing left", phase, undone);
  }
  emit(out_, text);
}

void TerminalReporter::run_finished(const RunReport& r) {
  std::size_t passed = 0, flaky = 0, failed = 0, errors = 0, skipped = 0, not_run = 0, interrupted = 0;
  for (const auto& s : r.steps) {
    switch (s.status) {
      case StepStatus::Passed: ++passed; break;
      case StepStatus::Flaky: ++passed, ++flaky; break;
      case StepStatus::Failed: ++failed; break;
      case StepStatus::Error: ++errors; break;
      case StepStatus::Skipped: ++skipped; break;
      case StepStatus::NotRun: ++not_run; break;
      case StepStatus::Interrupted: ++interrupted; break;
    }
  }
  if (r.interrupted) {
    emit(out_, paint(style_, Tone::Warn,
                     fmt::format("interrupted: {} not run, cleanup ran", plural(not_run, "step", "steps"))));
  }

  std::vector<std::string> counts;
  counts.push_back(flaky ? fmt::format("{} passed ({} flaky)", passed, flaky) : fmt::format("{} passed", passed));
  if (failed) counts.push_back(fmt::format("{} failed", failed));
  if (errors) counts.push_back(plural(errors, "error", "errors"));
  if (interrupted) counts.push_back(fmt::format("{} interrupted", interrupted));
  if (skipped) counts.push_back(fmt::format("{} skipped", skipped));
  if (not_run) counts.push_back(fmt::format("{} not run", not_run));
  std::size_t residue = 0;
  for (const auto* c : {&r.preclean, &r.cleanup}) {
    if (c->kept) continue;
    for (const auto& u : c->undos) residue += u.ok ? 0 : 1;
  }
  if (residue) counts.push_back(fmt::format("cleanup left {} behind", residue));
  if (r.cleanup.kept) counts.push_back("lab kept");
  if (const auto n = r.kernel_health.findings.size()) {
    // After the steps and the cleanup: what the kernel reported of its own trouble.
    write_out(out_, kernel_health_text(r.kernel_health, style_));
    counts.push_back(plural(n, "kernel health finding", "kernel health findings"));
  }

  // The verdict follows the exit code (engine/exit_code.h), so the word and the code
  // can never disagree.
  std::string_view verdict = "EXIT";
  Tone tone = Tone::Bad;
  switch (r.exit_code) {
    case 0: verdict = "PASS", tone = Tone::Good; break;
    case 1: verdict = "FAIL"; break;
    case 2: verdict = "INVALID"; break;
    case 3: verdict = "ERROR"; break;
    case 4: verdict = "DIRTY"; break;
    case 130: verdict = "INTERRUPTED", tone = Tone::Warn; break;
    default: break;
  }
  emit(out_, fmt::format("{} {}: {} in {} (exit {})", paint(style_, tone, verdict), printable(r.scenario),
                         join(counts, ", "), format_seconds(r.duration), r.exit_code));
  const std::string file = printable(r.file.empty() ? "SCENARIO.yaml" : r.file);
  if (residue) {
    emit(out_, fmt::format("  left behind on the host (see above): `rxerun cleanup {}` tries again", file));
  } else if (r.cleanup.kept && style_.verbosity != Verbosity::Quiet) {
    emit(out_, fmt::format("  `rxerun cleanup {}` removes the lab", file));
  }
}

std::string kernel_health_text(const KernelHealth& h, const TerminalStyle& style) {
  std::string out;
  const bool fails = h.policy == KernelHealthPolicy::Fail;
  for (const auto& f : h.findings) {
    const std::string head = fmt::format("kernel health: {} {}{}{}", printable(f.kind), printable(f.where()),
                                         h.kernel.empty() ? "" : " (kernel " + printable(h.kernel) + ")",
                                         fails ? ":" : " (kernel_health: warn, the run does not fail on it):");
    out += paint(style, fails ? Tone::Bad : Tone::Warn, head) + "\n";
    for (const auto& line : f.lines) out += "    " + printable(line) + "\n";
  }
  return out;
}

void TerminalReporter::note(std::string_view text) {
  // Notes are rare and matter (interruption, placement): shown even with -q.
  emit_block(out_, "", "", text);
}

}  // namespace rxerun
