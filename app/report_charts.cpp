#include "app/report_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "app/html.h"
#include "base/utf8.h"

namespace rxerun {

namespace {

bool ran(const StepReport& s) {
  return s.status != StepStatus::Skipped && s.status != StepStatus::NotRun;
}

// A step that leaves something running for later steps: a capture, a
// background exec.
bool leaves_running(const StepReport& s) {
  if (s.kind == "capture") return true;
  if (s.kind != "exec" || !s.params.is_object()) return false;
  const auto it = s.params.find("background");
  return it != s.params.end() && !it->is_null() && *it != false;
}

// The step that ends what `s` left running: a revert or wait naming it.
const StepReport* taken_by(const RunReport& run, const StepReport& s) {
  for (const auto& later : run.steps) {
    if (later.index <= s.index || (later.kind != "revert" && later.kind != "wait")) continue;
    const nlohmann::json& p = later.params;
    const bool names = (p.is_string() && p.get<std::string>() == s.name) ||
                       (p.is_object() && p.contains("step") && p["step"] == s.name);
    if (names) return &later;
  }
  return nullptr;
}

// A round tick step of about a tenth of `total` seconds: 1, 2 or 5 times a power of ten.
double tick_step(double total) {
  const double raw = std::max(total / 8.0, 1e-3);
  const double base = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * base) return m * base;
  return 10.0 * base;
}

struct Span {
  double start = 0, end = 0;
};

// Each step's start and end in seconds: as recorded, or end to end.
std::vector<Span> spans_of(const RunReport& run) {
  std::vector<Span> out;
  double cursor = 0;
  for (const auto& s : run.steps) {
    const double start = s.started ? to_seconds(*s.started) : cursor;
    const double end = start + to_seconds(s.duration);
    out.push_back({start, end});
    if (ran(s)) cursor = end;
  }
  return out;
}

constexpr int kLabel = 190, kPlot = 720, kRight = 150, kRow = 20, kTop = 26;

std::string what_beside(const StepReport& s, double seconds) {
  std::string text = fmt::format("{:.2f} s", seconds);
  if (s.attempts > 1) text += fmt::format(", {} attempts", s.attempts);
  if (s.expected != Outcome::Ok && s.outcome == s.expected)
    text += fmt::format(", {} as expected", to_string(s.outcome));
  if (!ran(s)) text = std::string(to_string(s.status));
  return text;
}

// One device's chart: a bar per counter that moved, scaled to the largest;
// the counters that stayed at zero named in one line under it, and a device
// on which nothing moved said so in words.
std::string counter_chart(const std::string& device, const std::vector<std::pair<std::string, long long>>& counters) {
  constexpr int kName = 150, kBars = 140, kValue = 70, kLine = 15;
  std::vector<std::pair<std::string, long long>> moved;
  std::string zeros;
  long long most = 1;
  for (const auto& c : counters) {
    if (c.second == 0) {
      zeros += (zeros.empty() ? "" : ", ") + c.first;
      continue;
    }
    moved.push_back(c);
    most = std::max(most, c.second);
  }
  std::string out = fmt::format("<figure data-device=\"{}\"{}><figcaption>{}</figcaption>", html_attr(device),
                                moved.empty() ? " class=\"idle\"" : "", html_text(device));
  if (moved.empty()) out += "<p class=\"why\">nothing counted</p>";
  const int height = static_cast<int>(moved.size()) * kLine + 4;
  if (!moved.empty())
    out += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">", kName + kBars + kValue,
                       height);
  for (std::size_t i = 0; i < moved.size(); ++i) {
    const auto& [name, n] = moved[i];
    const int y = static_cast<int>(i) * kLine;
    const double w = std::max(1.5, static_cast<double>(std::max(n, 0LL)) / static_cast<double>(most) * kBars);
    out += fmt::format(
        "<text x=\"0\" y=\"{}\">{}</text><rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\"/>"
        "<text x=\"{:.1f}\" y=\"{}\">{}</text>",
        y + 11, html_text(excerpt(name, 24)), kName, y + 2, w, kLine - 4, kName + w + 4, y + 11, n);
  }
  if (!moved.empty()) out += "</svg>";
  if (!zeros.empty()) out += "<p class=\"zeros\">0: " + html_text(zeros) + "</p>";
  out += "</figure>\n";
  return out;
}

}  // namespace

std::string_view status_class(StepStatus s) {
  switch (s) {
    case StepStatus::Passed: return "ok";
    case StepStatus::Flaky: return "flaky";
    case StepStatus::Failed: return "fail";
    case StepStatus::Error:
    case StepStatus::Interrupted: return "error";
    default: return "none";
  }
}

std::string render_timeline(const RunReport& run, const std::function<std::string(const StepReport&)>& href) {
  const auto spans = spans_of(run);
  double total = to_seconds(run.duration);
  for (const auto& sp : spans) total = std::max(total, sp.end);
  if (total <= 0) total = 1;
  const double scale = kPlot / total;
  const int height = kTop + static_cast<int>(run.steps.size()) * kRow + 6;
  std::string out = fmt::format(
      "<div class=\"timeline\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"timeline of the steps\">\n",
      kLabel + kPlot + kRight, height, kLabel + kPlot + kRight, height);
  const double tick = tick_step(total);
  for (double t = 0; t <= total + 1e-9; t += tick) {
    const double x = kLabel + t * scale;
    out +=
        fmt::format("<line class=\"axis\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"/>", x, kTop - 6, x, height);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g} s</text>\n", x, kTop - 10, t);
  }
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    const StepReport& s = run.steps[i];
    const int y = kTop + static_cast<int>(i) * kRow;
    const double x = kLabel + spans[i].start * scale;
    const double w = std::max(2.0, (spans[i].end - spans[i].start) * scale);
    const bool expected_failure = s.expected != Outcome::Ok && s.outcome == s.expected;
    out += fmt::format("<g class=\"row {}{}\"><a href=\"{}\"><text x=\"4\" y=\"{}\">{}</text>", status_class(s.status),
                       expected_failure ? " expected" : "", html_attr(href(s)), y + 14, html_text(excerpt(s.name, 28)));
    if (ran(s)) {
      out += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" rx=\"2\"><title>{}: {}, {}</title>"
          "</rect>",
          x, y + 3, w, kRow - 6, html_text(s.name), html_text(to_string(s.status)),
          html_text(what_beside(s, spans[i].end - spans[i].start)));
      if (leaves_running(s)) {
        const StepReport* until = taken_by(run, s);
        const double end = until ? spans[static_cast<std::size_t>(until - run.steps.data())].end : total;
        out += fmt::format(
            "<line class=\"span\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\"><title>{} runs until "
            "{}</title></line>",
            x + w, y + kRow / 2, kLabel + end * scale, y + kRow / 2, html_text(s.name),
            until ? "step " + html_text(until->name) : std::string("the run's end"));
      }
    }
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"muted\">{}</text></a></g>\n",
                       ran(s) ? x + w + 4 : static_cast<double>(kLabel + 4), y + 14,
                       html_text(what_beside(s, spans[i].end - spans[i].start)));
  }
  out += "</svg></div>\n";
  return out;
}

std::string render_counters(const StepReport& step) {
  if (!step.facts.is_object()) return {};
  std::map<std::string, std::vector<std::pair<std::string, long long>>> devices;
  for (const auto& [key, value] : step.facts.items()) {
    const auto dot = key.find('.');
    if (dot == std::string::npos || dot == 0 || key.find('.', dot + 1) != std::string::npos) continue;
    if (!value.is_number_integer()) continue;
    devices[key.substr(0, dot)].push_back({key.substr(dot + 1), value.get<long long>()});
  }
  if (devices.empty()) return {};
  std::string out = "<h4>Counters during the step</h4>\n<div class=\"counters\">\n";
  for (const auto& [device, counters] : devices) out += counter_chart(device, counters);
  out += "</div>\n";
  return out;
}

}  // namespace rxerun
