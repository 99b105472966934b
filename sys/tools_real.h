#pragma once
#include "sys/tools.h"
namespace rxerun::sys { class RealTools final : public Tools {}; }
