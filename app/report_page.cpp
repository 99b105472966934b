// The report page (app/report_page.h): the page, its runs and their steps.
// The timeline and the counter charts are in report_charts.cpp, the packet
// ladder in report_ladder.cpp.

#include "app/report_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "app/graph.h"
#include "app/html.h"
#include "app/report_charts.h"
#include "app/report_ladder.h"
#include "base/files.h"
#include "base/output.h"
#include "base/version.h"
#include "engine/exit_code.h"
#include "engine/picture.h"
#include "engine/runner.h"

namespace rxerun {

namespace {

// A fact's or parameter's value as the page shows it: text as it is,
// anything else as compact JSON.
std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Where a run ran, as its hook and the matrix name it: the lab kernel; a
// two-node lab's kernels of its nodes, "6.1+7.3"; "host" on this machine.
std::string where_label(const RunReport& r) {
  if (!r.lab_kernel.empty()) return r.lab_kernel;
  if (r.vm.is_object() && r.vm.contains("nodes") && r.vm["nodes"].is_object() && !r.vm["nodes"].empty()) {
    std::string kernels;
    for (const auto& [name, node] : r.vm["nodes"].items()) {
      const auto k = node.is_object() && node.contains("kernel") ? value_text(node["kernel"]) : std::string("?");
      kernels += (kernels.empty() ? "" : "+") + k;
    }
    return kernels;
  }
  return "host";
}

std::string run_hook(const RunReport& r) {
  return r.scenario + "@" + where_label(r);
}

// The time of a kernel message as dmesg stamps it, "[   7.314036] ...", in
// seconds; nullopt for a line without one.
std::optional<double> dmesg_seconds(const std::string& line) {
  if (line.empty() || line[0] != '[') return std::nullopt;
  const auto close = line.find(']');
  if (close == std::string::npos) return std::nullopt;
  try {
    std::size_t used = 0;
    const std::string number = line.substr(1, close - 1);
    const double seconds = std::stod(number, &used);
    if (number.find_first_not_of(' ', used) != std::string::npos) return std::nullopt;
    return seconds;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string_view verdict_class(std::string_view verdict) {
  if (verdict == "passed") return "ok";
  if (verdict == "failed" || verdict == "residue") return "fail";
  if (verdict == "not-run") return "none";
  return "error";
}

// A step the run stopped at: the page opens it and points at it.
bool troubled(const StepReport& s) {
  return Runner::stops_run(s.status);
}

// The page's own styles; the ladder brings its own (ladder_css()).
constexpr std::string_view kCss = R"(
:root{--ok:#1a7f37;--fail:#cf222e;--error:#bc4c00;--flaky:#9a6700;--none:#6e7781;--line:#d0d7de;--soft:#f6f8fa}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;max-width:1200px;padding:16px 24px;color:#1f2328}
h1{font-size:22px;margin:8px 0}h2{font-size:19px;margin:0 0 6px}h3{font-size:15px;margin:18px 0 6px}
code,pre,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12.5px}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px;overflow:auto;max-height:24em;white-space:pre-wrap;word-break:break-all}
.badge{display:inline-block;border-radius:10px;padding:0 9px;color:#fff;font-weight:600;font-size:12px;line-height:20px;vertical-align:1px}
.ok{--c:var(--ok)}.fail{--c:var(--fail)}.error{--c:var(--error)}.flaky{--c:var(--flaky)}.none{--c:var(--none)}
.badge{background:var(--c,#6e7781)}
section.run{border:1px solid var(--line);border-left:6px solid var(--c);border-radius:8px;padding:12px 16px;margin:18px 0}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
table.facts td:first-child{color:#57606a;white-space:nowrap}
.matrix td,.matrix th{text-align:center}.matrix a{color:var(--c);font-weight:600;text-decoration:none}
.drawing{overflow:auto;border:1px solid var(--line);border-radius:6px;background:#fff;padding:4px;text-align:center}
.drawing svg{max-width:100%;height:auto}
.timeline{overflow:auto;max-height:420px;border:1px solid var(--line);border-radius:6px}
.timeline text{font-size:11px;fill:#1f2328}.timeline .axis{stroke:#d0d7de}
.timeline rect.bar{fill:var(--c)}.timeline .expected rect.bar{fill-opacity:.4;stroke:var(--c);stroke-dasharray:4 2}.timeline .span{stroke:var(--c);stroke-width:3;stroke-dasharray:4 3;opacity:.6}
details.run-body>summary{cursor:pointer}details.run-body>summary h2{display:inline}
details.step{border:1px solid var(--line);border-left:4px solid var(--c);border-radius:6px;margin:6px 0;padding:0 10px}
details.step>summary{cursor:pointer;padding:6px 0;list-style-position:outside}
details.step[open]>summary{border-bottom:1px solid var(--line);margin-bottom:6px}
.muted{color:#57606a}.why{color:var(--fail)}.hint{color:#57606a;font-style:italic}
tr[data-verdict=ok] td.verdict{color:var(--ok);font-weight:600}tr[data-verdict=fail]{background:#ffebe9}
tr[data-verdict=fail] td.verdict{color:var(--fail);font-weight:600}tr[data-verdict=unchecked] td.verdict{color:var(--none)}
.counters{display:flex;flex-wrap:wrap;gap:12px}.counters figure{margin:0}.counters figcaption{font-weight:600}
.counters rect{fill:#54aeff}.counters text{font-size:11px}.counters figure{max-width:370px}
.counters .zeros{color:#6e7781;font-size:11px;margin:2px 0}.counters .idle figcaption{color:var(--fail)}
.note{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 10px}
.finding pre{border-color:var(--fail)}
@media print{body{max-width:none}.timeline,pre{max-height:none;overflow:visible}details.step{break-inside:avoid}}
)";

// Opens every <details> for printing; opens what a link points at (a run
// of the matrix, a step of the drawing or the timeline); scrolls each
// timeline to its first troubled step. Plain ES2017, no external resources.
constexpr std::string_view kScript = R"(
(function(){
  window.addEventListener('beforeprint',function(){document.querySelectorAll('details').forEach(function(d){d.open=true;});});
  document.querySelectorAll('.timeline').forEach(function(box){
    var bad=box.querySelector('.row.fail,.row.error');
    if(bad){box.scrollTop=Math.max(0,bad.getBBox().y-40);}
  });
  function reveal(){var id='';try{id=decodeURIComponent(location.hash.slice(1));}catch(e){return;}
    var t=id&&document.getElementById(id);if(!t)return;var body=t.querySelector(':scope>details.run-body');if(body)body.open=true;
    for(var e=t;e;e=e.parentElement){if(e.tagName==='DETAILS')e.open=true;}t.scrollIntoView();}
  window.addEventListener('hashchange',reveal);reveal();
  var all=document.getElementById('toggle-steps');
  if(all){all.hidden=false;all.addEventListener('click',function(){
    var open=all.dataset.open!=='1';all.dataset.open=open?'1':'0';
    document.querySelectorAll('details.step,details.run-body').forEach(function(d){d.open=open;});
    all.textContent=open?'collapse all steps':'expand all steps';});}
})();
)";

class Page {
 public:
  Page(const SuiteReport& suite, const PageOptions& options) : suite_(suite), options_(options) {}

  std::string render() {
    head();
    if (suite_.runs.size() > 1) matrix();
    for (std::size_t i = 0; i < suite_.runs.size(); ++i) run(i, suite_.runs[i]);
    out_ += "<footer class=\"muted\"><p>Written by rxerun " + html_text(RXERUN_VERSION) + ".</p></footer>\n";
    out_ += "<script>";
    out_ += kScript;
    out_ += ladder_script();
    out_ += "</script>\n</body>\n</html>\n";
    return std::move(out_);
  }

 private:
  void head() {
    std::string title;
    if (suite_.runs.size() == 1)
      title = run_hook(suite_.runs[0]) + ": " + std::string(run_verdict(suite_.runs[0]));
    else
      title = suite_title();
    out_ += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out_ += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out_ += "<meta name=\"generator\" content=\"rxerun " + html_attr(RXERUN_VERSION) + "\">\n";
    out_ += "<title>rxerun: " + html_text(title) + "</title>\n<style>";
    out_ += kCss;
    out_ += ladder_css();
    out_ += "</style>\n</head>\n<body>\n";
    out_ += "<h1>" + html_text(title) + "</h1>\n";
    out_ += "<p><button type=\"button\" id=\"toggle-steps\" hidden>expand all steps</button></p>\n";
  }

  // "suite: 4 runs: 3 passed, 1 failed (exit 1)", as the terminal's summary says it.
  std::string suite_title() const {
    std::map<std::string, int> verdicts;
    for (const auto& r : suite_.runs) ++verdicts[std::string(run_verdict(r))];
    std::string counts;
    for (const char* v : {"passed", "failed", "error", "residue", "interrupted", "not-run"})
      if (verdicts.count(v)) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", verdicts[v], v);
    return fmt::format("suite: {} runs: {} (exit {})", suite_.runs.size(), counts, suite_.exit_code);
  }

  // Scenarios down, kernels across; each cell links to its run.
  void matrix() {
    std::vector<std::string> scenarios, kernels;
    std::map<std::pair<std::string, std::string>, std::size_t> cell;
    for (std::size_t i = 0; i < suite_.runs.size(); ++i) {
      const auto& r = suite_.runs[i];
      const std::string k = where_label(r);
      if (std::find(scenarios.begin(), scenarios.end(), r.scenario) == scenarios.end()) scenarios.push_back(r.scenario);
      if (std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
      cell[{r.scenario, k}] = i;
    }
    out_ += "<h2>Runs</h2>\n<table class=\"matrix\"><thead><tr><th>scenario</th>";
    for (const auto& k : kernels) out_ += "<th>" + html_text(k == "host" ? k : "kernel " + k) + "</th>";
    out_ += "</tr></thead><tbody>\n";
    for (const auto& s : scenarios) {
      out_ += "<tr><th>" + html_text(s) + "</th>";
      for (const auto& k : kernels) {
        auto it = cell.find({s, k});
        if (it == cell.end()) {
          out_ += "<td class=\"muted\">-</td>";
          continue;
        }
        const auto& r = suite_.runs[it->second];
        const auto verdict = run_verdict(r);
        out_ += fmt::format("<td class=\"{}\"><a href=\"#run-{}\">{}</a><br><span class=\"muted\">{:.1f} s</span></td>",
                            verdict_class(verdict), it->second, html_text(verdict), to_seconds(r.duration));
      }
      out_ += "</tr>\n";
    }
    out_ += "</tbody></table>\n";
  }

  void run(std::size_t index, const RunReport& r) {
    const auto verdict = run_verdict(r);
    out_ += fmt::format("<section class=\"run {}\" id=\"run-{}\" data-run=\"{}\">\n", verdict_class(verdict), index,
                        html_attr(run_hook(r)));
    // In a suite, a run that passed starts closed: the matrix says enough of it.
    const bool open = suite_.runs.size() == 1 || verdict != "passed";
    out_ += fmt::format(
        "<details class=\"run-body\"{}><summary><h2>{} <span class=\"badge\">{}</span></h2> <span class=\"muted\">{} "
        "step{} · {:.1f} s · {}</span></summary>\n",
        open ? " open" : "", html_text(run_hook(r)), html_text(verdict), r.steps.size(), r.steps.size() == 1 ? "" : "s",
        to_seconds(r.duration), html_text(where(r)));
    if (!r.description.empty()) out_ += "<p>" + html_text(r.description) + "</p>\n";
    run_facts(r);
    if (!r.error.empty()) out_ += "<p class=\"note\">" + html_text(r.error) + "</p>\n";
    if (const StepReport* bad = first_trouble(r))
      out_ += fmt::format("<p class=\"why\">Stopped at step <a href=\"#{}\">{}</a>.</p>\n", step_anchor(index, *bad),
                          html_text(bad->name));
    drawing(index, r);
    if (!r.steps.empty()) {
      out_ += "<h3>Timeline</h3>\n";
      out_ += render_timeline(r, [&](const StepReport& s) { return "#" + step_anchor(index, s); });
      out_ += "<h3>Steps</h3>\n";
      for (const auto& s : r.steps) step(index, r, s);
    }
    captures(index, r);
    cleanup(r);
    kernel_messages(r);
    out_ += "</details>\n</section>\n";
  }

  static const StepReport* first_trouble(const RunReport& r) {
    for (const auto& s : r.steps)
      if (troubled(s)) return &s;
    return nullptr;
  }

  static std::string step_anchor(std::size_t run, const StepReport& s) {
    return fmt::format("run-{}-step-{}", run, s.index);
  }

  void run_facts(const RunReport& r) {
    std::vector<std::pair<std::string, std::string>> rows;
    rows.push_back({"scenario", r.file});
    rows.push_back({"exit code", std::to_string(r.exit_code)});
    rows.push_back({"where", where(r)});
    if (!r.started_at.empty()) rows.push_back({"started", r.started_at});
    rows.push_back({"duration", fmt::format("{:.2f} s", to_seconds(r.duration))});
    const std::string version = r.host.is_object() && r.host.contains("rxerun") && r.host["rxerun"].is_string()
                                    ? value_text(r.host["rxerun"])
                                    : std::string(RXERUN_VERSION);
    rows.push_back({"rxerun", version});
    if (r.report_version < kReportVersion)
      rows.push_back({"report", fmt::format("version {}: written before reports held each step's start, parameters "
                                            "and expectations and the lab's picture",
                                            r.report_version)});
    out_ += "<table class=\"facts\">\n";
    for (const auto& [k, v] : rows) out_ += "<tr><td>" + html_text(k) + "</td><td>" + html_text(v) + "</td></tr>\n";
    out_ += "</table>\n";
  }

  static std::string where(const RunReport& r) {
    const nlohmann::json& vm = r.vm;
    auto text = [](const nlohmann::json& j, const char* key) {
      return j.is_object() && j.contains(key) && !j[key].is_null() ? value_text(j[key]) : std::string();
    };
    if (vm.is_object() && vm.contains("nodes") && vm["nodes"].is_object()) {
      std::string out = "lab VMs:";
      for (const auto& [name, node] : vm["nodes"].items())
        out += fmt::format(" node {} kernel {} ({}, {}),", name, text(node, "kernel"), text(node, "release"),
                           text(node, "start"));
      out.pop_back();
      return out;
    }
    if (vm.is_object()) {
      std::string out = "lab VM: kernel " + (r.lab_kernel.empty() ? text(vm, "kernel") : r.lab_kernel);
      if (const auto rel = text(vm, "release"); !rel.empty()) out += " (" + rel + ")";
      if (const auto accel = text(vm, "accel"); !accel.empty()) out += ", " + accel;
      if (vm.contains("boot_s") && vm["boot_s"].is_number())
        out +=
            fmt::format(", {} in {:.2f} s", text(vm, "start") == "snapshot" ? "restored from its snapshot" : "booted",
                        vm["boot_s"].get<double>());
      return out;
    }
    const std::string kernel = text(r.host, "kernel");
    return kernel.empty() ? std::string("this machine") : "this machine, kernel " + kernel;
  }

  void drawing(std::size_t index, const RunReport& r) {
    if (r.picture.is_null()) return;
    auto picture = picture_from_json(r.picture);
    if (!picture) {
      out_ += "<p class=\"note\">" + html_text(picture.error().message) + "</p>\n";
      return;
    }
    std::map<std::string, std::string> anchors;
    for (const auto& s : r.steps) anchors[s.name] = "#" + step_anchor(index, s);
    SvgOptions svg_options;
    svg_options.step_link = [&](const std::string& step) {
      auto it = anchors.find(step);
      return it == anchors.end() ? std::string() : it->second;
    };
    svg_options.id_prefix = fmt::format("run-{}-", index);
    auto svg = render_svg(*picture, svg_options);
    if (!svg) {
      out_ += "<p class=\"note\">the lab could not be drawn: " + html_text(svg.error().message) + "</p>\n";
      return;
    }
    const auto start = svg->find("<svg");
    out_ += "<h3>The lab</h3>\n<div class=\"drawing\">" + (start == std::string::npos ? *svg : svg->substr(start)) +
            "</div>\n";
  }

  void step(std::size_t index, const RunReport& r, const StepReport& s) {
    out_ += fmt::format("<details class=\"step {}\" id=\"{}\" data-step=\"{}\"{}>\n", status_class(s.status),
                        step_anchor(index, s), html_attr(s.name), troubled(s) ? " open" : "");
    step_summary(s);
    if (!s.message.empty()) out_ += "<p class=\"why\">" + html_text(s.message) + "</p>\n";
    for (const auto& f : s.failures) out_ += "<p class=\"why\">" + html_text(f) + "</p>\n";
    for (const auto& h : s.hints) out_ += "<p class=\"hint\">" + html_text(h) + "</p>\n";
    expectations(s);
    out_ += render_counters(s);
    findings(r, s);
    step_kernel_messages(r, s);
    params_and_facts(s);
    out_ += "</details>\n";
  }

  void step_summary(const StepReport& s) {
    std::string where;
    if (!s.node.empty()) where += " on node " + s.node;
    if (!s.netns.empty()) where += " in netns " + s.netns;
    std::string extra;
    if (s.attempts > 1) extra += fmt::format(", {} attempts", s.attempts);
    if (s.expected != Outcome::Ok)
      extra += fmt::format(", expected {}, got {}", to_string(s.expected), to_string(s.outcome));
    out_ += fmt::format(
        "<summary><span class=\"badge\">{}</span> <b>{}</b> <span class=\"muted\">{}{} · {:.2f} s{}</span></summary>\n",
        html_text(to_string(s.status)), html_text(s.name), html_text(s.kind), html_text(where), to_seconds(s.duration),
        html_text(extra));
  }

  void expectations(const StepReport& s) {
    if (s.expectations.empty()) return;
    out_ +=
        "<table class=\"expect\"><thead><tr><th>fact</th><th>expected</th><th>value</th><th>verdict</th>"
        "<th></th></tr></thead><tbody>\n";
    for (const auto& e : s.expectations) {
      const std::string value = e.reported ? value_text(e.value) : std::string("(not reported)");
      out_ += fmt::format(
          "<tr data-expect=\"{}\" data-verdict=\"{}\"><td class=\"mono\">{}</td><td class=\"mono\">{}</td>"
          "<td class=\"mono\">{}</td><td class=\"verdict\">{}</td><td class=\"muted\">{}</td></tr>\n",
          html_attr(e.fact), html_attr(e.verdict), html_text(e.fact), html_text(e.matcher), html_text(value),
          html_text(e.verdict), html_text(e.why));
    }
    out_ += "</tbody></table>\n";
  }

  void findings(const RunReport& r, const StepReport& s) {
    for (const auto& f : r.kernel_health.findings)
      if (f.phase == "step" && f.step == s.name) finding(f);
  }

  // The kernel's messages stamped within the step's time on its kernel's
  // clock: of the node that ran it (a pair across two nodes ran on its
  // client's, the last named), else of the run's one kernel.
  void step_kernel_messages(const RunReport& r, const StepReport& s) {
    if (!s.kernel_time) return;
    const nlohmann::json* lines = messages_of(r, s.node.substr(s.node.rfind('+') + 1));
    if (!lines || !lines->is_array()) return;
    std::string during;
    std::size_t n = 0;
    for (const auto& line : *lines) {
      const auto stamp = dmesg_seconds(value_text(line));
      if (!stamp || *stamp < s.kernel_time->first || *stamp > s.kernel_time->second) continue;
      during += html_text(value_text(line)) + "\n";
      ++n;
    }
    if (n == 0) return;
    out_ += fmt::format(
        "<details class=\"kmsg\"{}><summary>kernel messages during the step ({} line{})</summary><pre>{}"
        "</pre></details>\n",
        troubled(s) ? " open" : "", n, n == 1 ? "" : "s", during);
  }

  // What the RDMA stack logged: on `node` in a two-node lab, else the run's.
  static const nlohmann::json* messages_of(const RunReport& r, const std::string& node) {
    if (!node.empty()) {
      if (!r.vm.is_object() || !r.vm.contains("nodes") || !r.vm["nodes"].contains(node)) return nullptr;
      const auto& n = r.vm["nodes"][node];
      return n.is_object() && n.contains("kernel_messages") ? &n["kernel_messages"] : nullptr;
    }
    return r.host.is_object() && r.host.contains("kernel_messages") ? &r.host["kernel_messages"] : nullptr;
  }

  void params_and_facts(const StepReport& s) {
    static const std::set<std::string> kOutputs{"stdout", "stderr"};
    for (const auto& key : kOutputs) {
      if (!s.facts.is_object() || !s.facts.contains(key) || !s.facts[key].is_string()) continue;
      const auto& text = s.facts[key].get_ref<const std::string&>();
      if (text.empty()) continue;
      out_ += "<details><summary>" + html_text(key) + "</summary><pre>" + html_text(text) + "</pre></details>\n";
    }
    if (!s.params.is_null() && !(s.params.is_object() && s.params.empty()))
      out_ += "<details><summary>parameters</summary><pre>" +
              html_text(s.params.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)) + "</pre></details>\n";
    if (!s.facts.is_object() || s.facts.empty()) return;
    out_ += "<details><summary>facts</summary><table class=\"facts\">\n";
    for (const auto& [k, v] : s.facts.items()) {
      if (kOutputs.count(k)) continue;
      out_ += "<tr><td class=\"mono\">" + html_text(k) + "</td><td class=\"mono\">" + html_text(value_text(v)) +
              "</td></tr>\n";
    }
    out_ += "</table></details>\n";
  }

  // Every capture file the run's steps name, once, with its ladder.
  void captures(std::size_t index, const RunReport& r) {
    std::vector<std::pair<std::string, const StepReport*>> files;
    for (const auto& s : r.steps) {
      if (s.kind != "capture" || !s.facts.is_object() || !s.facts.contains("file") || !s.facts["file"].is_string())
        continue;
      const std::string file = s.facts["file"].get<std::string>();
      bool seen = false;
      for (const auto& f : files) seen = seen || f.first == file;
      if (!seen) files.push_back({file, &s});
    }
    for (std::size_t c = 0; c < files.size(); ++c) {
      const auto& [file, s] = files[c];
      out_ += fmt::format("<section class=\"capture\" data-capture=\"{}\">\n", html_attr(file));
      out_ += fmt::format("<h3>Capture <a href=\"#{}\">{}</a>: {}</h3>\n", step_anchor(index, *s), html_text(s->name),
                          html_text(file));
      out_ += ladder_of(r, file, fmt::format("run{}-cap{}", index, c));
      out_ += "</section>\n";
    }
  }

  std::string ladder_of(const RunReport& r, const std::string& file, const std::string& id_prefix) const {
    const auto path = find_capture(r, file);
    if (!path)
      return "<p class=\"note\">" + html_text(file) +
             " is not there any more (looked under the output directory and beside the report): no ladder. Keep "
             "the capture with the report to see its packets here.</p>\n";
    LadderOptions lo;
    lo.id_prefix = id_prefix;
    lo.max_packets = options_.max_packets;
    lo.shown_name = file;
    auto ladder = render_ladder_html(path->string(), lo);
    return ladder ? *ladder
                  : "<p class=\"note\">" + html_text(file) + ": " + html_text(ladder.error().message) + "</p>\n";
  }

  // A lab VM's files come back under the output directory, under a
  // directory per kernel when the suite booted more than one kernel (so that
  // one kernel's capture does not replace another's): looked for there
  // first, then beside it.
  std::optional<std::filesystem::path> find_capture(const RunReport& r, const std::string& file) const {
    std::error_code ec;
    const std::filesystem::path name(file);
    if (name.is_absolute()) return std::filesystem::is_regular_file(name, ec) ? std::optional(name) : std::nullopt;
    std::vector<std::filesystem::path> under;
    for (const auto& dir : options_.capture_dirs) {
      if (!r.lab_kernel.empty() && per_kernel_outputs()) under.push_back(dir / r.lab_kernel);
      under.push_back(dir);
      if (!r.lab_kernel.empty() && !per_kernel_outputs()) under.push_back(dir / r.lab_kernel);
    }
    under.push_back(".");
    for (const auto& dir : under)
      if (std::filesystem::is_regular_file(dir / name, ec)) return dir / name;
    return std::nullopt;
  }

  // Whether the suite ran in lab VMs of more than one kernel.
  bool per_kernel_outputs() const {
    std::set<std::string> kernels;
    for (const auto& r : suite_.runs)
      if (!r.lab_kernel.empty()) kernels.insert(r.lab_kernel);
    return kernels.size() > 1;
  }

  void cleanup(const RunReport& r) {
    for (const CleanupReport* c : {&r.preclean, &r.cleanup}) {
      if (c->undos.empty()) continue;
      const bool clean = c->clean();
      out_ += fmt::format(
          "<details class=\"step {}\"{}><summary><span class=\"badge\">{}</span> <b>{}</b> "
          "<span class=\"muted\">{} undo{}</span></summary>\n<table>\n",
          clean ? "ok" : "fail", clean ? "" : " open", clean ? "clean" : "residue",
          html_text(c->phase.empty() ? (c == &r.preclean ? "preclean" : "cleanup") : c->phase), c->undos.size(),
          c->undos.size() == 1 ? "" : "s");
      for (const auto& u : c->undos)
        out_ += fmt::format("<tr class=\"{}\"><td>{}</td><td>{}</td><td class=\"why\">{}</td></tr>\n",
                            u.ok ? "ok" : "fail", html_text(u.step),
                            html_text(u.covered_by.empty() ? u.summary : u.covered_by), html_text(u.error));
      out_ += "</table></details>\n";
    }
    for (const auto& f : r.kernel_health.findings)
      if (f.phase != "step") finding(f);
  }

  void finding(const KernelFinding& f) {
    out_ += "<div class=\"finding\"><p class=\"why\">kernel health: " + html_text(f.kind) + " " + html_text(f.where()) +
            "</p><pre>";
    for (const auto& line : f.lines) out_ += html_text(line) + "\n";
    out_ += "</pre></div>\n";
  }

  // What the RDMA stack logged during the run (as the terminal shows it after
  // a failure), collapsed; per node in a two-node lab.
  void kernel_messages(const RunReport& r) {
    std::vector<std::string> nodes{""};
    if (r.vm.is_object() && r.vm.contains("nodes") && r.vm["nodes"].is_object())
      for (const auto& [name, node] : r.vm["nodes"].items()) nodes.push_back(name);
    for (const auto& node : nodes) {
      const nlohmann::json* lines = messages_of(r, node);
      if (!lines || !lines->is_array() || lines->empty()) continue;
      out_ +=
          fmt::format("<details class=\"kmsg\"><summary>kernel messages of the RDMA stack{} ({} line{})</summary><pre>",
                      node.empty() ? "" : " on node " + html_text(node), lines->size(), lines->size() == 1 ? "" : "s");
      for (const auto& line : *lines) out_ += html_text(value_text(line)) + "\n";
      out_ += "</pre></details>\n";
    }
  }

  const SuiteReport& suite_;
  const PageOptions& options_;
  std::string out_;
};

}  // namespace

std::string render_report_page(const SuiteReport& suite, const PageOptions& options) {
  return Page(suite, options).render();
}

Result<void> write_report_page(const std::string& path, const SuiteReport& suite, const PageOptions& options) {
  std::string page;
  try {  // a page that cannot be made is an error of the report, never the run's end
    page = render_report_page(suite, options);
  } catch (const std::exception& e) {
    return make_error(fmt::format("cannot write report {}: {}", path, e.what()));
  }
  return write_file_atomic(path, page, "report");
}

int cmd_report(const ReportPageOptions& o) {
  std::ifstream in(o.report, std::ios::binary);
  if (!in) {
    print(stderr, "rxerun: report {}: cannot read it\n", o.report);
    return kExitUsage;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    print(stderr, "rxerun: report {}: not JSON: {}\n", o.report, e.what());
    return kExitUsage;
  }
  auto runs = run_reports_from_json(j);
  if (!runs) {
    print(stderr, "rxerun: report {}: {}\n", o.report, runs.error().message);
    return kExitUsage;
  }
  SuiteReport suite;
  suite.runs = std::move(*runs);
  suite.suite = j.contains("runs");
  const auto code = j.find("exit_code");  // checked for each run; the suite's own may be anything
  suite.exit_code = code != j.end() && code->is_number_integer() ? code->get<int>() : kExitOk;
  PageOptions po;
  if (!o.output_dir.empty()) po.capture_dirs.push_back(o.output_dir);
  po.capture_dirs.push_back(std::filesystem::path(o.report).parent_path());
  if (o.output.empty()) {
    write_out(stdout, render_report_page(suite, po));
    return kExitOk;
  }
  if (auto w = write_report_page(o.output, suite, po); !w) {
    print(stderr, "rxerun: {}\n", w.error().message);
    return kExitEnvironment;
  }
  return kExitOk;
}

}  // namespace rxerun
