#include "engine/loader_guards.h"

#include <fmt/format.h>

#include <vector>

#include "base/utf8.h"

namespace rxerun::loading {

namespace {

Diagnostic diag_at(const std::string& file, int line, int col, std::string message) {
  return Diagnostic{file, Mark{line, col}, std::move(message)};
}

// A cheap over-approximation of YAML nesting, computed before yaml-cpp parses:
// block levels from the indentation stack (plus compact "- - x" entries) and
// flow levels from brackets outside quotes and comments.
class NestingScan {
 public:
  explicit NestingScan(std::string_view text) : text_(text) {}

  // The line and column (1-based) where nesting first passes kMaxNesting.
  std::optional<Mark> too_deep() {
    int line_no = 0;
    std::size_t start = 0;
    while (start <= text_.size()) {
      std::size_t end = text_.find('\n', start);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view line = text_.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_no;
      if (auto col = scan_line(line)) return Mark{line_no, *col};
      if (end == text_.size()) break;
      start = end + 1;
    }
    return std::nullopt;
  }

 private:
  static bool blank(char c) { return c == ' ' || c == '\t'; }

  int depth() const { return static_cast<int>(indents_.size()) + flow_; }

  // Returns the 1-based column where the limit is passed, if it is.
  std::optional<int> scan_line(std::string_view line) {
    std::size_t ind = 0;
    while (ind < line.size() && line[ind] == ' ') ++ind;
    const bool empty = ind == line.size() || line[ind] == '#';
    if (block_scalar_indent_ >= 0) {
      if (empty || static_cast<int>(ind) > block_scalar_indent_) return std::nullopt;
      block_scalar_indent_ = -1;
    }
    std::size_t pos = 0;
    if (!in_single_ && !in_double_ && flow_ == 0) {
      if (empty) return std::nullopt;
      while (!indents_.empty() && indents_.back() >= static_cast<int>(ind)) indents_.pop_back();
      indents_.push_back(static_cast<int>(ind));
      line_indent_ = static_cast<int>(ind);
      pos = ind;
      if (depth() > kMaxNesting) return static_cast<int>(pos) + 1;
      // "- - - x" and "? x" open a level each without a new line.
      while (pos < line.size() && (line[pos] == '-' || line[pos] == '?') &&
             (pos + 1 == line.size() || blank(line[pos + 1]))) {
        ++pos;
        while (pos < line.size() && blank(line[pos])) ++pos;
        indents_.push_back(static_cast<int>(pos));
        if (depth() > kMaxNesting) return static_cast<int>(pos) + 1;
      }
    }
    return scan_content(line, pos);
  }

  std::optional<int> scan_content(std::string_view line, std::size_t pos) {
    bool node_start = true;  // the next character would begin a node
    for (std::size_t i = pos; i < line.size(); ++i) {
      const char c = line[i];
      if (in_single_) {
        if (c == '\'') {
          if (i + 1 < line.size() && line[i + 1] == '\'')
            ++i;
          else
            in_single_ = false;
        }
        continue;
      }
      if (in_double_) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          in_double_ = false;
        continue;
      }
      if (blank(c)) continue;
      const bool after_blank = i == pos || blank(line[i - 1]);
      if (c == '#' && after_blank) return std::nullopt;  // a comment to the end of the line
      const bool flow_start = flow_ > 0 && (line[i - (i > 0)] == '[' || line[i - (i > 0)] == '{' ||
                                            line[i - (i > 0)] == ',' || after_blank);
      if (node_start || flow_start || flow_ > 0) {
        if (c == '[' || c == '{') {
          ++flow_;
          if (depth() > kMaxNesting) return static_cast<int>(i) + 1;
          node_start = true;
          continue;
        }
      }
      if (flow_ > 0 && (c == ']' || c == '}')) {
        --flow_;
        node_start = false;
        continue;
      }
      if ((node_start || flow_start) && (c == '\'' || c == '"')) {
        (c == '\'' ? in_single_ : in_double_) = true;
        node_start = false;
        continue;
      }
      if (node_start && flow_ == 0 && (c == '|' || c == '>')) {
        block_scalar_indent_ = line_indent_;
        return std::nullopt;
      }
      if (node_start && (c == '&' || c == '!')) {  // an anchor or tag before the node
        while (i + 1 < line.size() && !blank(line[i + 1])) ++i;
        continue;
      }
      // ": " and ", " and "- " make the next character begin a node again.
      const bool separator_follows = i + 1 == line.size() || blank(line[i + 1]);
      node_start = (c == ':' && (separator_follows || flow_ > 0)) || (c == ',' && flow_ > 0) ||
                   (c == '-' && node_start && separator_follows);
    }
    return std::nullopt;
  }

  std::string_view text_;
  std::vector<int> indents_;
  int flow_ = 0;
  int line_indent_ = 0;
  int block_scalar_indent_ = -1;  // >= 0 while inside a | or > scalar
  bool in_single_ = false;
  bool in_double_ = false;
};

}  // namespace

std::optional<Diagnostic> check_encoding(std::string_view text, const std::string& file) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) return diag_at(file, line, col, "binary data (a NUL byte): a scenario is a YAML text file");
    const std::size_t n = utf8_length(text, i);
    if (n == 0)
      return diag_at(file, line, col, fmt::format("invalid UTF-8 (byte 0x{:02x}): a scenario is UTF-8 text", c));
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
      return diag_at(file, line, col, fmt::format("control character 0x{:02x} is not allowed in YAML", c));
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      col += static_cast<int>(n);  // yaml-cpp counts columns in bytes too
    }
    i += n;
  }
  return std::nullopt;
}

std::optional<Mark> nesting_too_deep(std::string_view text) {
  return NestingScan(text).too_deep();
}

}  // namespace rxerun::loading
