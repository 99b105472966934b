#include "app/node_steps.h"

#include <fmt/format.h>

#include <map>

#include "base/strings.h"
#include "engine/nodes.h"
#include "engine/runner.h"

namespace rxerun {

Result<std::string> node_for(const StepSpec& step, const std::vector<std::string>& nodes, const Scenario& scenario) {
  // A pair across two nodes runs on its client's node (the last end), which
  // starts the server's tool on the other.
  if (nodes.size() > 1) {
    if (step.kind != "rping" && step.kind != "perftest" && step.kind != "verbs")
      return make_error(fmt::format(
          "step '{}' has its ends on nodes {}: across two nodes, rping, perftest and verbs run their ends there; "
          "{} does not: run both ends on one node, or use exec steps in the background on each node",
          step.name, join(nodes, " and "), step.kind));
    return nodes.back();
  }
  if (nodes.empty()) return scenario.nodes.front().name;
  return nodes.front();
}

namespace {

StepReport error_report(StepReport sr, std::string message) {
  sr.status = StepStatus::Error;
  sr.outcome = Outcome::Error;
  sr.message = std::move(message);
  return sr;
}

// What the agent of `node` answered to step `sr`, as the step's report.
StepReport read_answer(StepReport sr, const std::string& node, const std::string& ran_by,
                       const Result<vm::ControlChannel::Received>& got, NodeLinks& links) {
  if (got && got->stopped) {
    sr.status = StepStatus::Interrupted;
    sr.failures = {"interrupted"};
    return sr;
  }
  if (got && got->message && got->message->contains("step_report")) {
    auto read = step_report_from_json((*got->message)["step_report"]);
    if (!read) return error_report(sr, "node " + node + " sent a report rxerun cannot read: " + read.error().message);
    read->node = ran_by;
    return std::move(*read);
  }
  if (got && got->message && got->message->contains("failed"))
    return error_report(sr, "node " + node + ": " + (*got->message)["failed"].dump());
  // The channel closed or broke: the node's lab VM is gone. Its console
  // says why.
  return error_report(sr, "node " + node + " died during the step: " + links.gone_because(node));
}

}  // namespace

void run_node_steps(const Scenario& scenario, const Registry& registry, NodeLinks& links, Reporter& reporter,
                    const std::function<bool()>& interrupted, bool stop, RunReport& report,
                    std::chrono::steady_clock::time_point run_start) {
  std::map<std::string, nlohmann::json> facts;  // by step name, from every node
  std::map<std::string, std::string> ran_on;    // step name -> the node that ran it
  for (const auto& step : scenario.steps) {
    StepReport sr = step_report_for(step);
    const auto ends = step_nodes(step, registry.find(step.kind));
    if (stop || interrupted()) {
      sr = Runner::not_reached(step, interrupted());
    } else if (auto where = node_for(step, ends, scenario); !where) {
      sr = error_report(sr, where.error().message);
    } else {
      // Which node ran it: a pair across two nodes names both, server first ("a+b").
      const std::string ran_by = ends.size() > 1 ? join(ends, "+") : *where;
      sr.node = ran_by;
      reporter.step_started(step);
      const auto started = std::chrono::steady_clock::now() - run_start;
      nlohmann::json elsewhere = nlohmann::json::object();
      for (const auto& [name, f] : facts)
        if (ran_on[name] != *where) elsewhere[name] = f;
      const auto got = links.ask(*where, {{"step", step.name}, {"facts", elsewhere}});
      sr = read_answer(std::move(sr), *where, ran_by, got, links);
      sr.started = std::chrono::duration_cast<Duration>(started);
      ran_on[step.name] = *where;
    }
    facts[step.name] = sr.facts;
    if (sr.status == StepStatus::Interrupted) report.interrupted = true;
    if (Runner::stops_run(sr.status)) stop = true;
    reporter.step_finished(sr);
    report.steps.push_back(std::move(sr));
  }
}

}  // namespace rxerun
