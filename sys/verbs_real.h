#pragma once
#include "sys/verbs.h"
namespace rxerun::sys { class RealVerbs final : public Verbs {}; }
