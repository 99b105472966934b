#pragma once
#include "sys/routes.h"
namespace rxerun::fakes { class FakeRoutes final : public sys::Routes {}; }
