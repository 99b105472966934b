#pragma once
#include "engine/result.h"
namespace rxerun::sys {
class Tools { public: virtual ~Tools() = default; };
}
