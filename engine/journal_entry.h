#pragma once
// What the cleanup journal holds for each change a run makes: the inverse of
// the change (its kind's undo reads `args`), where it lives and what it
// makes (Footprint), and, once known, what identifies the object it made.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rxerun {

// What a change lives on and what it creates, named as objects
// ("link:NETNS/DEV", "netns:NAME"; NETNS is "" for rxerun's own namespace).
// Cleanup leaves out the undo of a change that lives on an object an older
// change of the same run created, when that object's removal succeeds: an
// address on a veth the run made goes with the veth, a rule in a namespace it
// made goes with the namespace.
struct Footprint {
  std::vector<std::string> on;     // the change goes when one of these goes
  std::vector<std::string> makes;  // the undo of this change removes these
};

inline std::string link_object(const std::string& netns, const std::string& dev) {
  return "link:" + netns + "/" + dev;
}
inline std::string netns_object(const std::string& name) {
  return "netns:" + name;
}

struct JournalEntry {
  long seq = 0;
  std::string step;
  std::string kind;
  std::string netns;  // where the change was made; "" for rxerun's own namespace
  std::string summary;
  nlohmann::json args;
  Footprint footprint;
  // What identifies the object the change made, beyond its name (an
  // interface's index, a namespace's inode), once it exists; null when the
  // change made nothing or the run ended before it could say. An undo acts
  // only on the object that still matches it.
  nlohmann::json identity;
  // The entry's line as the journal holds it, and its number in the file
  // (0 when not known): what a report shows when the undo fails.
  std::string raw;
  long line = 0;
  // Why the reader could not take the entry's fields ("\"kind\" is not a
  // string"); such an entry is never undone, only reported.
  std::string unreadable;
  // The plugin file the entry's kind comes from (an absolute path); "" for a
  // kind built into rxerun. Cleanup loads it to undo the change.
  std::string plugin;
};

}  // namespace rxerun
