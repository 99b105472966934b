#include "engine/loader_sink.h"

#include <algorithm>
#include <tuple>

namespace rxerun::loading {

Diagnostics DiagnosticSink::take_errors() {
  auto rank = [this](const std::string& file) {
    return std::find(files_.begin(), files_.end(), file) - files_.begin();
  };
  std::stable_sort(errors_.begin(), errors_.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(rank(a.file), a.mark.line, a.mark.col) < std::tuple(rank(b.file), b.mark.line, b.mark.col);
  });
  errors_.erase(std::unique(errors_.begin(), errors_.end(),
                            [](const Diagnostic& a, const Diagnostic& b) {
                              return a.file == b.file && a.mark.line == b.mark.line && a.mark.col == b.mark.col &&
                                     a.message == b.message;
                            }),
                errors_.end());
  return std::move(errors_);
}

ReadingFile::ReadingFile(DiagnosticSink& sink, std::string file, std::string note)
    : sink_(sink), saved_file_(sink.file_), saved_note_(sink.note_) {
  if (std::find(sink.files_.begin(), sink.files_.end(), file) == sink.files_.end()) sink.files_.push_back(file);
  sink.file_ = std::move(file);
  sink.note_ = std::move(note);
}

ReadingFile::~ReadingFile() {
  sink_.file_ = std::move(saved_file_);
  sink_.note_ = std::move(saved_note_);
}

}  // namespace rxerun::loading
