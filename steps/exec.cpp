// exec: run a program of the user's in the step's namespace, the way a
// traffic kind runs its tools: no shell unless asked for one (`shell:` is
// run by /bin/sh -c), its own process group (a timeout or Ctrl-C stops the
// whole tree: SIGTERM, then SIGKILL), its output kept within bounds (the
// last 64 KiB of each stream as facts, all of it in files under
// --output-dir when `output` names them). It changes nothing by itself; an
// `undo` command, when given, is journaled before the program starts and
// run at cleanup, also by `rxerun cleanup` after a crash. Like the RDMA
// kinds it reports the counter deltas of every rxe device and netdev of its
// namespace, so that a scenario shows where its own program's packets went.
//
// With `background`, the program is started, the step waits until it is
// ready (`ready:` a listening port, a line of its output, a file, a command
// that succeeds), and the run goes on while it runs; `wait: STEP` takes its
// end as facts, `revert: STEP` or cleanup stop it. It is journaled with a
// random token put in its environment, which everything it starts
// inherits: `rxerun cleanup` after a crash stops the processes that carry
// the token, and never a namesake or a process that got a recycled pid.

#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "base/files.h"
#include "base/regex.h"
#include "base/strings.h"
#include "base/try.h"
#include "engine/step.h"
#include "steps/common/journal_record.h"
#include "steps/common/program.h"
#include "steps/common/tool_pair.h"
#include "steps/common/traffic.h"
#include "steps/kinds.h"

namespace rxerun::steps {

namespace {

constexpr std::size_t kParseBytes = 16 * 1024 * 1024;  // parse: json reads at most this much stdout
constexpr std::size_t kMaxParsedFacts = 10'000;
constexpr Duration kUndoTimeout{30'000};
constexpr Duration kReadyPoll{20};  // how often readiness is probed
constexpr const char* kTokenVariable = "RXERUN_TOKEN";

StepResult run_exec(const Params& params, StepContext& ctx);
Result<nlohmann::json> undo_exec(const nlohmann::json& args, UndoContext& ctx);
void validate_exec(const nlohmann::json& params, const KindSpec::Complaint& complain);
StepResult start_background(const Params& params, StepContext& ctx, sys::ToolSpec& spec, const std::string& program);
void parse_stdout(const sys::RunningTool& tool, nlohmann::json& facts, std::vector<std::string>& hints);
Result<void> extract_facts(const Params& params, const sys::RunningTool& tool, nlohmann::json& facts,
                           std::vector<std::string>& hints);

bool valid_env_name(std::string_view name) {
  if (name.empty() || name.size() > 255 || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

}  // namespace

Kind exec_kind() {
  KindSpec spec;
  spec.name = "exec";
  spec.summary = "Run a program of your own in the step's namespace; its exit, output and traffic as facts.";
  spec.params = {
      {.name = "argv",
       .type = ParamType::List,
       .help = "the program and its arguments, no shell: [ibv_rc_pingpong, -d, rxe0] (this or `shell`)",
       .fields = {{.name = "arg", .type = ParamType::String}}},
      {.name = "shell",
       .type = ParamType::String,
       .help = "a command line for /bin/sh -c: \"dd if=/dev/zero | wc -c\""},
      {.name = "env",
       .type = ParamType::Map,
       .help = "set in its environment: {RDMAV_FORK_SAFE: 1}",
       .fields = {{.name = "value", .type = ParamType::Scalar}}},
      {.name = "cwd", .type = ParamType::String, .help = "its working directory (default: rxerun's)"},
      {.name = "stdin", .type = ParamType::String, .help = "all of its standard input (default: /dev/null)"},
      {.name = "parse",
       .type = ParamType::Enum,
       .help = "json: its stdout is JSON, each value a fact named by its path (jobs.0.write.bw)",
       .choices = {"json"}},
      {.name = "extract",
       .type = ParamType::Map,
       .help = "facts taken from its output: {usec: \"([0-9.]+) usec/iter\"} (the first group of the first match)",
       .fields = {{.name = "regex", .type = ParamType::String}}},
      {.name = "output",
       .type = ParamType::String,
       .help = "keep the whole output in NAME.stdout and NAME.stderr under --output-dir: fio-run"},
      {.name = "undo",
       .type = ParamType::List,
       .help = "a command run at cleanup, in the same namespace: [rm, -f, /tmp/lab-data]",
       .fields = {{.name = "arg", .type = ParamType::String}}},
      {.name = "background",
       .type = ParamType::Bool,
       .default_value = false,
       .help = "start it, wait until it is ready, go on while it runs (`wait: STEP` for its end)"},
      {.name = "ready",
       .type = ParamType::Object,
       .help = "background: when it is ready (one of these; default: once started)",
       .fields = {{.name = "tcp",
                   .type = ParamType::Int,
                   .help = "a TCP socket listens on this port",
                   .min = 1,
                   .max = 65535},
                  {.name = "udp",
                   .type = ParamType::Int,
                   .help = "a UDP socket is bound to this port",
                   .min = 1,
                   .max = 65535},
                  {.name = "rdma_cm",
                   .type = ParamType::Int,
                   .help = "an rdma_cm listener on this port",
                   .min = 1,
                   .max = 65535},
                  {.name = "log", .type = ParamType::String, .help = "its output matches this regex: \"listening\""},
                  {.name = "file", .type = ParamType::String, .help = "this file exists: /tmp/server.pid"},
                  {.name = "exec",
                   .type = ParamType::List,
                   .help = "this command exits 0: [test, -S, /tmp/sock]",
                   .fields = {{.name = "arg", .type = ParamType::String}}}}},
  };
  spec.validate = validate_exec;
  spec.facts = program_fact_specs(kAtStep | kAtEnd);
  spec.facts.insert(
      spec.facts.end(),
      {
          {"duration_s", "seconds from its start to its end"},
          {.name = "stdout_file", .help = "with `output`: the file holding all of its stdout", .only_with = "output"},
          {.name = "stderr_file", .help = "with `output`: the file holding all of its stderr", .only_with = "output"},
          {.name = "pid", .help = "background: its process id", .when = kAtStart},
          {.name = "ready_s", .help = "background: seconds from its start until it was ready", .when = kAtStart},
          {.name = "stopped_after",
           .help = "background, at its revert: processes it had started that were still running and were stopped",
           .when = kAtEnd},
          {.name = "PATH.TO.VALUE",
           .help = "with `parse: json`: each value of its JSON output (jobs.0.write.bw)",
           .only_with = "parse"},
          {.name = "FACT", .help = "each `extract` that matched", .names_from = "extract"},
          {"DEV.COUNTER", "deltas of every rxe device's and netdev's counters in the step's namespace"},
      });
  spec.background = "background";
  spec.undo_with = {"background", "undo"};
  spec.example =
      "- name: client\n"
      "  exec:\n"
      "    argv: [ibv_rc_pingpong, -d, rxe1, -g, \"1\", 10.20.0.1]\n"
      "    extract: {usec_per_iter: \"([0-9.]+) usec/iter\"}\n"
      "  netns: b\n"
      "  timeout: 30s\n"
      "  expect: {exit: 0, stdout: \"~ bytes in\", usec_per_iter: \"> 0\"}\n";
  spec.default_timeout = Duration(60'000);
  return Kind{std::move(spec), run_exec, undo_exec};
}

namespace {

void validate_exec(const nlohmann::json& params, const KindSpec::Complaint& complain) {
  const bool has_argv = params.contains("argv"), has_shell = params.contains("shell");
  if (has_argv == has_shell) complain("", "exec needs `argv` (a list) or `shell` (a string), one of them");
  if (has_argv && params["argv"].is_array() && params["argv"].empty()) complain("argv", "argv is empty: no program");
  if (params.contains("undo") && params["undo"].is_array() && params["undo"].empty())
    complain("undo", "undo is empty: no program");
  if (params.contains("env") && params["env"].is_object())
    for (const auto& [key, value] : params["env"].items())
      if (!valid_env_name(key))
        complain("env." + key,
                 fmt::format("'{}' is not an environment variable name (letters, digits, _)", excerpt(key)));
  if (params.contains("extract") && params["extract"].is_object()) {
    for (const auto& [fact, pattern] : params["extract"].items()) {
      if (!pattern.is_string()) continue;  // the parameter check said so
      auto compiled = Regex::compile(pattern.get<std::string>());
      if (!compiled)
        complain("extract." + fact, compiled.error().message);
      else if (compiled->groups() < 1)
        complain("extract." + fact, fmt::format("regex '{}' has no group: put what the fact takes in ( )",
                                                excerpt(pattern.get<std::string>())));
    }
  }
  const bool background = params.value("background", false) == true;
  if (params.contains("ready")) {
    if (!background) complain("ready", "ready is for a background program: add `background: true`");
    if (params["ready"].is_object() && params["ready"].size() != 1)
      complain("ready", "ready takes one of tcp, udp, rdma_cm, log, file, exec");
    if (params["ready"].is_object() && params["ready"].contains("log") && params["ready"]["log"].is_string())
      if (auto r = Regex::compile(params["ready"]["log"].get<std::string>()); !r)
        complain("ready.log", r.error().message);
    if (params["ready"].is_object() && params["ready"].contains("exec") && params["ready"]["exec"].is_array() &&
        params["ready"]["exec"].empty())
      complain("ready.exec", "ready.exec is empty: no program");
  }
  if (background)
    for (const char* key : {"parse", "extract", "output"})
      if (params.contains(key))
        complain(key, fmt::format("{} is not for a background program: its output is read by the `wait` step's "
                                  "stdout and stderr facts",
                                  key));
  if (params.contains("output") && params["output"].is_string()) {
    const std::string& name = params["output"].get_ref<const std::string&>();
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      complain("output", "output is a file name under --output-dir (no '/'): fio-run");
  }
}

// The text a value of the program's JSON becomes: numbers, bools and
// strings as they are; objects and arrays are walked into.
void flatten(const nlohmann::json& value, const std::string& path, nlohmann::json& facts, std::size_t& count) {
  if (count > kMaxParsedFacts) return;
  if (value.is_object() || value.is_array()) {
    std::size_t i = 0;
    for (auto it = value.begin(); it != value.end(); ++it, ++i) {
      const std::string key = value.is_object() ? it.key() : std::to_string(i);
      flatten(*it, path.empty() ? key : path + "." + key, facts, count);
    }
    return;
  }
  if (path.empty()) return;
  ++count;
  facts[path] = value;
}

// A fact's value from extracted text: a number when it reads as one.
nlohmann::json extracted_value(const std::string& text) {
  if (!text.empty() && text.size() <= 32 && text.find_first_not_of("0123456789.-+eE") == std::string::npos) {
    try {
      std::size_t used = 0;
      if (text.find_first_of(".eE") == std::string::npos) {
        const long long n = std::stoll(text, &used);
        if (used == text.size()) return n;
      } else {
        const double d = std::stod(text, &used);
        if (used == text.size()) return d;
      }
    } catch (const std::exception&) {
      // not a number after all: kept as text
    }
  }
  return text;
}

std::string tail_of(const std::string& text, std::size_t n) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

std::vector<std::string> strings_of(const nlohmann::json& list) {
  std::vector<std::string> out;
  for (const auto& item : list) out.push_back(item.get<std::string>());
  return out;
}

std::map<std::string, std::string> env_of(const nlohmann::json& env) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : env.items()) out[key] = value.is_string() ? value.get<std::string>() : value.dump();
  return out;
}

// What the step's undo does: stop the background program the step started
// (found with its children by the token in their environment), then run the
// user's undo command. One of them at least.
struct ExecRecord {
  static constexpr std::string_view kOp = "exec";
  std::string token;                                      // "RXERUN_TOKEN=SCENARIO/STEP/RANDOM"; "": nothing to stop
  std::string program;                                    // the background program's name, for messages
  std::vector<std::string> argv;                          // the undo command; empty: none
  std::optional<std::map<std::string, std::string>> env;  // its environment: the step's `env`, when given
  std::string cwd;                                        // its directory; "": rxerun's

  nlohmann::json to_args() const {
    nlohmann::json args = {{"op", kOp}};
    if (!token.empty()) {
      args["token"] = token;
      args["program"] = program;
    }
    if (!argv.empty()) {
      args["argv"] = argv;
      if (env) args["env"] = *env;
      if (!cwd.empty()) args["cwd"] = cwd;
    }
    return args;
  }
  static Result<ExecRecord> read(JournalArgs& a) {
    ExecRecord r;
    if (a.has("token")) {
      r.token = a.text("token");
      if (r.token.rfind(std::string(kTokenVariable) + "=", 0) != 0 || r.token.size() < std::strlen(kTokenVariable) + 17)
        a.refuse("token", std::string(kTokenVariable) + "=SCENARIO/STEP/RANDOM");
    }
    r.program = a.has("program") ? a.text("program") : "the program";
    if (a.has("argv")) {
      r.argv = a.texts("argv");
      if (r.argv.empty()) a.refuse("argv", "a program and its arguments");
    }
    if (a.has("cwd")) r.cwd = a.text("cwd");
    const nlohmann::json env = a.object("env", true);
    if (a.has("env")) r.env.emplace();
    for (const auto& [key, value] : env.items()) {
      if (!valid_env_name(key) || !value.is_string()) {
        a.refuse("env", "a map of environment variable names to strings");
        break;
      }
      (*r.env)[key] = value.get<std::string>();
    }
    if (r.token.empty() && r.argv.empty()) a.refuse("argv", "a program to run, or a token to stop");
    if (!a.ok()) return a.error();
    return r;
  }
};

// The whole of one stream, written as it comes to a file under
// --output-dir; renamed into place when the step ends.
struct OutputFile {
  std::optional<AtomicFile> file;
  std::string shown;
  std::optional<Error> failed;  // the first write that failed
  void write(std::string_view data) {
    if (!file || failed) return;
    if (auto r = file->write(data); !r) failed = r.error();
  }
};

StepResult run_exec(const Params& params, StepContext& ctx) {
  auto& sys = ctx.sys();
  sys::ToolSpec spec;
  spec.argv = params.has("argv") ? strings_of(params.at("argv"))
                                 : std::vector<std::string>{"/bin/sh", "-c", params.str("shell")};
  if (params.has("env")) spec.env = env_of(params.at("env"));
  if (params.has("cwd")) spec.cwd = params.str("cwd");
  if (params.has("stdin")) spec.input = params.str("stdin");
  const bool parse_json = params.has("parse");
  spec.keep_bytes = parse_json ? kParseBytes : kProgramFactBytes;
  spec.what = "run " + program_name(spec.argv);
  const std::string program = program_name(spec.argv);

  nlohmann::json facts = nlohmann::json::object();
  OutputFile out_file, err_file;
  if (params.has("output")) {
    const std::string name = params.str("output");
    for (auto [file, suffix] : {std::pair<OutputFile*, const char*>{&out_file, ".stdout"}, {&err_file, ".stderr"}}) {
      auto path = ctx.output_path(name + suffix);
      if (!path) return StepResult::error(params.where("output") + ": " + path.error().message);
      if (!sys.recorder) {
        auto created = AtomicFile::create(path->path, "program output");
        if (!created) return StepResult::error(params.where("output") + ": " + created.error().message);
        file->file.emplace(std::move(*created));
      }
      file->shown = path->shown;
    }
    spec.copy_out = [&out_file](std::string_view data) { out_file.write(data); };
    spec.copy_err = [&err_file](std::string_view data) { err_file.write(data); };
    facts["stdout_file"] = out_file.shown;
    facts["stderr_file"] = err_file.shown;
  }

  // The journal entry, before the program starts: the undo command, and for
  // a background program the token that finds it and its children later.
  const bool background = params.flag("background");
  ExecRecord undo;
  std::string undo_summary;
  if (background) {
    const std::string token = ctx.scenario() + "/" + ctx.step().name + "/" + sys.tools.random_word(16);
    spec.env[kTokenVariable] = token;
    undo.token = std::string(kTokenVariable) + "=" + token;
    undo.program = program;
    undo_summary = "stop " + program + " and whatever it started";
  }
  if (params.has("undo")) {
    undo.argv = strings_of(params.at("undo"));
    if (params.has("env")) undo.env = env_of(params.at("env"));
    undo.cwd = spec.cwd;
    undo_summary += (undo_summary.empty() ? "run " : ", then run ") + shell_join(undo.argv);
  }
  // No footprint: removing the namespace neither stops a program nor undoes
  // what the command does.
  if (background || !undo.argv.empty()) RXERUN_TRY(ctx.will_change(undo.to_args(), undo_summary));

  if (background) return start_background(params, ctx, spec, program);

  RXERUN_TRY_ASSIGN(const CounterWindow window, CounterWindow::open(ctx, {std::nullopt}));

  const auto start = sys.clock.now();
  RXERUN_TRY_ASSIGN(const auto started, sys.tools.start(spec));
  auto& tool = *started;
  const sys::ToolWait waited = tool.wait(ctx.deadline(), sys.interrupt);
  const sys::ToolStop stop = tool.stop(kProgramStopGrace);
  facts.update(program_facts(tool, stop, program));
  facts["duration_s"] = rounded(std::chrono::duration<double>(sys.clock.now() - start).count(), 3);
  RXERUN_TRY(window.close(ctx, facts));

  std::vector<std::string> hints;
  for (auto* file : {&out_file, &err_file}) {
    if (!file->file) continue;
    if (!file->failed) {
      if (auto r = file->file->commit(); !r) file->failed = r.error();
    }
    if (file->failed) hints.push_back("could not keep the output in " + file->shown + ": " + file->failed->message);
  }
  if (parse_json && waited == sys::ToolWait::Exited) parse_stdout(tool, facts, hints);
  if (params.has("extract")) RXERUN_TRY(extract_facts(params, tool, facts, hints));

  StepResult result = program_result(waited, tool, stop, program, std::move(facts));
  result.hints.insert(result.hints.end(), hints.begin(), hints.end());
  return result;
}

void parse_stdout(const sys::RunningTool& tool, nlohmann::json& facts, std::vector<std::string>& hints) {
  if (tool.out_total() > tool.out().size()) {
    hints.push_back(
        fmt::format("stdout was {} bytes: parse: json reads at most {} MiB", tool.out_total(), kParseBytes >> 20));
    return;
  }
  auto parsed = nlohmann::json::parse(tool.out(), nullptr, false);
  if (parsed.is_discarded()) {
    hints.push_back("stdout is not JSON: nothing parsed");
    return;
  }
  std::size_t count = 0;
  nlohmann::json found = nlohmann::json::object();
  flatten(parsed, "", found, count);
  if (count > kMaxParsedFacts) {
    hints.push_back(fmt::format("stdout's JSON has more than {} values: none kept as facts", kMaxParsedFacts));
    return;
  }
  for (auto& [key, value] : found.items())
    if (!facts.contains(key)) facts[key] = std::move(value);
}

Result<void> extract_facts(const Params& params, const sys::RunningTool& tool, nlohmann::json& facts,
                           std::vector<std::string>& hints) {
  for (const auto& [fact, pattern] : params.at("extract").items()) {
    auto regex = Regex::compile(pattern.get<std::string>());
    if (!regex) return make_error(params.where("extract." + fact) + ": " + regex.error().message);
    std::optional<std::string> value;
    for (const std::string* text : {&tool.out(), &tool.err()}) {
      auto got = regex->first_group(tail_of(*text, kProgramFactBytes));
      if (!got) {
        hints.push_back("extract " + fact + ": " + got.error().message);
        break;
      }
      if ((value = *got)) break;
    }
    if (value)
      facts[fact] = extracted_value(*value);
    else
      hints.push_back(
          fmt::format("extract {}: '{}' matched nothing in the output", fact, excerpt(pattern.get<std::string>())));
  }
  return {};
}

// One look at whether the background program is ready.
Result<bool> ready_now(const Params& ready, StepContext& ctx, sys::RunningTool& tool) {
  auto& sys = ctx.sys();
  if (ready.has("tcp"))
    return sys.tools.listening(sys::SocketProto::Tcp, static_cast<std::uint16_t>(ready.integer("tcp")));
  if (ready.has("udp"))
    return sys.tools.listening(sys::SocketProto::Udp, static_cast<std::uint16_t>(ready.integer("udp")));
  if (ready.has("rdma_cm")) return sys.rdma.cm_listening(static_cast<std::uint16_t>(ready.integer("rdma_cm")));
  if (ready.has("file")) return sys.tools.exists(ready.str("file"));
  if (ready.has("log")) {
    RXERUN_TRY_ASSIGN(const Regex regex, Regex::compile(ready.str("log")));
    tool.poll();  // reads what it wrote meanwhile
    RXERUN_TRY_ASSIGN(const bool in_out, regex.search(tool.out()));
    if (in_out) return true;
    return regex.search(tool.err());
  }
  if (ready.has("exec")) {
    sys::ToolSpec probe;
    probe.argv = strings_of(ready.at("exec"));
    probe.what = "ready? " + program_name(probe.argv);
    probe.keep_bytes = kProgramFactBytes;
    RXERUN_TRY_ASSIGN(const auto started, sys.tools.start(probe));
    const sys::ToolWait w = started->wait(ctx.deadline(), sys.interrupt);
    const sys::ToolStop stop = started->stop(kProgramStopGrace);
    return w == sys::ToolWait::Exited && stop.status && stop.status->ok();
  }
  return true;  // no ready: started is ready
}

StepResult start_background(const Params& params, StepContext& ctx, sys::ToolSpec& spec, const std::string& program) {
  auto& sys = ctx.sys();
  spec.keep_bytes = kProgramFactBytes;
  const auto start = sys.clock.now();
  RXERUN_TRY_ASSIGN(std::unique_ptr<sys::RunningTool> tool, sys.tools.start(spec));
  nlohmann::json facts = {{"pid", tool->pid()}};
  const Params ready = params.has("ready") ? params.object("ready") : params;
  const bool probes = params.has("ready");
  std::optional<std::string> probe_error;
  for (;;) {
    if (probes) {
      auto up = ready_now(ready, ctx, *tool);
      if (!up) {
        probe_error = up.error().message;
      } else if (*up) {
        break;
      }
    } else {
      break;
    }
    if (tool->poll()) {
      const sys::ToolStop stop = tool->stop(kProgramStopGrace);
      facts.update(program_facts(*tool, stop, program));
      const std::string said = last_lines(tool->err(), tool->out());
      return StepResult::fail(
          fmt::format("{} ended before it was ready: {}{}", program,
                      stop.status ? stop.status->describe() : "no status", said.empty() ? "" : ": " + said),
          std::move(facts));
    }
    const WaitStatus slept = ctx.sleep_for(kReadyPoll);
    if (slept == WaitStatus::Done) continue;
    const sys::ToolStop stop = tool->stop(kProgramStopGrace);
    facts.update(program_facts(*tool, stop, program));
    if (slept == WaitStatus::Interrupted) return StepResult::error("interrupted");
    const std::string said = last_lines(tool->err(), tool->out());
    StepResult r = StepResult::timeout(fmt::format("{} was not ready within the step's timeout (stopped){}", program,
                                                   said.empty() ? "" : "; it last said: " + said),
                                       std::move(facts));
    if (probe_error) r.hints.push_back("the readiness probe failed: " + *probe_error);
    return r;
  }
  facts["ready_s"] = rounded(std::chrono::duration<double>(sys.clock.now() - start).count(), 3);
  ctx.keep_running(std::move(tool));
  return StepResult::ok(std::move(facts));
}

Result<nlohmann::json> undo_exec(const nlohmann::json& args, UndoContext& ctx) {
  RXERUN_TRY_ASSIGN(const auto record, read_record<ExecRecord>(args, ctx));
  const std::string& token = record.token;
  const std::string& program = record.program;
  sys::ToolSpec spec;
  spec.argv = record.argv;
  spec.cwd = record.cwd;
  if (record.env) spec.env = *record.env;

  auto& sys = ctx.sys();
  nlohmann::json facts = nlohmann::json::object();
  if (!token.empty()) {
    // In the run that started it: stopped and reaped, its end as facts.
    if (auto tool = ctx.take_running()) {
      const sys::ToolStop stop = tool->stop(kProgramStopGrace);
      facts = program_facts(*tool, stop, program);
    }
    // What it started outside its process group, or all of it after a crash.
    RXERUN_TRY_ASSIGN(const auto stopped, sys.tools.stop_marked(token, kProgramStopGrace));
    facts["stopped_after"] = stopped.size();
  }
  if (spec.argv.empty()) return facts;

  spec.keep_bytes = kProgramFactBytes;
  spec.what = "undo: run " + spec.argv.front();
  RXERUN_TRY_ASSIGN(const auto started, sys.tools.start(spec));
  auto& tool = *started;
  const sys::ToolWait waited = tool.wait(sys.clock.now() + kUndoTimeout, sys.interrupt);
  const sys::ToolStop stop = tool.stop(kProgramStopGrace);
  const std::string said = last_lines(tool.err(), tool.out());
  if (waited == sys::ToolWait::Deadline)
    return make_error(fmt::format("{} was still running after {} (stopped){}", shell_join(spec.argv),
                                  format_duration(kUndoTimeout), said.empty() ? "" : ": " + said));
  if (waited == sys::ToolWait::Interrupted) return make_error("interrupted while running " + shell_join(spec.argv));
  if (!stop.status || !stop.status->ok())
    return make_error(fmt::format("{} ended with {}{}", shell_join(spec.argv),
                                  stop.status ? stop.status->describe() : "no status",
                                  said.empty() ? "" : ": " + said));
  return facts;
}

}  // namespace

}  // namespace rxerun::steps
