#pragma once
// The cleanup journal: every change a run makes is written here with its
// inverse, and fsynced, BEFORE the change is made. Cleanup undoes what is
// pending in reverse order; after a crash (SIGKILL, power loss) the next run's
// preclean or `rxerun cleanup` replays what is left.
//
// On disk: STATE_DIR/SCENARIO.journal, JSON Lines:
//   {"do":1,"step":"pair","kind":"veth","netns":"","summary":"delete veth vA","args":{...}}
//   {"undone":1}
// and STATE_DIR/SCENARIO.lock, held with flock() for the whole run, so that
// two runs of one scenario cannot interleave. A torn last line (a crash in
// the middle of a write) is ignored: its change was never made.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/result.h"

namespace rxerun {

struct JournalEntry {
  long seq = 0;
  std::string step;
  std::string kind;
  std::string netns;  // where the change was made; "" for rxerun's own namespace
  std::string summary;
  nlohmann::json args;
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

  // Writes the entry (assigning its seq) and fsyncs before returning.
  Result<long> append(JournalEntry entry);
  Result<void> mark_undone(long seq);

  // Deletes the journal file when nothing is pending (the lock file stays:
  // removing it would race with a run that is about to take it).
  void remove_if_clean();

  const std::string& path() const { return path_; }  // "" in memory
  int skipped_lines() const { return skipped_lines_; }  // torn or unreadable lines found on open

 private:
  Journal() = default;
  Result<void> write_line(const nlohmann::json& line);

  std::string path_;
  int fd_ = -1;
  int lock_fd_ = -1;
  long next_seq_ = 1;
  int skipped_lines_ = 0;
  std::vector<JournalEntry> pending_;
};

// Where journals and locks live: $RXERUN_STATE_DIR when set, /run/rxerun for
// root, else $XDG_RUNTIME_DIR/rxerun or /tmp/rxerun-UID.
std::string default_state_dir();

}  // namespace rxerun
