#include "engine/picture.h"

#include <algorithm>

#include "engine/model.h"
#include "engine/registry.h"
#include "engine/step.h"

namespace rxerun {

PictureNamespace& LabPicture::add_namespace(const PicturePlace& place, const std::string& step) {
  for (auto& ns : namespaces)
    if (ns.place == place) {
      if (ns.step.empty()) ns.step = step;
      return ns;
    }
  namespaces.push_back({place, step});
  return namespaces.back();
}

PictureInterface& LabPicture::add_interface(const PicturePlace& place, const std::string& name) {
  add_namespace(place);
  for (auto& i : interfaces)
    if (i.place == place && i.name == name) return i;
  interfaces.push_back({.place = place, .name = name});
  return interfaces.back();
}

void LabPicture::add_fault(PictureFault fault) {
  if (fault.dev.empty())
    add_namespace(fault.place);
  else
    add_interface(fault.place, fault.dev);
  faults.push_back(std::move(fault));
}

void LabPicture::lift(const std::string& target, const std::string& by) {
  for (auto& f : faults)
    if (f.step == target && f.lifted_by.empty()) f.lifted_by = by;
}

const PictureNamespace* LabPicture::find_namespace(const PicturePlace& place) const {
  auto it = std::find_if(namespaces.begin(), namespaces.end(), [&](const auto& ns) { return ns.place == place; });
  return it == namespaces.end() ? nullptr : &*it;
}

const PictureInterface* LabPicture::find_interface(const PicturePlace& place, const std::string& name) const {
  auto it = std::find_if(interfaces.begin(), interfaces.end(),
                         [&](const auto& i) { return i.place == place && i.name == name; });
  return it == interfaces.end() ? nullptr : &*it;
}

PicturePlace place_of(const StepSpec& step) {
  return {step.node.value_or(""), step.netns.value_or("")};
}

std::string picture_text(const nlohmann::json& value) {
  return value.is_null() ? "" : scalar_text(value);
}

std::string picture_param(const nlohmann::json& params, const std::string& key) {
  if (!params.is_object() || !params.contains(key)) return "";
  return picture_text(params.at(key));
}

std::string picture_id(const PicturePlace& place) {
  const std::string ns = place.netns.empty() ? "host" : "netns/" + place.netns;
  return place.node.empty() ? ns : "node/" + place.node + "/" + ns;
}

std::string picture_id(const PictureNode& n) {
  return "node/" + n.name;
}

std::string interface_id(const PicturePlace& place, const std::string& name) {
  return picture_id(place) + "/" + name;
}

std::string picture_id(const PictureInterface& i) {
  return interface_id(i.place, i.name);
}

// RDMA device names are global to a machine (not to a namespace).
std::string picture_id(const PictureDevice& d) {
  return (d.place.node.empty() ? "" : "node/" + d.place.node + "/") + "rdma/" + d.name;
}

std::string picture_id(const PictureFault& f) {
  return f.kind + "/" + f.step;
}

// A wire between nodes joins NICs of their own namespaces: NODE/NIC says it.
std::string picture_id(const PictureLink& l) {
  if (l.kind == "wire") return "wire/" + l.a_place.node + "/" + l.a + "--" + l.b_place.node + "/" + l.b;
  return l.kind + "/" + interface_id(l.a_place, l.a) + "--" + interface_id(l.b_place, l.b);
}

LabPicture picture_of(const Scenario& scenario, const Registry& registry) {
  LabPicture picture;
  picture.title = scenario.name;
  if (scenario.nodes.empty()) picture.add_namespace({});
  for (const auto& n : scenario.nodes) {
    picture.nodes.push_back({n.name, n.kernel.value_or(scenario.vm_kernel.value_or(""))});
    picture.add_namespace({n.name, ""});
  }
  for (const auto& w : scenario.wires) {
    const PicturePlace a{w.a.node, ""}, b{w.b.node, ""};
    picture.add_interface(a, w.a.nic).kind = "wire";
    picture.add_interface(b, w.b.nic).kind = "wire";
    picture.links.push_back(
        {.kind = "wire", .a_place = a, .a = w.a.nic, .b_place = b, .b = w.b.nic, .details = {w.a.mac, w.b.mac}});
  }
  for (const auto& step : scenario.steps) {
    const Kind* kind = registry.find(step.kind);
    if (kind && kind->picture) kind->picture(step.params, step, picture);
  }
  return picture;
}

// ---- as JSON ---------------------------------------------------------------

// Each struct's fields under their own names; a key a reader lacks stays
// the field's default (the _WITH_DEFAULT form), so an older picture reads.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PicturePlace, node, netns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PictureNamespace, place, step)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PictureInterface, place, name, kind, addresses, mtu, routes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PictureLink, kind, step, a_place, a, b_place, b, details)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PictureNode, name, kernel)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PictureDevice, type, name, place, netdev, step)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PictureFault, kind, step, place, dev, details, lifted_by)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LabPicture, title, nodes, namespaces, interfaces, links, devices,
                                                faults)

nlohmann::json picture_json(const LabPicture& picture) {
  return picture;
}

Result<LabPicture> picture_from_json(const nlohmann::json& j) {
  try {
    return j.get<LabPicture>();
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("the report's picture of the lab is not what rxerun writes: ") + e.what());
  }
}

}  // namespace rxerun
