#pragma once
#include "sys/routes.h"
namespace rxerun::sys { class ActionLog;
class RecordingRoutes final : public Routes { public: explicit RecordingRoutes(ActionLog&) {} }; }
