#include "engine/loader_document.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "engine/loader_guards.h"

namespace rxerun::loading {

std::optional<YAML::Node> DocumentReader::read(std::string_view text) {
  if (auto d = check_encoding(text, sink_.file())) {
    sink_.add(*d);
    return std::nullopt;
  }
  if (auto m = nesting_too_deep(text)) {
    sink_.error(*m, fmt::format("nesting deeper than {} levels: a scenario is a shallow mapping", kMaxNesting));
    return std::nullopt;
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
    if (!ends_the_text(root, text) && !single_document(text)) return std::nullopt;
  } catch (const YAML::DeepRecursion& e) {
    sink_.error(to_mark(e.mark), "nesting too deep for the YAML parser");
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    sink_.error(to_mark(e.mark), fmt::format("YAML syntax error: {}", e.msg));
    return std::nullopt;
  }
  if (root.IsNull()) {
    sink_.error(Mark{}, std::string(empty_));
    return std::nullopt;
  }
  if (!check_tree(root, 0)) return std::nullopt;
  return root;
}

bool DocumentReader::ends_the_text(const YAML::Node& root, std::string_view text) {
  if (!root.IsMap() || root.Style() != YAML::EmitterStyle::Block || root.size() == 0) return false;
  if (root.begin()->first.Mark().column != 0) return false;
  if (text.find("\xEF\xBB\xBF") != std::string_view::npos) return false;
  for (std::size_t start = 0; start < text.size();) {
    const auto line = text.substr(start);
    if (line.starts_with("---") || line.starts_with("...") || line.starts_with("%")) return false;
    const auto end = text.find_first_of("\r\n", start);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return true;
}

bool DocumentReader::single_document(std::string_view text) {
  struct Counter : YAML::EventHandler {
    std::vector<YAML::Mark> starts;
    void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  };
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  Counter counter;
  if (!parser.HandleNextDocument(counter) || !parser.HandleNextDocument(counter)) return true;
  const YAML::Mark second = counter.starts.back();
  const auto pos = std::min(static_cast<std::size_t>(std::max(second.pos, 0)), text.size());
  if (text.substr(pos).starts_with(","))
    sink_.error(to_mark(second), "YAML syntax error: unexpected ','");
  else
    sink_.error(to_mark(second), "a scenario file holds one YAML document; a second one starts here");
  return false;
}

bool DocumentReader::check_tree(const YAML::Node& n, int depth) {
  if (++visited_ > kMaxNodes || depth > 4 * kMaxNesting) {
    if (!too_big_reported_)
      sink_.error(n, fmt::format("the document is too large: more than {} YAML nodes (aliases count each time they "
                                 "are used)",
                                 kMaxNodes));
    too_big_reported_ = true;
    return false;
  }
  if (n.IsSequence()) {
    for (const auto& item : n)
      if (!check_tree(item, depth + 1)) return false;
  } else if (n.IsMap()) {
    std::map<std::string, Mark> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      const auto pair = *it;  // each it-> would build the pair of nodes again
      const YAML::Node& key = pair.first;
      if (!key.IsScalar()) {
        sink_.error(key, "a mapping key must be a plain string");
      } else if (auto [at, fresh] = seen.emplace(key.Scalar(), mark_of(key)); !fresh) {
        sink_.error(key, fmt::format("duplicate key '{}' (first at {}:{})", excerpt(key.Scalar()), at->second.line,
                                     at->second.col));
      }
      if (!check_tree(pair.second, depth + 1)) return false;
    }
    apply_merge_keys(n, sink_);  // after the children: a merged mapping's own '<<' is applied already
  }
  return true;
}

}  // namespace rxerun::loading
