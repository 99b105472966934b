#pragma once
// Plugins: shared objects with step kinds of their own (rxerun/plugin.h),
// loaded from --plugin PATH, a scenario's `plugins:`, and the journal of a
// run that used them (so that cleanup can undo what their kinds made).

#include <string>

#include "base/result.h"
#include "engine/journal.h"
#include "engine/registry.h"

namespace rxerun {

// A --plugin argument as an absolute path (relative to the current directory).
std::string plugin_argument_path(const std::string& given);

// Loads the plugin at `path` (absolute) and adds its kinds to the registry;
// a file loaded before (by this path or another one) is not loaded again.
// An error's message is whole (errno's text in it), for the user as is.
// Refused, with a message naming the file: a file that is not there or is
// not a shared object, one without the entry point, one built for another
// SDK version (both versions named, before its registration runs), a kind
// without run, a kind name that is taken. The file stays loaded for the
// life of the process.
Result<void> load_plugin(const std::string& path, Registry& registry);

// Loads the plugins the journal's pending changes came from; one that cannot
// be loaded is noted in the registry, and cleanup reports its changes as
// left behind, with the reason.
void load_journal_plugins(const Journal& journal, Registry& registry);

}  // namespace rxerun
