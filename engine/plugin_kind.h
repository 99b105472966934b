#pragma once
// A plugin's step kind (rxerun/plugin.h) as the engine runs it: its run and
// undo see the SDK's narrow Params, StepContext and UndoContext, which
// forward to the engine's own.

#include <string>

#include "engine/kind.h"
#include "rxerun/plugin.h"

namespace rxerun {

// `plugin` is the plugin file's absolute path: journaled with every change
// the kind makes, so that a later cleanup can load it.
Kind plugin_kind(sdk::Kind kind, std::string plugin);

}  // namespace rxerun
