#include "app/graph.h"

#include <gvc.h>

#include <map>
#include <memory>
#include <string_view>

#include "base/files.h"
#include "base/output.h"
#include "base/utf8.h"
#include "engine/exit_code.h"

namespace rxerun {

namespace {

// libcgraph takes char* where it only reads.
char* graph_cstr(const std::string& s) {
  return const_cast<char*>(s.c_str());
}

void graph_set(void* obj, const char* name, const std::string& value) {
  static char empty[] = "";
  agsafeset(obj, const_cast<char*>(name), graph_cstr(value), empty);
}

// An HTML-like label: its text is XML, never read for Graphviz's escapes
// (\N, \n), so any name shows as it is.
void graph_set_html(Agraph_t* g, void* obj, const std::string& html) {
  static char empty[] = "";
  char* s = agstrdup_html(g, graph_cstr(html));
  agsafeset(obj, const_cast<char*>("label"), s, empty);
  agstrfree(g, s);
}

// A label of a bold first line and smaller lines under it.
std::string graph_label(const std::string& head, const std::vector<std::string>& lines) {
  std::string html = "<B>" + xml_escape(head, false) + "</B>";
  for (const auto& l : lines) html += "<BR/><FONT POINT-SIZE=\"9\">" + xml_escape(l, false) + "</FONT>";
  return html;
}

// The drawing under construction: the graph, and the cluster of each place.
class Drawing {
 public:
  Drawing(const LabPicture& picture, const SvgOptions& options) : picture_(picture), options_(options) {
    graph_ = agopen(graph_cstr(picture.title.empty() ? std::string("lab") : picture.title), Agundirected, nullptr);
    graph_set(graph_, "rankdir", "LR");
    graph_set(graph_, "fontname", "Helvetica");
    graph_set(graph_, "fontsize", "12");
    graph_set(graph_, "labelloc", "t");
    graph_set(graph_, "nodesep", "0.3");
    graph_set(graph_, "id", svg_id("lab"));
    graph_set_html(graph_, graph_, "<B>" + xml_escape(picture.title, false) + "</B>");
    agattr(graph_, AGNODE, const_cast<char*>("fontname"), const_cast<char*>("Helvetica"));
    agattr(graph_, AGNODE, const_cast<char*>("fontsize"), const_cast<char*>("11"));
    agattr(graph_, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
    agattr(graph_, AGNODE, const_cast<char*>("style"), const_cast<char*>("rounded,filled"));
    agattr(graph_, AGNODE, const_cast<char*>("fillcolor"), const_cast<char*>("white"));
    agattr(graph_, AGEDGE, const_cast<char*>("fontname"), const_cast<char*>("Helvetica"));
    agattr(graph_, AGEDGE, const_cast<char*>("fontsize"), const_cast<char*>("9"));
  }
  ~Drawing() {
    if (graph_) agclose(graph_);
  }
  Drawing(const Drawing&) = delete;
  Drawing& operator=(const Drawing&) = delete;

  Agraph_t* graph() { return graph_; }

  void draw() {
    for (const auto& ns : picture_.namespaces) draw_namespace(ns);
    for (const auto& i : picture_.interfaces) draw_interface(i);
    for (const auto& d : picture_.devices) draw_device(d);
    for (const auto& f : picture_.faults) draw_fault(f);
    for (const auto& l : picture_.links) draw_link(l);
  }

 private:
  bool lives_in(const PicturePlace& place) const {
    for (const auto& i : picture_.interfaces)
      if (i.place == place) return true;
    for (const auto& d : picture_.devices)
      if (d.place == place) return true;
    for (const auto& f : picture_.faults)
      if (f.place == place) return true;
    return false;
  }

  // The cluster of a machine of a two-node scenario; the graph itself for
  // the one machine of any other.
  Agraph_t* machine(const std::string& node) {
    if (node.empty()) return graph_;
    auto [it, added] = machines_.try_emplace(node, nullptr);
    if (added) {
      const PictureNode* spec = find_node(node);
      const std::string id = spec ? picture_id(*spec) : "node/" + node;
      it->second = agsubg(graph_, graph_cstr("cluster_" + id), 1);
      graph_set(it->second, "id", svg_id(id));
      graph_set(it->second, "style", "rounded,bold");
      graph_set(it->second, "color", "#404040");
      graph_set(it->second, "fontname", "Helvetica");
      graph_set(it->second, "fontsize", "12");
      const std::string kernel = spec && !spec->kernel.empty() ? "kernel " + spec->kernel : "the newest kernel";
      graph_set_html(graph_, it->second, graph_label(node, {"lab VM, " + kernel}));
    }
    return it->second;
  }

  const PictureNode* find_node(const std::string& name) const {
    for (const auto& n : picture_.nodes)
      if (n.name == name) return &n;
    return nullptr;
  }

  // The namespaces of a machine (a node, or the one machine of a scenario
  // without nodes).
  std::size_t namespaces_of(const std::string& node) const {
    std::size_t n = 0;
    for (const auto& ns : picture_.namespaces) n += ns.place.node == node ? 1 : 0;
    return n;
  }

  // rxerun's own namespace (of a node) is drawn when something lives there,
  // or when it is all there is; every namespace a step makes is drawn, empty
  // or not.
  void draw_namespace(const PictureNamespace& ns) {
    const bool own = ns.place.netns.empty();
    const bool occupied = lives_in(ns.place);
    if (own && !occupied && namespaces_of(ns.place.node) > 1) return;
    const std::string id = picture_id(ns.place);
    Agraph_t* c = agsubg(machine(ns.place.node), graph_cstr("cluster_" + id), 1);
    graph_set(c, "id", svg_id(id));
    link_to_step(c, ns.step);
    graph_set(c, "style", "rounded,filled");
    graph_set(c, "fillcolor", own ? "#f2f2f2" : "#e8f0fb");
    graph_set(c, "color", own ? "#9a9a9a" : "#6f8fbf");
    graph_set(c, "fontname", "Helvetica");
    graph_set(c, "fontsize", "11");
    // In a node, "its own" is the lab VM's initial namespace, not the host's.
    const std::string own_title = ns.place.node.empty() ? "host" : "node " + ns.place.node;
    const std::string own_line = ns.place.node.empty() ? "rxerun's own namespace" : "its initial namespace";
    graph_set_html(graph_, c, own ? graph_label(own_title, {own_line}) : graph_label("netns " + ns.place.netns, {}));
    clusters_.push_back({ns.place, c});
    if (!occupied) {
      Agnode_t* n = node(ns.place, id + "/empty");
      graph_set(n, "shape", "plaintext");
      graph_set(n, "style", "");
      graph_set_html(graph_, n, "<I>(empty)</I>");
    }
  }

  Agraph_t* cluster(const PicturePlace& place) {
    for (const auto& [p, c] : clusters_)
      if (p == place) return c;
    return machine(place.node);  // not drawn: never the case for a place something lives in
  }

  Agnode_t* node(const PicturePlace& place, const std::string& id) {
    Agnode_t* n = agnode(cluster(place), graph_cstr(id), 1);
    graph_set(n, "id", svg_id(id));
    return n;
  }

  Agnode_t* find(const std::string& id) { return agnode(graph_, graph_cstr(id), 0); }

  Agedge_t* edge(Agnode_t* a, Agnode_t* b, const std::string& id) {
    Agedge_t* e = agedge(graph_, a, b, graph_cstr(id), 1);
    graph_set(e, "id", svg_id(id));
    return e;
  }

  void draw_interface(const PictureInterface& i) {
    std::vector<std::string> lines = i.addresses;
    if (!i.mtu.empty()) lines.push_back("mtu " + i.mtu);
    for (const auto& r : i.routes) lines.push_back(r);
    Agnode_t* n = node(i.place, picture_id(i));
    graph_set_html(graph_, n, graph_label(i.name, lines));
    if (i.kind.empty()) {
      graph_set(n, "style", "rounded,dashed");
      graph_set(n, "tooltip", i.name + ": not made by the scenario");
    } else {
      graph_set(n, "tooltip", i.name + ": " + i.kind);
    }
    link_to_step(n, made_by(i));
  }

  // The step that made an interface: the one that made its veth pair.
  std::string made_by(const PictureInterface& i) const {
    for (const auto& l : picture_.links)
      if ((l.a_place == i.place && l.a == i.name) || (l.b_place == i.place && l.b == i.name)) return l.step;
    return {};
  }

  void draw_device(const PictureDevice& d) {
    const std::string id = picture_id(d);
    Agnode_t* n = node(d.place, id);
    link_to_step(n, d.step);
    graph_set(n, "shape", "box3d");
    graph_set(n, "style", "filled");
    graph_set(n, "fillcolor", "#ffe8c2");
    graph_set(n, "tooltip", d.name + ": " + d.type + " device over " + d.netdev);
    graph_set_html(graph_, n, graph_label(d.name, {d.type}));
    if (Agnode_t* netdev = find(interface_id(d.place, d.netdev))) {
      Agedge_t* e = edge(n, netdev, id + "--" + interface_id(d.place, d.netdev));
      link_to_step(e, d.step);  // else it would take its netdev's link
      graph_set(e, "style", "dashed");
      graph_set(e, "color", "#c07a00");
    }
  }

  void draw_fault(const PictureFault& f) {
    const std::string id = picture_id(f);
    Agnode_t* n = node(f.place, id);
    std::vector<std::string> lines = f.details;
    if (!f.lifted_by.empty()) lines.push_back("until step " + f.lifted_by);
    const bool capture = f.kind == "capture";
    link_to_step(n, f.step);
    graph_set(n, "shape", capture ? "cds" : "note");
    graph_set(n, "style", "filled");
    graph_set(n, "fillcolor", capture ? "#dcf2dc" : f.kind == "netem" ? "#fff1b0" : "#ffd4d4");
    graph_set(n, "tooltip", f.kind + " (step " + f.step + ")");
    graph_set_html(graph_, n, graph_label(f.kind + " " + f.step, lines));
    if (f.dev.empty()) return;
    if (Agnode_t* dev = find(interface_id(f.place, f.dev))) {
      Agedge_t* e = edge(n, dev, id + "--" + interface_id(f.place, f.dev));
      link_to_step(e, f.step);
      graph_set(e, "style", "dotted");
      graph_set(e, "color", capture ? "#2e8b2e" : "#c03030");
    }
  }

  void draw_link(const PictureLink& l) {
    Agnode_t* a = find(interface_id(l.a_place, l.a));
    Agnode_t* b = find(interface_id(l.b_place, l.b));
    if (!a || !b) return;
    Agedge_t* e = edge(a, b, picture_id(l));
    link_to_step(e, l.step);
    const bool wire = l.kind == "wire";
    graph_set(e, "penwidth", wire ? "3" : "2.5");
    graph_set(e, "color", wire ? "#2b2b2b" : "#1f5fbf");
    std::string label = xml_escape(l.kind, false);
    for (const auto& d : l.details) label += "<BR/>" + xml_escape(d, false);
    graph_set_html(graph_, e, label);
    const std::string a_name = l.a_place.node.empty() ? l.a : l.a_place.node + " " + l.a;
    const std::string b_name = l.b_place.node.empty() ? l.b : l.b_place.node + " " + l.b;
    graph_set(e, "tooltip", l.kind + " " + a_name + " -- " + b_name);
  }

  std::string svg_id(const std::string& id) const { return options_.id_prefix + id; }

  // On a page, what a step made links to the step.
  void link_to_step(void* obj, const std::string& step) {
    if (step.empty() || !options_.step_link) return;
    if (const std::string href = options_.step_link(step); !href.empty()) graph_set(obj, "href", href);
  }

  const LabPicture& picture_;
  const SvgOptions& options_;
  Agraph_t* graph_ = nullptr;
  std::map<std::string, Agraph_t*> machines_;
  std::vector<std::pair<PicturePlace, Agraph_t*>> clusters_;
};

}  // namespace

Result<std::string> render_svg(const LabPicture& picture, const SvgOptions& options) {
  // Warnings would go to stderr; errors are what counts.
  agseterr(AGERR);
  std::unique_ptr<GVC_t, int (*)(GVC_t*)> gvc(gvContext(), gvFreeContext);
  if (!gvc) return make_error("Graphviz: cannot make a context");
  Drawing drawing(picture, options);
  drawing.draw();
  if (gvLayout(gvc.get(), drawing.graph(), "dot") != 0)
    return make_error("Graphviz: the dot layout failed (is libgvc's dot plugin installed? `dot -c` registers it)");
  char* data = nullptr;
  unsigned int length = 0;
  const int rendered = gvRenderData(gvc.get(), drawing.graph(), "svg", &data, &length);
  std::string svg = rendered == 0 && data ? std::string(data, length) : std::string();
  if (data) gvFreeRenderData(data);
  gvFreeLayout(gvc.get(), drawing.graph());
  if (rendered != 0 || svg.empty())
    return make_error("Graphviz: cannot render SVG (is libgvc's core plugin installed?)");
  return svg;
}

int cmd_graph(const GraphOptions& options, Registry& registry) {
  auto scenario = load(options.scenario, registry, options.common);
  if (!scenario) return kExitUsage;
  auto svg = render_svg(picture_of(*scenario, registry));
  if (!svg) {
    print(stderr, "rxerun: graph: {}\n", svg.error().message);
    return kExitEnvironment;
  }
  if (options.output.empty()) {
    write_out(stdout, *svg);
    return kExitOk;
  }
  if (auto w = write_file_atomic(options.output, *svg, "graph"); !w) {
    print(stderr, "rxerun: {}\n", w.error().message);
    return kExitEnvironment;
  }
  return kExitOk;
}

}  // namespace rxerun
