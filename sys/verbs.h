#pragma once
#include "engine/result.h"
namespace rxerun::sys {
class Verbs { public: virtual ~Verbs() = default; };
}
