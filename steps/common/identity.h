#pragma once
// What tells the object a change was made to from a namesake made later: an
// interface's index with its namespace's inode, a namespace's inode, an RDMA
// device's index. A step records it in the journal (in the change's
// arguments when the object exists before the change, with
// StepContext::identify() once it exists after); the undo compares it with
// what carries the name now and acts only on a match. A namesake is left
// alone, with its addresses and settings, and the undo fails saying what was
// recorded and what is there now: residue the user looks at (exit 4).
//
// Held as JSON: {"ifindex": 7, "netns_inode": 4026532281}. A value of 0
// (unknown: `plan`) or a missing one (an older journal, or a crash between
// the change and identify()) is not compared: the undo then relies on the
// name and the mark, as before.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "sys/system.h"

namespace rxerun::steps {

// {"ifindex", "netns_inode"} of `link`, in the calling thread's namespace.
Result<nlohmann::json> link_identity(sys::System& sys, const sys::LinkInfo& link);
// The same for the interface called `dev`; null when there is none.
Result<nlohmann::json> link_identity(sys::System& sys, const std::string& dev);
// {"netns_inode"} of the calling thread's namespace.
Result<nlohmann::json> netns_identity(sys::System& sys);

// A step's own tag, for what it names when the kernel gives no identity
// (a TPG, a backstore's serial, a mount point, nfsd's directories): the
// steady clock's nanoseconds, never the same twice on a machine, and the
// same in every plan (the model's clock stands still).
std::uint64_t step_tag(sys::System& sys);

// A number the journal's identity holds under `key`; nullopt when it holds
// none there (or something else: JournalArgs::identity() lets objects through).
std::optional<std::uint64_t> identity_number(const nlohmann::json& identity, const char* key);

// Whether `recorded` and `now` name different objects: some key has a
// non-zero value in both, and they differ.
bool differs(const nlohmann::json& recorded, const nlohmann::json& now);

enum class Found {
  Same,  // the interface recorded (or nothing was recorded to compare)
  Gone,  // no interface has the name: what the change was made to went
};
// Looks at interface `dev` in the calling thread's namespace. An error,
// naming what was recorded and what is there, when it is a namesake.
// `now` receives the interface when there is one.
Result<Found> check_link(sys::System& sys, const std::string& dev, const nlohmann::json& recorded,
                         std::optional<sys::LinkInfo>* now = nullptr);
// The calling thread's namespace, called `name` ("" for rxerun's own),
// against recorded["netns_inode"]; an error when it is another namespace
// than the one the change was made in (deleted and made again under its name).
Result<void> check_netns(sys::System& sys, const nlohmann::json& recorded, const std::string& name);

}  // namespace rxerun::steps
