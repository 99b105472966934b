#pragma once
// `rxerun graph SCENARIO`: the lab the scenario builds (engine/picture.h),
// drawn as SVG by Graphviz's own library (libgvc and libcgraph, the dot
// layout): namespaces as clusters, interfaces in them with their addresses,
// each veth pair as a wire, RDMA devices on their netdevs, faults and
// captures on what they act on. The scenario is loaded and checked as
// `validate` does; nothing runs and nothing on the host is touched.

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

// The picture as an SVG document. Each element's SVG id (and the <title>
// Graphviz writes for it) is its picture_id(); a namespace's cluster is
// "cluster_" followed by it.
Result<std::string> render_svg(const LabPicture& picture);

int cmd_graph(const GraphOptions& options, Registry& registry);

}  // namespace rxerun
