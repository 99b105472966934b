#pragma once
#include "sys/verbs.h"
namespace rxerun::fakes { class FakeVerbs final : public sys::Verbs {}; }
