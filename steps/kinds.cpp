#include "steps/kinds.h"

namespace rxerun::steps {

// Sorted by name; the Registry rejects duplicates at start-up.
std::vector<Kind> all_kinds() {
  return {
      address_kind(),      block_kind(),     capture_kind(), counters_kind(), exec_kind(),      gid_kind(),
      link_kind(),         module_kind(),    netem_kind(),   netns_kind(),    nfs_mount_kind(), nfsd_kind(),
      nvme_connect_kind(), nvmet_kind(),     offload_kind(), perftest_kind(), ping_kind(),      port_kind(),
      revert_kind(),       route_kind(),     rping_kind(),   rule_kind(),     rxe_kind(),       siw_kind(),
      sleep_kind(),        srp_login_kind(), srpt_kind(),    sysctl_kind(),   verbs_kind(),     veth_kind(),
      wait_kind(),
  };
}

}  // namespace rxerun::steps
