#include "engine/report_journal.h"

#include <fmt/format.h>

#include <string_view>

namespace rxerun {

namespace {

// How much of an entry, and how many damaged lines, a report shows.
constexpr std::size_t kShownEntryBytes = 4096;
constexpr std::size_t kShownDamagedLines = 10;

// `s` cut to `max` bytes at a UTF-8 character boundary, saying so.
std::string cut(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return fmt::format("{}... ({} bytes in all)", s.substr(0, end), s.size());
}

std::string plural_lines(std::size_t n) {
  return n == 1 ? "line" : "lines";
}

}  // namespace

std::string journal_text(const JournalEntry& entry) {
  std::string raw = entry.raw;
  if (raw.empty()) {
    try {
      raw = entry_line(entry);
    } catch (const nlohmann::json::exception&) {
      raw = "(not shown: not UTF-8)";
    }
  }
  raw = cut(raw, kShownEntryBytes);
  return entry.line > 0 ? fmt::format("line {}: {}", entry.line, raw) : raw;
}

std::string journal_text(const std::vector<DamagedLine>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < kShownDamagedLines; ++i)
    out += fmt::format("{}line {} ({}): {}", out.empty() ? "" : "\n", lines[i].number, lines[i].why, lines[i].text);
  if (lines.size() > kShownDamagedLines)
    out += fmt::format("\n... and {} more damaged {}", lines.size() - kShownDamagedLines,
                       plural_lines(lines.size() - kShownDamagedLines));
  return out;
}

std::string damaged_line_numbers(const std::vector<DamagedLine>& lines) {
  std::string out = "journal " + plural_lines(lines.size()) + " ";
  for (std::size_t i = 0; i < lines.size() && i < kShownDamagedLines; ++i)
    out += (i ? ", " : "") + std::to_string(lines[i].number);
  if (lines.size() > kShownDamagedLines) out += fmt::format(" and {} more", lines.size() - kShownDamagedLines);
  return out;
}

}  // namespace rxerun
