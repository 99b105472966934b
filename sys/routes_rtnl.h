#pragma once
#include "sys/routes.h"
namespace rxerun::sys { class RtnlRoutes final : public Routes {}; }
