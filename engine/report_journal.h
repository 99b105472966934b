#pragma once
// What the reports show of the journal: the line of an entry whose undo
// failed (for undoing it by hand), and the journal's damaged lines.

#include <string>
#include <vector>

#include "engine/journal_entry.h"
#include "engine/journal_line.h"

namespace rxerun {

// What a report shows of an entry whose undo failed: "line N: " and its
// journal line, cut at 4 KiB (or entry_line() for an entry of an in-memory
// journal).
std::string journal_text(const JournalEntry& entry);
// What a report shows of damaged lines: "line N (WHY): TEXT", one a line,
// the first ten.
std::string journal_text(const std::vector<DamagedLine>& lines);
// "journal lines 3, 7" (the first ten, then "and N more").
std::string damaged_line_numbers(const std::vector<DamagedLine>& lines);

}  // namespace rxerun
