#include "fakes/fake_system.h"

namespace rxerun::fakes {

FakeSystem::FakeSystem() {
  modules.known = {
      {"rdma_rxe", {"ib_uverbs", "ib_core"}},
      {"rdma_ucm", {"rdma_cm", "iw_cm", "ib_cm", "ib_uverbs", "ib_core"}},
      {"rdma_cm", {"iw_cm", "ib_cm", "ib_core"}},
      {"iw_cm", {"ib_core"}},
      {"ib_cm", {"ib_core"}},
      {"ib_uverbs", {"ib_core"}},
      {"ib_core", {}},
      {"siw", {"ib_core"}},
      {"configfs", {}},
      {"nvme_core", {}},
      {"nvme_fabrics", {"nvme_core"}},
      {"nvme_rdma", {"nvme_fabrics", "nvme_core", "rdma_cm", "iw_cm", "ib_cm", "ib_core"}},
      {"nvmet", {"configfs", "nvme_core"}},
      {"nvmet_rdma", {"nvmet", "configfs", "nvme_core", "rdma_cm", "iw_cm", "ib_cm", "ib_core"}},
      {"null_blk", {"configfs"}},
      {"target_core_mod", {"configfs"}},
      {"target_core_file", {"target_core_mod", "configfs"}},
      {"target_core_iblock", {"target_core_mod", "configfs"}},
      {"target_core_pscsi", {"target_core_mod", "configfs", "scsi_mod"}},
      {"target_core_user", {"target_core_mod", "configfs", "uio"}},
      {"uio", {}},
      {"ib_srpt", {"target_core_mod", "configfs", "rdma_cm", "iw_cm", "ib_cm", "ib_core"}},
      {"scsi_mod", {}},
      {"scsi_transport_srp", {"scsi_mod"}},
      {"ib_srp", {"scsi_transport_srp", "scsi_mod", "rdma_cm", "iw_cm", "ib_cm", "ib_core"}},
      {"sd_mod", {"scsi_mod"}},
      {"sunrpc", {}},
      {"auth_rpcgss", {"sunrpc"}},
      {"rpcsec_gss_krb5", {"auth_rpcgss", "sunrpc"}},
      {"grace", {}},
      {"lockd", {"grace", "sunrpc"}},
      {"nfsd", {"lockd", "grace", "auth_rpcgss", "sunrpc"}},
      {"nfs", {"lockd", "grace", "sunrpc"}},
      {"nfsv4", {"nfs", "lockd", "grace", "sunrpc"}},
      {"rpcrdma", {"sunrpc", "rdma_cm", "iw_cm", "ib_cm", "ib_core"}},
  };
  modules.known_parameters["null_blk"] = {{"nr_devices", "1"}, {"gb", "250"}};
  kernel_log.release_name = "6.1.0-test-amd64";
}

}  // namespace rxerun::fakes
