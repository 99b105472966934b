#pragma once
#include "sys/tools.h"
namespace rxerun::sys { class ActionLog;
class RecordingTools final : public Tools { public: explicit RecordingTools(ActionLog&) {} }; }
