// The vocabulary of sys/verbs.h, apart from the real check (verbs_real.cpp),
// so that code that only names operations does not need libibverbs.

#include "sys/verbs.h"

namespace rxerun::sys {

std::string to_string(VerbsOp op) {
  switch (op) {
    case VerbsOp::Send: return "send";
    case VerbsOp::Write: return "write";
    case VerbsOp::Read: return "read";
  }
  return "?";
}

}  // namespace rxerun::sys
