#pragma once
#include "sys/verbs.h"
namespace rxerun::sys { class ActionLog;
class RecordingVerbs final : public Verbs { public: explicit RecordingVerbs(ActionLog&) {} }; }
