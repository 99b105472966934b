#pragma once
// The ONE explicit list of step kinds this binary knows. app/main.cpp hands
// it to the engine; nothing registers itself (a static library's linker
// would drop self-registration).

#include <vector>

#include "engine/kind.h"

namespace rxerun::steps {

std::vector<Kind> all_kinds();

// One function per kind, each in its own file under steps/.
Kind address_kind();
Kind block_kind();
Kind capture_kind();
Kind counters_kind();
Kind exec_kind();
Kind gid_kind();
Kind link_kind();
Kind module_kind();
Kind netem_kind();
Kind netns_kind();
Kind nvme_connect_kind();
Kind nvmet_kind();
Kind offload_kind();
Kind perftest_kind();
Kind ping_kind();
Kind port_kind();
Kind revert_kind();
Kind route_kind();
Kind rping_kind();
Kind rule_kind();
Kind rxe_kind();
Kind siw_kind();
Kind sleep_kind();
Kind nfs_mount_kind();
Kind nfsd_kind();
Kind srp_login_kind();
Kind srpt_kind();
Kind sysctl_kind();
Kind verbs_kind();
Kind wait_kind();
Kind veth_kind();

}  // namespace rxerun::steps
