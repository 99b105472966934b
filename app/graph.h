#pragma once
// `rxerun graph SCENARIO`: the lab the scenario builds (engine/picture.h),
// drawn as SVG by Graphviz's own library (libgvc and libcgraph, the dot
// layout): namespaces as clusters, interfaces in them with their addresses,
// each veth pair as a wire, RDMA devices on their netdevs, faults and
// captures on what they act on. The scenario is loaded and checked as
// `validate` does; nothing runs and nothing on the host is touched.

#include <functional>
#include <string>

#include "app/run.h"
#include "base/result.h"
#include "engine/picture.h"
#include "engine/registry.h"

namespace rxerun {

struct GraphOptions {
  std::string scenario;
  CommonOptions common;
  std::string output;  // -o FILE; "" for stdout
};

// How the drawing is made for a page (app/report_page.h) rather than alone.
struct SvgOptions {
  std::string id_prefix;  // before every SVG id: several drawings on one page
  // The link of what a step made (a namespace, a veth and its two
  // interfaces, a device, a fault) to that step; "" for none. Unset: no links.
  std::function<std::string(const std::string& step)> step_link;
};

// The picture as an SVG document. Each element's SVG id is its picture_id()
// (after options.id_prefix), and the <title> Graphviz writes for it is the
// picture_id(); a namespace's cluster is "cluster_" followed by it.
Result<std::string> render_svg(const LabPicture& picture, const SvgOptions& options = {});

int cmd_graph(const GraphOptions& options, Registry& registry);

}  // namespace rxerun
