#include "steps/kinds.h"

namespace rxerun::steps {

// Sorted by name; the Registry rejects duplicates at start-up.
std::vector<Kind> all_kinds() {
  return {
      revert_kind(),
      sleep_kind(),
  };
}

}  // namespace rxerun::steps
