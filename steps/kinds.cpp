#include "steps/kinds.h"

namespace rxerun::steps {

// Sorted by name; the Registry rejects duplicates at start-up.
std::vector<Kind> all_kinds() {
  return {
      address_kind(),
      block_kind(),
      counters_kind(),
      gid_kind(),
      link_kind(),
      netem_kind(),
      netns_kind(),
      offload_kind(),
      ping_kind(),
      port_kind(),
      revert_kind(),
      rxe_kind(),
      sleep_kind(),
      sysctl_kind(),
      veth_kind(),
  };
}

}  // namespace rxerun::steps
