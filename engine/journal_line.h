#pragma once
// The journal's line format, JSON Lines (engine/journal.h shows each line
// type): the writer of every line, and the reader, which takes a journal's
// lines in order and says which are damage.
//
// Reading is forgiving and loud. A torn last line (a crash in the middle of
// a write: no newline at the end and not a whole line) is neither taken nor
// damage: its change was never made. Any other line that is not a line
// rxerun writes (not JSON, an unknown line type, a "do" without a usable seq
// or repeating one, longer than kMaxLineBytes, nested deeper than 64) is
// damage. A "do" line whose seq is fine but whose other fields are not
// (missing "kind", wrong types, a number in "args" that is not an integer:
// kinds journal none) is an entry that cannot be undone: it stays pending
// with `unreadable` set. "undone" for a seq not seen before it is ignored.

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/journal_entry.h"

namespace rxerun {

// Lines longer than this are damage when read, and refused when written
// (the change is then not made): bigger than any entry a kind writes, small
// enough to hold in memory.
inline constexpr std::size_t kMaxLineBytes = 8u << 20;

// Sequence numbers are positive and stay exact as JSON numbers in any
// reader, and one more than the largest still fits a long.
inline constexpr long kMaxJournalSeq = 1L << 53;

// How much of a damaged line DamagedLine::text shows: all a reader needs to
// keep of a line longer than kMaxLineBytes.
inline constexpr std::size_t kShownDamageBytes = 300;

// A line of a journal file that is not a line rxerun writes.
struct DamagedLine {
  long number = 0;   // 1-based
  std::string why;   // "not JSON", "unknown line type", ...
  std::string text;  // the start of the line, bytes outside printable ASCII escaped (\xNN)
};

// Whether every number in `v` is an integer. Kinds journal names, flags and
// integers; converting a fractional or huge number (1e300) to the integer an
// undo reads is undefined behaviour, so the reader does not take such an
// entry, and the journal never writes one.
bool integers_only(const nlohmann::json& v);

// The journal's line for `entry`: the JSON object {"do":SEQ,"step":...,
// "kind":...,"netns":...,"summary":...,"args":...} plus "on", "makes" and
// "plugin" when not empty, written directly, keys in the order nlohmann::json writes them
// (building the object would copy `args` and make a map for every line).
std::string entry_line(const JournalEntry& entry);
// {"is":SEQ,"identity":{...}}: what identifies the object change SEQ made.
std::string identity_line(long seq, const nlohmann::json& identity);
// {"undone":SEQ}, and {"undone":[SEQ,...]} for several at once.
std::string undone_line(long seq);
std::string undone_line(const std::vector<long>& seqs);
// {"boot":"ID"}: the first line of a journal file, the boot it belongs to.
std::string boot_line(const std::string& boot);

// What a journal's lines say, read in order.
struct JournalContents {
  std::vector<JournalEntry> pending;  // entries read, less those undone, in order
  std::vector<DamagedLine> damaged;
  long next_seq = 1;          // one more than any seq the lines use
  bool earlier_boot = false;  // the boot line names another boot than this one
};

// Reads a journal's lines in order: one branch per line type, each saying
// why a line is not one it takes.
class JournalReader {
 public:
  // `boot`: this boot's id; "" when not known (entries of any boot are kept).
  explicit JournalReader(std::string boot) : boot_(std::move(boot)) {}

  // Line `number` of the file, without its newline: `start` is all of it
  // when it is at most kMaxLineBytes long (else at least its first
  // kShownDamageBytes), `size` its length, `ended` whether a newline ended
  // it. Takes it or notes it as damage; false when it is torn instead (the
  // file's last line, without a newline, cut short: the caller cuts it off).
  bool line(std::string_view start, std::size_t size, long number, bool ended);

  JournalContents finish() &&;

 private:
  // One whole line; nullopt when taken, else why not.
  std::optional<std::string> take(std::string_view text, long number);
  std::optional<std::string> take_do(const nlohmann::json& line, const nlohmann::json& seq_value, std::string_view text,
                                     long number);
  // {"is":SEQ,"identity":{...}}, for an entry read before it only (as "undone").
  std::optional<std::string> take_is(const nlohmann::json& line, const nlohmann::json& seq_value);
  std::optional<std::string> take_undone(const nlohmann::json& value);
  std::optional<std::string> take_boot(const nlohmann::json& value);

  std::string boot_;
  std::vector<JournalEntry> entries_;
  std::vector<DamagedLine> damaged_;
  std::map<long, long> first_line_;  // seq -> the line of its "do"
  std::set<long> undone_;
  long next_seq_ = 1;
  bool earlier_boot_ = false;
};

}  // namespace rxerun
