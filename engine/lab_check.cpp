#include "engine/lab_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "base/utf8.h"
#include "engine/fact_names.h"
#include "engine/vars.h"

namespace rxerun {

namespace {

// "a sleep", "an exec", "an nvmet": the article as the kind's name is said.
std::string a_kind(const std::string& kind) {
  return (!kind.empty() && std::string_view("aeiouAEIOU").find(kind.front()) != std::string_view::npos ? "an " : "a ") +
         kind;
}

// Where an interface lives: a namespace ("" rxerun's own) of a machine
// ("" the one machine of a scenario without nodes).
struct Place {
  std::string node;
  std::string netns;
  auto operator<=>(const Place&) const = default;
};

std::string place_words(const Place& p) {
  std::string s = p.netns.empty() ? "rxerun's own namespace" : fmt::format("namespace '{}'", p.netns);
  return p.node.empty() ? s : fmt::format("{} of node '{}'", s, p.node);
}

// A namespace, interface or RDMA device the walk has seen made.
struct Thing {
  std::string made_by;     // the step that made it
  std::string removed_by;  // the step after which it is gone; "" while it is there
  std::string type;        // RDMA device: "rxe", "siw"
  Place place;             // its namespace (an RDMA device: the one of its netdev)
  std::string over;        // RDMA device: the interface under it
};

struct StepState {
  bool background = false;
  std::string ended_by;     // the wait or revert that ended it in the background
  std::string reverted_by;  // the revert of it
};

// A parameter's value at a dotted path ("server.dev"); null when absent.
const nlohmann::json* at_path(const nlohmann::json& params, const std::string& path) {
  const nlohmann::json* v = &params;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto dot = std::min(path.find('.', start), path.size());
    const std::string key = path.substr(start, dot - start);
    if (!v->is_object() || !v->contains(key)) return nullptr;
    v = &(*v)[key];
    start = dot + 1;
  }
  return v->is_null() ? nullptr : v;
}

// The names a parameter gives, each with its path ("devs.1"): a string, or
// each string of a list; a value still holding {{...}} names nothing that
// can be known before the run.
std::vector<std::pair<std::string, std::string>> names_at(const nlohmann::json& params, const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  const nlohmann::json* v = path.empty() ? nullptr : at_path(params, path);
  if (!v) return out;
  auto take = [&](const nlohmann::json& item, const std::string& item_path) {
    if (item.is_string() && item.get<std::string>().find("{{") == std::string::npos)
      out.emplace_back(item.get<std::string>(), item_path);
  };
  if (v->is_array())
    for (std::size_t i = 0; i < v->size(); ++i) take((*v)[i], path + "." + std::to_string(i));
  else
    take(*v, path);
  return out;
}

std::string text_at(const nlohmann::json& params, const std::string& path) {
  const auto names = names_at(params, path);
  return names.empty() ? "" : names.front().first;
}

class LabWalk {
 public:
  LabWalk(const Scenario& scenario, const Registry& registry, const LabSite& site)
      : scenario_(scenario), registry_(registry), site_(site) {
    for (const auto& n : scenario.nodes) nodes_.push_back(n.name);
    for (const auto& w : scenario.wires)
      for (const WireEnd* end : {&w.a, &w.b}) wire_nics_.insert({end->node, end->nic});
  }

  Diagnostics run() {
    for (const auto& step : scenario_.steps) note_makes(step);
    for (const auto& step : scenario_.steps) walk(step);
    std::stable_sort(problems_.begin(), problems_.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::tie(a.file, a.mark.line, a.mark.col) < std::tie(b.file, b.mark.line, b.mark.col);
    });
    return std::move(problems_);
  }

 private:
  const Scenario& scenario_;
  const Registry& registry_;
  const LabSite& site_;
  std::vector<std::string> nodes_;
  std::set<std::pair<std::string, std::string>> wire_nics_;  // (node, NIC)
  std::map<Place, Thing> namespaces_;
  std::map<std::pair<Place, std::string>, Thing> interfaces_;
  std::map<std::pair<std::string, std::string>, Thing> devices_;  // (node, name): one name per machine
  std::map<std::string, StepState> states_;
  // Every object some step makes: (object, node, namespace, name) -> the
  // first step that makes it, so that a use before it can say so.
  std::map<std::tuple<LabObject, std::string, std::string, std::string>, std::string> makers_;
  Diagnostics problems_;
  const StepSpec* current_ = nullptr;

  // A problem of the step being walked, in the file that step is written in
  // (an included one, perhaps); the same one twice is said once.
  void error(Mark where, std::string message) {
    Diagnostic d{current_ ? scenario_.file_of(*current_) : scenario_.file, where, std::move(message)};
    for (const auto& p : problems_)
      if (p.file == d.file && p.message == d.message) return;
    problems_.push_back(std::move(d));
  }

  const StepSpec* find(const std::string& name) const { return scenario_.find_step(name); }
  const Kind* kind_of(const StepSpec& step) const { return registry_.find(step.kind); }

  bool closed_world(const Place& p) const {
    if (site_.lab_vm || !scenario_.nodes.empty()) return true;
    return !p.netns.empty() && namespaces_.count(p) > 0;  // a namespace the lab made itself
  }

  void walk(const StepSpec& step) {
    current_ = &step;
    const Kind* kind = kind_of(step);
    if (!kind) return;  // a plugin's kind that could not be loaded: checked as it could be
    check_netns_key(step, kind->spec);
    if (kind->spec.facts_of_target)
      walk_revert(step);
    else if (kind->spec.ends_background)
      walk_wait(step);
    else
      walk_objects(step, kind->spec);
    check_kernels(step, kind->spec);
    if (!kind->spec.facts_of_target)
      check_expectations(step, kind->spec, step.params, step_moment(kind->spec, step.params));
    check_references(step);
    if (!kind->spec.background.empty() && step_moment(kind->spec, step.params) == kAtStart)
      states_[step.name].background = true;
  }

  // --- namespaces, interfaces, devices ---------------------------------

  // Where each object of a step's kind lives, for every name it gives.
  template <typename Fn>
  void each_object(const StepSpec& step, const KindSpec& kind, Fn&& fn) const {
    for (const auto& o : kind.objects) {
      if (!o.unless_param.empty() && text_at(step.params, o.unless_param) == o.unless_value) continue;
      Place place = step_place(step);
      if (!o.node_param.empty())
        if (auto n = text_at(step.params, o.node_param); !n.empty()) place.node = n;
      if (!o.netns_param.empty())
        if (auto n = text_at(step.params, o.netns_param); !n.empty()) place.netns = n;
      for (const auto& [name, path] : names_at(step.params, o.param)) fn(o, place, name, step.mark_of(path));
    }
  }

  void note_makes(const StepSpec& step) {
    const Kind* kind = kind_of(step);
    if (!kind) return;
    each_object(step, kind->spec, [&](const LabObjectSpec& o, const Place& place, const std::string& name, Mark) {
      if (o.effect != LabEffect::Makes) return;
      const bool machine_wide = o.object != LabObject::Interface;  // a namespace's or device's name is the machine's
      makers_.try_emplace({o.object, place.node, machine_wide ? "" : place.netns, name}, step.name);
    });
  }

  // The later step that makes it, when one does: then the use comes too early.
  std::optional<std::string> made_later(LabObject object, const Place& place, const std::string& name) const {
    const bool machine_wide = object != LabObject::Interface;
    auto it = makers_.find({object, place.node, machine_wide ? "" : place.netns, name});
    if (it == makers_.end()) return std::nullopt;
    return it->second;
  }

  bool too_early(Mark where, LabObject object, const Place& place, const std::string& name, const std::string& what) {
    const auto maker = made_later(object, place, name);
    if (!maker) return false;
    error(where,
          fmt::format("{} '{}' is used before it exists: step '{}' makes it later", what, excerpt(name), *maker));
    return true;
  }

  Place step_place(const StepSpec& step) const { return {step.node.value_or(""), step.netns.value_or("")}; }

  void check_netns_key(const StepSpec& step, const KindSpec& kind) {
    if (!step.netns) return;
    if (!kind.takes_netns) {
      error(step.mark_of("@netns"), fmt::format("'netns' means nothing to {} step: it works on the machine as a "
                                                "whole (configfs), which no network namespace divides; leave it out",
                                                a_kind(kind.name)));
      return;
    }
    use_netns(step, step_place(step), step.mark_of("@netns"));
  }

  // Whether the namespace is there, or may be (the host's); an error when not.
  bool use_netns(const StepSpec& step, const Place& p, Mark where) {
    if (p.netns.empty()) return true;
    auto it = namespaces_.find(p);
    if (it != namespaces_.end()) {
      if (it->second.removed_by.empty()) return true;
      error(where, fmt::format("{} is gone: step '{}' removed it before step '{}'", place_words(p),
                               it->second.removed_by, step.name));
      return false;
    }
    if (too_early(where, LabObject::Netns, p, p.netns, "namespace")) return false;
    if (!closed_world(p)) return true;
    error(where, fmt::format("{} does not exist: no earlier step makes it (a `netns` step does){}", place_words(p),
                             site_.lab_vm ? ", and the lab VM has no other" : ""));
    return false;
  }

  void walk_objects(const StepSpec& step, const KindSpec& kind) {
    each_object(step, kind, [&](const LabObjectSpec& o, const Place& place, const std::string& name, Mark where) {
      if (o.object == LabObject::Netns) {
        const Place ns{place.node, name};
        if (o.effect == LabEffect::Makes)
          make(namespaces_, ns, step, where, fmt::format("namespace '{}'", name), Thing{.place = ns});
        else
          use_netns(step, ns, where);
      } else if (o.effect == LabEffect::Makes && o.object == LabObject::Interface) {
        if (!use_netns(step, place, where)) return;
        make(interfaces_, {place, name}, step, where, fmt::format("interface '{}' in {}", name, place_words(place)),
             Thing{.place = place});
      } else if (o.effect == LabEffect::Makes) {
        make(devices_, {place.node, name}, step, where, fmt::format("RDMA device '{}'", name),
             Thing{.type = o.device_type, .place = place, .over = text_at(step.params, o.over_param)});
      } else {
        use_object(step, o, place, name, where);
      }
    });
  }

  template <typename Key>
  void make(std::map<Key, Thing>& things, const Key& key, const StepSpec& step, Mark where, const std::string& what,
            Thing thing) {
    auto it = things.find(key);
    if (it != things.end() && it->second.removed_by.empty()) {
      if (same_step(it->second.made_by, step)) return;  // made again as it is: the kind finds it (changed: false)
      error(where, fmt::format("{} is made twice: step '{}' made it already{}", what, it->second.made_by,
                               what.rfind("RDMA", 0) == 0 ? " (RDMA device names are one per machine, across "
                                                            "namespaces)"
                                                          : ""));
      return;
    }
    thing.made_by = step.name;
    things[key] = std::move(thing);
  }

  // Whether the step `earlier` is `step` written again: same kind, same
  // parameters, same place.
  bool same_step(const std::string& earlier, const StepSpec& step) const {
    const StepSpec* e = find(earlier);
    return e && e->kind == step.kind && e->params == step.params && e->netns == step.netns && e->node == step.node;
  }

  void use_object(const StepSpec& step, const LabObjectSpec& o, const Place& place, const std::string& name,
                  Mark where) {
    const bool as_device = o.either || o.object == LabObject::RdmaDevice;
    const bool as_interface = o.either || o.object == LabObject::Interface;
    const auto device = as_device ? devices_.find({place.node, name}) : devices_.end();
    if (device != devices_.end() && device->second.removed_by.empty()) return;
    if (as_interface) {
      if (!use_netns(step, place, where)) return;  // said already
      if (auto it = interfaces_.find({place, name}); it != interfaces_.end()) {
        if (!it->second.removed_by.empty()) gone(step, where, "interface", name, it->second);
        return;
      }
      if (name == "lo" || (place.netns.empty() && wire_nics_.count({place.node, name}))) return;
    }
    if (device != devices_.end()) return gone(step, where, "RDMA device", name, device->second);
    if (as_device && too_early(where, LabObject::RdmaDevice, place, name, "RDMA device")) return;
    if (as_interface && too_early(where, LabObject::Interface, place, name, "interface")) return;
    // What the lab does not make may be the host's, except where nothing
    // else exists.
    if (!closed_world(as_interface ? place : Place{place.node, ""})) return;
    const std::string what = o.either ? "interface or RDMA device" : as_device ? "RDMA device" : "interface";
    error(where, fmt::format("no {} '{}' {}: no earlier step makes it{}", what, excerpt(name),
                             as_interface ? "in " + place_words(place) : "on this machine",
                             near_names(name, as_device, as_interface, place)));
  }

  bool known_interface(const Place& place, const std::string& name) const {
    auto it = interfaces_.find({place, name});
    return it != interfaces_.end() && it->second.removed_by.empty();
  }

  std::string near_names(const std::string& name, bool devices, bool interfaces, const Place& place) const {
    std::vector<std::string> names;
    if (devices)
      for (const auto& [key, t] : devices_)
        if (key.first == place.node && t.removed_by.empty()) names.push_back(key.second);
    if (interfaces)
      for (const auto& [key, t] : interfaces_)
        if (key.first == place && t.removed_by.empty()) names.push_back(key.second);
    return did_you_mean(name, names);
  }

  void gone(const StepSpec& step, Mark where, const char* what, const std::string& name, const Thing& t) {
    error(where, fmt::format("{} '{}' is gone: step '{}' removed it before step '{}'", what, excerpt(name),
                             t.removed_by, step.name));
  }

  // --- revert and wait --------------------------------------------------

  void walk_revert(const StepSpec& step) {
    if (!step.params.is_string()) return;
    const std::string target_name = step.params.get<std::string>();
    const StepSpec* target = find(target_name);
    const Kind* kind = target ? kind_of(*target) : nullptr;
    if (!kind) return;
    const Mark where = step.mark_of("step");
    auto& state = states_[target_name];
    if (!state.reverted_by.empty()) {
      error(where,
            fmt::format("step '{}' is reverted twice: step '{}' reverted it already", target_name, state.reverted_by));
      return;
    }
    if (!has_undo(*target, *kind)) {
      error(where, fmt::format("step '{}' has nothing to undo: {} step{} changes nothing", target_name,
                               a_kind(target->kind), undo_condition(kind->spec)));
      return;
    }
    state.reverted_by = step.name;
    if (state.background && state.ended_by.empty()) state.ended_by = step.name;
    remove_made_by(target_name, step.name);
    check_expectations(step, kind->spec, target->params, revert_moment(kind->spec, target->params));
  }

  bool has_undo(const StepSpec& target, const Kind& kind) const {
    if (!kind.undo) return false;
    if (kind.spec.undo_with.empty()) return true;
    return std::any_of(kind.spec.undo_with.begin(), kind.spec.undo_with.end(), [&](const std::string& p) {
      const nlohmann::json* v = at_path(target.params, p);
      return v && !(v->is_boolean() && !v->get<bool>());
    });
  }

  static std::string undo_condition(const KindSpec& kind) {
    if (kind.undo_with.empty()) return "";
    std::string words;
    for (const auto& p : kind.undo_with) words += (words.empty() ? "" : " or ") + fmt::format("`{}`", p);
    return " without " + words;
  }

  // What `target` made is gone after `by`: a namespace with everything in
  // it, an interface with the RDMA devices over it and the other end of
  // its pair.
  void remove_made_by(const std::string& target, const std::string& by) {
    std::set<Place> namespaces;
    for (auto& [place, t] : namespaces_)
      if (t.made_by == target && t.removed_by.empty()) {
        t.removed_by = by;
        namespaces.insert(place);
      }
    std::set<std::pair<Place, std::string>> gone_ifs;
    for (auto& [key, t] : interfaces_)
      if (t.removed_by.empty() && (t.made_by == target || namespaces.count(key.first))) gone_ifs.insert(key);
    // A veth pair goes as a whole: the other end too, wherever it is.
    std::set<std::string> pair_steps;
    for (const auto& key : gone_ifs) pair_steps.insert(interfaces_[key].made_by);
    for (auto& [key, t] : interfaces_)
      if (t.removed_by.empty() && pair_steps.count(t.made_by)) gone_ifs.insert(key);
    for (const auto& key : gone_ifs) interfaces_[key].removed_by = by;
    for (auto& [key, t] : devices_)
      if (t.removed_by.empty() &&
          (t.made_by == target || namespaces.count(t.place) || gone_ifs.count({t.place, t.over})))
        t.removed_by = by;
  }

  void walk_wait(const StepSpec& step) {
    if (!step.params.is_string()) return;
    const std::string target_name = step.params.get<std::string>();
    const StepSpec* target = find(target_name);
    if (!target) return;
    const Mark where = step.mark_of("step");
    auto& state = states_[target_name];
    if (!state.background) {
      error(where, fmt::format("step '{}' does not run in the background, so there is nothing to wait for: wait "
                               "is for an exec with `background: true` (a foreground step has ended when the next "
                               "begins)",
                               target_name));
      return;
    }
    if (!state.ended_by.empty()) {
      error(where, fmt::format("step '{}' has ended already: step '{}' {} it", target_name, state.ended_by,
                               state.ended_by == state.reverted_by ? "reverted" : "waited for"));
      return;
    }
    state.ended_by = step.name;
  }

  // --- kernels ----------------------------------------------------------

  void check_kernels(const StepSpec& step, const KindSpec& kind) {
    if (step.expect.outcome != Outcome::Ok || step.netns.value_or("").empty()) return;
    for (const auto& o : kind.objects) {
      if (o.effect != LabEffect::Makes || o.object != LabObject::RdmaDevice || o.device_type != "rxe") continue;
      for (const auto& kernel : kernels_of(step))
        if (kernel_has_rxe_netns(kernel) == false)
          error(step.mark_of("@netns"),
                fmt::format("rxe in namespace '{}' cannot talk on kernel {}: before Linux 7.1 rxe's UDP 4791 socket "
                            "lives only in the initial namespace; run the lab on a 7.x kernel (vm: {{kernel: "
                            "\"7.3\"}}), or keep rxe in rxerun's own namespace with a forced wire",
                            *step.netns, kernel));
    }
  }

  std::vector<std::string> kernels_of(const StepSpec& step) const {
    if (step.node)
      if (const NodeSpec* n = scenario_.find_node(*step.node); n && n->kernel) return {*n->kernel};
    return site_.kernels;
  }

  // --- facts ------------------------------------------------------------

  void check_expectations(const StepSpec& step, const KindSpec& kind, const nlohmann::json& params, unsigned moment) {
    // A background program that ends before it is ready fails its step,
    // which then reports its end.
    if (moment == kAtStart && step.expect.outcome != Outcome::Ok) moment |= kAtEnd;
    for (const auto& e : step.expect.facts) {
      std::string why;
      auto match = match_fact(kind, params, moment, e.fact, nodes_, &why);
      if (!match) {
        if (moment & kAtStart) why += fmt::format("; its end is reported by a `wait: {}` step", step.name);
        error(e.mark, fmt::format("expectation on {}: {}", step.name, why));
      } else if (match->counter) {
        check_counter(step, *match->counter, e.mark);
      }
    }
  }

  // A DEV.COUNTER fact: the device is one the lab has here, and has that counter.
  void check_counter(const StepSpec& step, const CounterFact& c, Mark where) {
    const std::string node = c.node.empty() ? step.node.value_or("") : c.node;
    std::vector<std::string> rdma = rxe_counter_names();
    rdma.insert(rdma.end(), port_counter_names().begin(), port_counter_names().end());
    const bool rdma_counter = std::find(rdma.begin(), rdma.end(), c.counter) != rdma.end();
    if (auto it = devices_.find({node, c.dev}); it != devices_.end() && it->second.removed_by.empty()) {
      if (it->second.type == "siw")
        error(where, fmt::format("'{}' is a siw device, which keeps no counters", c.dev));
      else if (!rdma_counter)
        error(where, fmt::format("'{}' is an RDMA device: its counters are {}", c.dev, fmt::join(rdma, ", ")));
      return;
    }
    for (const auto& [key, t] : interfaces_)
      if (key.first.node == node && key.second == c.dev && t.removed_by.empty()) {
        if (rdma_counter)
          error(where, fmt::format("'{}' is an interface: its counters are {}", c.dev,
                                   fmt::join(netdev_counter_names(), ", ")));
        return;
      }
    if (!site_.lab_vm && scenario_.nodes.empty()) return;  // the host's own device, perhaps
    if (c.dev == "lo" || wire_nics_.count({node, c.dev})) return;
    std::vector<std::string> names;
    for (const auto& [key, t] : devices_)
      if (key.first == node && t.removed_by.empty()) names.push_back(key.second);
    for (const auto& [key, t] : interfaces_)
      if (key.first.node == node && t.removed_by.empty()) names.push_back(key.second);
    error(where, fmt::format("no device '{}' in the lab at step '{}'{}", excerpt(c.dev), step.name,
                             did_you_mean(c.dev, names)));
  }

  // {{steps.X.FACT}} in the step's parameters: a fact X reports.
  void check_references(const StepSpec& step) { check_references_in(step, step.params, ""); }

  void check_references_in(const StepSpec& step, const nlohmann::json& value, const std::string& path) {
    if (value.is_object()) {
      for (const auto& [key, v] : value.items()) check_references_in(step, v, path.empty() ? key : path + "." + key);
    } else if (value.is_array()) {
      for (const auto& v : value) check_references_in(step, v, path);
    } else if (value.is_string()) {
      for (const auto& ref : step_references(value.get<std::string>())) check_reference(step, ref, path);
    }
  }

  void check_reference(const StepSpec& step, const StepReference& ref, const std::string& path) {
    const StepSpec* source = find(ref.step);
    if (!source) return;  // the loader said so
    const Kind* kind = kind_of(*source);
    if (!kind) return;
    const nlohmann::json* params = &source->params;
    unsigned moment = step_moment(kind->spec, *params);
    if (kind->spec.facts_of_target) {
      const StepSpec* target = source->params.is_string() ? find(source->params.get<std::string>()) : nullptr;
      kind = target ? kind_of(*target) : nullptr;
      if (!kind) return;
      params = &target->params;
      moment = revert_moment(kind->spec, *params);
    }
    std::string why;
    if (!match_fact(kind->spec, *params, moment, ref.fact, nodes_, &why))
      error(step.mark_of(path), fmt::format("{{{{steps.{}.{}}}}}: {}", ref.step, excerpt(ref.fact), why));
  }
};

// "6.1", "7.3.4+deb13-amd64", "6.12.38" -> (major, minor).
std::optional<std::pair<int, int>> version_of(const std::string& text) {
  int major = 0, minor = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  auto r = std::from_chars(p, end, major);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != '.') return std::nullopt;
  auto r2 = std::from_chars(r.ptr + 1, end, minor);
  if (r2.ec != std::errc()) return std::nullopt;
  return std::pair{major, minor};
}

}  // namespace

std::optional<bool> kernel_has_rxe_netns(const std::string& kernel) {
  const auto v = version_of(kernel);
  if (!v) return std::nullopt;
  return *v >= std::pair{7, 1};
}

LabSite scenario_site(const Scenario& scenario) {
  LabSite site;
  site.lab_vm = scenario.vm_kernel || !scenario.vm_kernels.empty() || !scenario.nodes.empty();
  if (!scenario.vm_kernels.empty())
    site.kernels = scenario.vm_kernels;
  else if (scenario.vm_kernel)
    site.kernels = {*scenario.vm_kernel};
  return site;
}

Diagnostics check_lab(const Scenario& scenario, const Registry& registry, const LabSite& site) {
  return LabWalk(scenario, registry, site).run();
}

}  // namespace rxerun
