#pragma once
// Result<T> and Error live in base/ (the vocabulary every layer uses); this
// header keeps the engine's and the layers' existing includes working.
#include "base/result.h"
