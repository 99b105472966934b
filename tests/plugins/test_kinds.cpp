// A plugin for the tests: kinds that make a file (and undo it), wait, and
// throw. Built against the SDK's headers only, like any plugin.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include <rxerun/plugin.h>

namespace {

using rxerun::StepResult;
using rxerun::sdk::Kind;

// test_file: creates an empty file that must not exist yet, journaled first;
// its undo removes it while it is still the same file (by inode).
Kind file_kind() {
  Kind kind;
  kind.spec.name = "test_file";
  kind.spec.summary = "Create an empty file; cleanup removes it (a test plugin's kind).";
  kind.spec.params = {{.name = "path", .type = rxerun::ParamType::String, .required = true, .help = "the file"},
                      {.name = "mode",
                       .type = rxerun::ParamType::Int,
                       .default_value = 0600,
                       .help = "its mode",
                       .min = 0,
                       .max = 0777}};
  kind.spec.facts = {{"inode", "the file's inode"}};
  kind.spec.example = "- test_file: {path: /run/lab-marker}\n";
  kind.run = [](const rxerun::sdk::Params& p, rxerun::sdk::StepContext& ctx) {
    const std::string path = p.str("path");
    if (auto r = ctx.will_change({{"path", path}}, "remove " + path); !r) return StepResult::error(r.error());
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(p.integer("mode")));
    if (fd < 0) return StepResult::error(rxerun::Error{errno, "cannot create " + path});
    struct stat st {};
    ::fstat(fd, &st);
    ::close(fd);
    const auto inode = static_cast<long long>(st.st_ino);
    if (auto r = ctx.identify({{"inode", inode}}); !r) return StepResult::error(r.error());
    return StepResult::ok({{"inode", inode}});
  };
  kind.undo = [](const nlohmann::json& args, rxerun::sdk::UndoContext&) -> rxerun::Result<nlohmann::json> {
    const std::string path = args.at("path").get<std::string>();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return nlohmann::json::object();  // already gone
      return rxerun::Error{errno, "cannot read " + path};
    }
    if (args.contains("identity") && args["identity"].value("inode", -1LL) != static_cast<long long>(st.st_ino))
      return nlohmann::json::object();  // someone else's file of that name now: not ours to remove
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return rxerun::Error{errno, "cannot remove " + path};
    return nlohmann::json::object();
  };
  return kind;
}

// test_throw: a step that throws, as a plugin's bug would.
Kind throw_kind() {
  Kind kind;
  kind.spec.name = "test_throw";
  kind.spec.summary = "Throw an exception (a test plugin's kind).";
  kind.spec.params = {{.name = "what", .type = rxerun::ParamType::String, .default_value = "a plugin's bug"}};
  kind.spec.example = "- test_throw: {}\n";
  kind.run = [](const rxerun::sdk::Params& p, rxerun::sdk::StepContext&) -> StepResult {
    throw std::runtime_error(p.str("what"));
  };
  return kind;
}

// test_wait: waits through the SDK's sleep_for, cut short by Ctrl-C or the deadline.
Kind wait_kind() {
  Kind kind;
  kind.spec.name = "test_wait";
  kind.spec.summary = "Wait (a test plugin's kind).";
  kind.spec.params = {{.name = "duration", .type = rxerun::ParamType::Duration, .required = true}};
  kind.spec.default_timeout = rxerun::Duration::zero();
  kind.run = [](const rxerun::sdk::Params& p, rxerun::sdk::StepContext& ctx) {
    switch (ctx.sleep_for(p.duration("duration"))) {
      case rxerun::WaitStatus::Done: return StepResult::ok();
      case rxerun::WaitStatus::Deadline: return StepResult::timeout("the deadline came first");
      case rxerun::WaitStatus::Interrupted: break;
    }
    return StepResult::error("interrupted");
  };
  return kind;
}

}  // namespace

RXERUN_PLUGIN(registrar) {
  registrar.add(file_kind());
  registrar.add(throw_kind());
  registrar.add(wait_kind());
}
