#pragma once
// The cleanup journal: every change a run makes is written here with its
// inverse BEFORE the change is made. Cleanup undoes what is pending in
// reverse order; after a crash (SIGKILL) the next run's preclean or `rxerun
// cleanup` replays what is left. A journal written in an earlier boot is
// discarded: every change it lists was the kernel's, and went with it.
//
// On disk: STATE_DIR/SCENARIO.journal, JSON Lines (engine/journal_line.h
// writes and reads them):
//   {"boot":"0b6e...-..."}   (/proc/sys/kernel/random/boot_id)
//   {"do":1,"step":"pair","kind":"veth","netns":"","summary":"delete veth vA","args":{...}}
//   {"do":2,...,"on":["link:/vA"]}      (Footprint, when the kind declares one)
//   {"do":3,...,"plugin":"/opt/lab/librdma_device.so"}   (a plugin's kind)
//   {"is":1,"identity":{"ifindex":7,"netns_inode":4026532281}}
//   {"undone":1}   {"undone":[3,4,5]}
// and STATE_DIR/SCENARIO.lock, held with flock() for the whole run, so that
// two runs of one scenario cannot interleave. STATE_DIR must be the user's
// own (base/state_dir.h); lock and journal are opened relative to it.
//
// A torn last line is cut off when the journal is opened, since its change
// was never made, so the next line starts on its own. Damage (a line that
// is not one rxerun writes) is listed by damaged(); the runner reports it and
// keeps the file aside (keep_damaged_aside()). An entry whose fields cannot
// be read stays pending with `unreadable` set, and is reported as residue
// with its text.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/fd.h"
#include "base/result.h"
#include "base/state_dir.h"  // default_state_dir(), where Journal::open looks by default
#include "engine/journal_entry.h"
#include "engine/journal_line.h"

namespace rxerun {

class Journal {
 public:
  // Opens (creating when needed) the journal of `scenario` under `dir` and
  // takes the scenario's lock; fails when another run holds it, and when
  // `dir`, the lock or the journal is not safe to use (see above), with a
  // message that says what to fix.
  static Result<Journal> open(const std::string& dir, const std::string& scenario);
  // A journal that lives only in memory: `plan`, and tests.
  static Journal in_memory();

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

  // Damage found on open (see above), until kept aside.
  const std::vector<DamagedLine>& damaged() const { return damaged_; }
  // Whether open cut off a torn last line.
  bool cut_torn_line() const { return cut_torn_line_; }
  // Keeps the damaged file as SCENARIO.journal.damaged-YYYYmmddTHHMMSS (UTC;
  // "-2", "-3"... when taken) for a person to read, and goes on with a
  // fresh journal holding what is still pending; returns the kept file's
  // path. The swap is atomic: a crash leaves the old journal or the new one.
  Result<std::string> keep_damaged_aside();

  const std::string& path() const { return path_; }  // "" in memory
  // Changes an earlier boot's journal listed, dropped on open.
  int dropped_from_earlier_boot() const { return dropped_from_earlier_boot_; }

 private:
  Journal() = default;
  // Takes the scenario's lock, SCENARIO.lock, and writes this process's pid
  // into it for the message of a run that finds it held.
  Result<void> lock(const std::string& scenario);
  // Reads the journal file: what is pending, what is damaged; cuts off a
  // torn last line, and forgets an earlier boot's journal.
  Result<void> load();
  // Hands every line of the file to `reader`, reading in pieces: a line
  // longer than kMaxLineBytes is never held whole.
  Result<void> read_lines(JournalReader& reader);
  Result<void> write_line(const std::string& line);
  // One or more lines of JSON, without the last newline, in one write();
  // returns the number of the first line in the file.
  Result<long> write_text(const std::string& lines);
  Result<void> reopen();  // the journal file again, after remove_if_clean() or keep_damaged_aside()
  // The fresh journal keep_damaged_aside() writes: the boot line, then each
  // pending entry (with its identity line); sets each entry's line number
  // in it, and `lines` to how many it holds.
  std::string pending_text(long* lines);
  // Links the damaged journal to SCENARIO.journal.damaged-STAMP (link()
  // never replaces a file: "-2", "-3"... when taken); returns that name.
  Result<std::string> link_damaged();

  // Declared in this order so that they close in the reverse one: the journal
  // file first, then the lock (closing it releases the flock), the directory
  // last.
  StateDir dir_;  // checked on open: every file is opened relative to it
  UniqueFd lock_fd_;
  UniqueFd fd_;
  std::string name_;  // SCENARIO.journal
  std::string path_;
  std::string boot_;  // written as the first line of a journal file that starts empty
  bool boot_written_ = false;
  long next_seq_ = 1;
  long lines_ = 0;  // newlines in the file, for JournalEntry::line
  // The file does not end with a newline (a line without one was read, or
  // a short write could not be taken back): the next write starts with one.
  bool needs_newline_ = false;
  bool cut_torn_line_ = false;
  int dropped_from_earlier_boot_ = 0;
  std::vector<DamagedLine> damaged_;
  std::vector<JournalEntry> pending_;
};

}  // namespace rxerun
