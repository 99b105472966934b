#include "fakes/fake_kinds.h"

#include <csignal>
#include <stdexcept>

#include "engine/step.h"
#include "fakes/fake_system.h"
#include "steps/kinds.h"

namespace rxerun::fakes {

namespace {

Kind change_kind(FakeWorld& w, const std::string& name, const std::vector<FactSpec>& facts) {
  KindSpec spec;
  spec.name = name;
  spec.summary = "test: a change with an inverse";
  spec.params = {{.name = "id", .type = ParamType::String, .required = true}};
  spec.facts = facts;
  auto run = [&w, name](const Params& p, StepContext& ctx) {
    auto id = p.str("id");
    if (auto r = ctx.will_change({{"id", id}}, "undo " + id); !r) return StepResult::error(r.error());
    w.log.push_back("do " + id);
    return name == "fault" ? StepResult::ok({{"packets", 0}}) : StepResult::ok({{"changed", 1}});
  };
  auto undo = [&w, name](const nlohmann::json& args, UndoContext& uctx) -> Result<nlohmann::json> {
    auto id = args.at("id").get<std::string>();
    auto* model_ns = dynamic_cast<sys::ModelNetns*>(&uctx.sys().netns);
    w.netns_at_undo = model_ns ? model_ns->current() : "?";
    if (w.fail_undo.count(id)) return make_error("cannot undo " + id, EBUSY);
    if (w.throw_undo.count(id)) (void)args.at("missing").get<std::string>();
    w.log.push_back("undo " + id);
    if (w.interrupt_undo.count(id)) uctx.sys().interrupt.request(SIGINT);
    if (name == "fault") return nlohmann::json{{"packets", w.packets}};
    return nlohmann::json::object();
  };
  return Kind{std::move(spec), run, undo};
}

Kind check_kind(FakeWorld& w) {
  KindSpec spec;
  spec.name = "check";
  spec.summary = "test: reports an outcome and facts";
  spec.params = {
      {.name = "outcome",
       .type = ParamType::Enum,
       .default_value = "ok",
       .choices = {"ok", "fail", "timeout", "error"}},
      {.name = "value", .type = ParamType::Int, .default_value = 0},
      {.name = "pass_on_attempt", .type = ParamType::Int, .default_value = 1},
  };
  spec.facts = {{"value", ""}, {"attempt", ""}, {"text", ""}};
  auto run = [&w](const Params& p, StepContext& ctx) {
    int attempt = ++w.attempts[ctx.step().name];
    w.log.push_back("check " + ctx.step().name);
    nlohmann::json facts = {{"value", p.integer("value")}, {"attempt", attempt}, {"text", w.text}};
    if (attempt < p.integer("pass_on_attempt")) return StepResult::fail("not yet", facts);
    auto o = p.str("outcome");
    if (o == "fail") return StepResult::fail("told to fail", facts);
    if (o == "timeout") return StepResult::timeout("told to time out", facts);
    if (o == "error") return StepResult::error("told to err");
    return StepResult::ok(facts);
  };
  return Kind{std::move(spec), run, {}};
}

Kind batch_kind(FakeWorld& w) {
  Kind k = change_kind(w, "batch", {{"changed", ""}});
  k.undo_batch = [&w](const std::vector<nlohmann::json>& args, UndoContext&) -> Result<void> {
    std::string entry = "batch undo";
    for (const auto& a : args) {
      auto id = a.at("id").get<std::string>();
      if (w.fail_undo.count(id)) return make_error("batch refused because of " + id);
      if (w.throw_undo.count(id)) (void)a.at("missing").get<std::string>();
      entry += " " + id;
    }
    w.log.push_back(entry);
    return {};
  };
  return k;
}

Kind marked_kind(FakeWorld& w) {
  KindSpec spec;
  spec.name = "marked";
  spec.summary = "test: owns marked leftovers";
  auto run = [](const Params&, StepContext&) { return StepResult::ok(); };
  Kind k{std::move(spec), run, {}};
  k.preclean = [&w](UndoContext& uctx) -> Result<std::vector<std::string>> {
    if (w.throw_preclean) throw std::runtime_error("preclean exploded");
    auto* ns = dynamic_cast<sys::ModelNetns*>(&uctx.sys().netns);
    auto& left = w.leftovers[ns ? ns->current() : ""];
    std::vector<std::string> removed;
    for (const auto& l : left) removed.push_back("removed " + l + " (" + mark_for(uctx.scenario()) + ")");
    left.clear();
    return removed;
  };
  return k;
}

Kind explode_kind(FakeWorld& w) {
  Kind k = change_kind(w, "explode", {});
  auto run = [](const Params& p, StepContext& ctx) -> StepResult {
    if (auto r = ctx.will_change({{"id", p.str("id")}}, "undo " + p.str("id")); !r) return StepResult::error(r.error());
    throw std::runtime_error("exploded after its change");
  };
  k.run = run;
  return k;
}

Kind interrupt_kind(FakeWorld& w) {
  KindSpec spec;
  spec.name = "interrupt";
  spec.summary = "test: Ctrl-C arrives while this step runs";
  auto run = [&w](const Params&, StepContext& ctx) {
    w.log.push_back("interrupt");
    ctx.sys().interrupt.request(SIGINT);
    return StepResult::ok();
  };
  return Kind{std::move(spec), run, {}};
}

}  // namespace

Registry fake_registry(FakeWorld& world) {
  return Registry({
      change_kind(world, "change", {{"changed", ""}}),
      change_kind(world, "fault", {{"packets", ""}}),
      check_kind(world),
      explode_kind(world),
      interrupt_kind(world),
      batch_kind(world),
      marked_kind(world),
      steps::sleep_kind(),
      steps::revert_kind(),
  });
}

}  // namespace rxerun::fakes
