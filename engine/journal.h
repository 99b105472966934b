#pragma once
// The cleanup journal: every change a run makes is written here with its
// inverse BEFORE the change is made. Cleanup undoes what is pending in
// reverse order; after a crash (SIGKILL) the next run's preclean or `rxerun
// cleanup` replays what is left. A journal written in an earlier boot is
// discarded: every change it lists was the kernel's, and went with it.
//
// On disk: STATE_DIR/SCENARIO.journal, JSON Lines:
//   {"boot":"0b6e...-..."}   (/proc/sys/kernel/random/boot_id)
//   {"do":1,"step":"pair","kind":"veth","netns":"","summary":"delete veth vA","args":{...}}
//   {"do":2,...,"on":["link:/vA"]}      (Footprint, when the kind declares one)
//   {"is":1,"identity":{"ifindex":7,"netns_inode":4026532281}}
//   {"undone":1}   {"undone":[3,4,5]}
// and STATE_DIR/SCENARIO.lock, held with flock() for the whole run, so that
// two runs of one scenario cannot interleave. A torn last line (a crash in
// the middle of a write) is ignored: its change was never made.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/result.h"

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

std::string link_object(const std::string& netns, const std::string& dev);
std::string netns_object(const std::string& name);

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
};

class Journal {
 public:
  // Opens (creating when needed) the journal of `scenario` under `dir` and
  // takes the scenario's lock; fails when another run holds it.
  static Result<Journal> open(const std::string& dir, const std::string& scenario);
  // A journal that lives only in memory: `plan`, and tests.
  static Journal in_memory();

  Journal(Journal&&) noexcept;
  Journal& operator=(Journal&&) noexcept;
  ~Journal();

  // Changes made and not yet undone, in the order they were made.
  const std::vector<JournalEntry>& pending() const { return pending_; }

  // Writes the entry (assigning its seq) before returning.
  Result<long> append(JournalEntry entry);
  // Records what identifies the object change `seq` made, now that it
  // exists (an "is" line); written after the change, so a crash in between
  // leaves the entry without it and its undo relies on the mark alone.
  Result<void> identify(long seq, nlohmann::json identity);
  Result<void> mark_undone(long seq);
  // Several at once, in one write.
  Result<void> mark_undone(const std::vector<long>& seqs);

  // Deletes the journal file when nothing is pending (the lock file stays:
  // removing it would race with a run that is about to take it).
  void remove_if_clean();

  const std::string& path() const { return path_; }  // "" in memory
  int skipped_lines() const { return skipped_lines_; }  // torn or unreadable lines found on open
  // Changes an earlier boot's journal listed, dropped on open.
  int dropped_from_earlier_boot() const { return dropped_from_earlier_boot_; }

 private:
  Journal() = default;
  Result<void> write_line(const nlohmann::json& line);
  Result<void> write_text(const std::string& line);  // one line of JSON, without its newline

  std::string path_;
  std::string boot_;  // written as the first line of a journal file that starts empty
  bool boot_written_ = false;
  int fd_ = -1;
  int lock_fd_ = -1;
  long next_seq_ = 1;
  int skipped_lines_ = 0;
  int dropped_from_earlier_boot_ = 0;
  std::vector<JournalEntry> pending_;
};

// The journal's line for `entry`: the JSON object {"do":SEQ,"step":...,
// "kind":...,"netns":...,"summary":...,"args":...} plus "on" and "makes" when
// not empty, written directly, keys in the order nlohmann::json writes them
// (building the object would copy `args` and make a map for every line).
std::string entry_line(const JournalEntry& entry);

// Where journals and locks live: $RXERUN_STATE_DIR when set, /run/rxerun for
// root, else $XDG_RUNTIME_DIR/rxerun or /tmp/rxerun-UID.
std::string default_state_dir();

}  // namespace rxerun
