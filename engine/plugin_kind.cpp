#include "engine/plugin_kind.h"

#include <memory>
#include <utility>

#include "engine/step.h"

namespace rxerun {

namespace {

class PluginParams final : public sdk::Params {
 public:
  explicit PluginParams(const rxerun::Params& p) : p_(p) {}
  const nlohmann::json& raw() const override { return p_.raw(); }
  bool has(std::string_view key) const override { return p_.has(key); }
  std::string str(std::string_view key) const override { return p_.str(key); }
  long long integer(std::string_view key) const override { return p_.integer(key); }
  bool flag(std::string_view key) const override { return p_.flag(key); }
  Duration duration(std::string_view key) const override { return p_.duration(key); }
  std::uint64_t size(std::string_view key) const override { return p_.size(key); }
  std::string where(std::string_view key) const override { return p_.where(key); }

 private:
  const rxerun::Params& p_;
};

class PluginStepContext final : public sdk::StepContext {
 public:
  explicit PluginStepContext(rxerun::StepContext& ctx) : ctx_(ctx), netns_(ctx.step().netns.value_or("")) {}
  const std::string& scenario() const override { return ctx_.scenario(); }
  const std::string& step() const override { return ctx_.step().name; }
  const std::string& netns() const override { return netns_; }
  std::chrono::steady_clock::time_point deadline() const override { return ctx_.deadline(); }
  Result<void> will_change(nlohmann::json args, std::string summary) override {
    return ctx_.will_change(std::move(args), std::move(summary), ctx_.in_netns());
  }
  Result<void> identify(nlohmann::json identity) override { return ctx_.identify(std::move(identity)); }
  const nlohmann::json* facts_of(const std::string& step) const override { return ctx_.facts_of(step); }
  Result<std::string> output_path(const std::string& file) const override {
    auto out = ctx_.output_path(file);
    if (!out) return out.error();
    return out->path;
  }
  WaitStatus sleep_for(Duration d) override { return ctx_.sleep_for(d); }
  bool interrupted() const override { return ctx_.sys().interrupt.requested(); }

 private:
  rxerun::StepContext& ctx_;
  std::string netns_;
};

class PluginUndoContext final : public sdk::UndoContext {
 public:
  explicit PluginUndoContext(rxerun::UndoContext& ctx) : ctx_(ctx), step_(ctx.step()), netns_(ctx.netns()) {}
  const std::string& scenario() const override { return ctx_.scenario(); }
  const std::string& step() const override { return step_; }
  const std::string& netns() const override { return netns_; }

 private:
  rxerun::UndoContext& ctx_;
  std::string step_;
  std::string netns_;
};

}  // namespace

Kind plugin_kind(sdk::Kind kind, std::string plugin) {
  Kind k;
  k.spec = std::move(kind.spec);
  k.plugin = std::move(plugin);
  if (kind.run)
    k.run = [run = std::move(kind.run)](const rxerun::Params& params, rxerun::StepContext& ctx) {
      const PluginParams p(params);
      PluginStepContext c(ctx);
      return run(p, c);
    };
  if (kind.undo)
    k.undo = [undo = std::move(kind.undo)](const nlohmann::json& args, rxerun::UndoContext& ctx) {
      PluginUndoContext c(ctx);
      return undo(args, c);
    };
  return k;
}

}  // namespace rxerun
