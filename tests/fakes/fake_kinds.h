#pragma once
// Step kinds for engine tests. They act on a FakeWorld instead of the host,
// so every engine behaviour (order, undo, revert, retries, Ctrl-C) can be
// observed without root.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/kind.h"
#include "engine/registry.h"

namespace rxerun::fakes {

struct FakeWorld {
  std::vector<std::string> log;                               // "do a", "undo a", "check x"
  std::set<std::string> fail_undo;                            // ids whose undo fails (residue)
  std::map<std::string, int> attempts;                        // by step name
  long packets = 0;                                           // what a `fault` counted when undone
  std::string netns_at_undo;                                  // netns current during the last undo
  std::map<std::string, std::vector<std::string>> leftovers;  // netns -> marked things a crash left
  std::set<std::string> interrupt_undo;  // ids whose undo is interrupted by Ctrl-C (after it finished)
  std::set<std::string> throw_undo;      // ids whose undo throws, as a json accessor does on a bad entry
  bool throw_preclean = false;           // the `marked` kind's preclean throws
  std::string text = "ACTIVE";           // the `check` kind's fact `text`, as a tool printed it
};

// change {id}: records an inverse, then "does" id.            facts: changed
// fault {id}: like change; its undo reports {packets}.         facts: packets
// check {outcome, value, pass_on_attempt}: no change.          facts: value, attempt
// interrupt {}: Ctrl-C arrives while it runs.
// batch {id}: like change, and its undo_batch undoes many at once ("batch undo a b").
// marked {}: no change; its preclean removes world.leftovers of the current netns.
// explode {id}: records its change, then throws (a kind's bug); its undo works.
// plus the real sleep and revert kinds.
Registry fake_registry(FakeWorld& world);

}  // namespace rxerun::fakes
