#pragma once
// rxerun plugin SDK. A duration, as scenarios write them ("500ms", "5s") once
// the loader has read them: milliseconds.

#include <chrono>

namespace rxerun {

using Duration = std::chrono::milliseconds;

}  // namespace rxerun
