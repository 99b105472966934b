#pragma once
#include "engine/result.h"
namespace rxerun::sys {
class Routes { public: virtual ~Routes() = default; };
}
