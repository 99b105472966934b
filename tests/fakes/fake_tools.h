#pragma once
#include "sys/tools.h"
namespace rxerun::fakes { class FakeTools final : public sys::Tools {}; }
