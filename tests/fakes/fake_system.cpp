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
  };
  modules.known_parameters["null_blk"] = {{"nr_devices", "1"}, {"gb", "250"}};
  kernel_log.release_name = "6.1.0-test-amd64";
}

}  // namespace rxerun::fakes
