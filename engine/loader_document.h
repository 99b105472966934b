#pragma once
// The first reader of a scenario: its text to one YAML document. Checks the
// text before yaml-cpp parses it (engine/loader_guards.h), parses it once,
// refuses a second document, and walks the tree for what yaml-cpp lets
// pass: repeated keys (it keeps both silently), keys that are not strings,
// a document too large (aliases expand a small file into a huge tree), and
// YAML 1.1's merge keys (it keeps '<<' as a plain key).

#include <optional>
#include <string_view>

#include "engine/loader_sink.h"
#include "engine/loader_yaml.h"

namespace rxerun::loading {

class DocumentReader {
 public:
  // `empty`: the error for a document with nothing in it (a scenario's
  // unless told: an included file, a --var-file say what they hold).
  explicit DocumentReader(DiagnosticSink& sink,
                          std::string_view empty = "empty scenario: expected a mapping with 'steps'")
      : sink_(sink), empty_(empty) {}

  // The document's root; nullopt when it cannot be read on (the reasons
  // are in the sink). Problems in keys are reported, and the root returned.
  std::optional<YAML::Node> read(std::string_view text);

 private:
  // True when the first document, `root`, provably runs to the end of the
  // text, so that single_document() (a second parse, a third of the time of
  // loading a large file) has nothing to find. yaml-cpp closes a block
  // mapping whose keys start in column 0 only at the end of the text, at a
  // document marker ("---", "...") or at a directive ("%..."), each of which
  // must start a line; a byte-order mark may stand before either, and '\r'
  // may end a line. Anything else (a flow or scalar root, an indented
  // mapping: "[a]\n,", "  a: 1\nb: 2") goes through the full count.
  static bool ends_the_text(const YAML::Node& root, std::string_view text);

  // False (with a diagnostic) when the text holds more than one document.
  // yaml-cpp's LoadAll() loops forever on a stray ',' at the top level (each
  // call yields an empty document without consuming it), so documents are
  // counted here, two at most; a "document" starting at a ',' is that token.
  bool single_document(std::string_view text);

  // Repeated keys, keys that are not strings, and a bound on the tree's
  // size; then each mapping's merge keys applied (apply_merge_keys), after
  // its children's. False when the document is too big to go on.
  bool check_tree(const YAML::Node& n, int depth);

  DiagnosticSink& sink_;
  std::string_view empty_;
  long visited_ = 0;  // nodes walked by check_tree, aliases each time they are used
  bool too_big_reported_ = false;
};

}  // namespace rxerun::loading
