#include "sys/storage.h"

namespace rxerun::sys {

std::string null_blk_dir(const std::string& name) {
  return std::string(kConfigfsPath) + "/nullb/" + name;
}

}  // namespace rxerun::sys
