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
//   {"do":3,...,"plugin":"/opt/lab/librdma_device.so"}   (a plugin's kind)
//   {"is":1,"identity":{"ifindex":7,"netns_inode":4026532281}}
//   {"undone":1}   {"undone":[3,4,5]}
// and STATE_DIR/SCENARIO.lock, held with flock() for the whole run, so that
// two runs of one scenario cannot interleave.
//
// STATE_DIR must be the user's own: a directory (not a symbolic link) that
// belongs to the effective uid and has no group or other permission bits,
// since whoever can write there can make cleanup undo what they choose. It
// is created (mode 0700) when missing, the last component only. Lock and
// journal are opened relative to it, never through a symbolic link, and
// must be regular files.
//
// Reading is forgiving and loud. A torn last line (a crash in the middle of
// a write: no newline at the end and not a whole line) is cut off when the
// journal is opened, since its change was never made, so the next line
// starts on its own. Any other line that is not a line rxerun writes (not
// JSON, an unknown line type, a "do" without a usable seq or repeating one,
// longer than kMaxLineBytes) is damage: listed by damaged(), and the runner
// reports it and keeps the file aside (keep_damaged_aside()). A "do" line
// whose seq is fine but whose other fields are not (missing "kind", wrong
// types, a number in "args" that is not an integer: kinds journal none) is
// an entry that cannot be undone: it stays pending with
// `unreadable` set, and is reported as residue with its text. "undone" for
// a seq not seen before it is ignored.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/fd.h"
#include "base/result.h"

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

// A line of a journal file that is not a line rxerun writes.
struct DamagedLine {
  long number = 0;   // 1-based
  std::string why;   // "not JSON", "unknown line type", ...
  std::string text;  // the start of the line, bytes outside printable ASCII escaped (\xNN)
};

// Lines longer than this are damage when read, and refused when written
// (the change is then not made): bigger than any entry a kind writes, small
// enough to hold in memory.
inline constexpr std::size_t kMaxLineBytes = 8u << 20;

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
  Result<void> write_line(const nlohmann::json& line);
  // One or more lines of JSON, without the last newline, in one write();
  // returns the number of the first line in the file.
  Result<long> write_text(const std::string& lines);
  Result<void> reopen();  // the journal file again, after remove_if_clean() or keep_damaged_aside()

  std::string dir_;
  std::string name_;  // SCENARIO.journal
  std::string path_;
  std::string boot_;  // written as the first line of a journal file that starts empty
  bool boot_written_ = false;
  // Declared in this order so that they close in the reverse one: the journal
  // file first, then the lock (closing it releases the flock), the directory
  // last.
  UniqueFd dir_fd_;  // STATE_DIR, checked on open: every file is opened relative to it
  UniqueFd lock_fd_;
  UniqueFd fd_;
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

// What a report shows of an entry whose undo failed: "line N: " and its
// journal line, cut at 4 KiB (or entry_line() for an entry of an in-memory
// journal).
std::string journal_text(const JournalEntry& entry);
// What a report shows of damaged lines: "line N (WHY): TEXT", one a line,
// the first ten.
std::string journal_text(const std::vector<DamagedLine>& lines);
// "journal lines 3, 7" (the first ten, then "and N more").
std::string damaged_line_numbers(const std::vector<DamagedLine>& lines);

// The journal's line for `entry`: the JSON object {"do":SEQ,"step":...,
// "kind":...,"netns":...,"summary":...,"args":...} plus "on", "makes" and
// "plugin" when not empty, written directly, keys in the order nlohmann::json writes them
// (building the object would copy `args` and make a map for every line).
std::string entry_line(const JournalEntry& entry);

// Where journals and locks live: $RXERUN_STATE_DIR when set, /run/rxerun for
// root, else $XDG_RUNTIME_DIR/rxerun or /tmp/rxerun-UID.
std::string default_state_dir();

// Opens `dir` as a state directory (creating its last component, mode
// 0700, when missing) and checks that it is the user's own; returns the
// directory's fd, or what to fix.
Result<UniqueFd> open_state_dir(const std::string& dir);

}  // namespace rxerun
