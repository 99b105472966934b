#include "app/cli_completion.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>

#include "app/cli_vm.h"
#include "base/strings.h"

namespace rxerun {

namespace {

// What completes the value of an option or a positional argument, by the
// name of the value: a class the script's _rxerun_complete_value knows.
// "words:A B C" for a fixed set; "free" for text nothing can guess; "" for
// a flag.
std::string completion_class(CLI::Option* o) {
  const std::string type = value_name(*o);
  if (!o->get_positional() && type.empty()) return "";
  try {
    std::string values = o->get_validator()->get_description();
    if (values.starts_with('{') && values.ends_with('}')) {
      values = values.substr(1, values.size() - 2);
      std::replace(values.begin(), values.end(), ',', ' ');
      return "words:" + values;
    }
  } catch (const CLI::OptionNotFound&) {
  }
  if (o->check_lname("plugin")) return "plugin";
  if (type == "SCENARIO" || type == "SCENARIO|DIR") return "scenarios";
  if (type == "CAPTURE") return "captures";
  if (type == "KIND") return "kinds";
  if (type == "COMMAND") return "commands";
  if (type.starts_with("PROGRAM")) return "program";
  if (type == "FILE" || type == "PATH") return "file";
  if (type == "DIR") return "dir";
  if (type == "FORMAT:PATH") return "report";
  if (type == "VERSION") return "kernels";
  if (type.starts_with("VERSION[")) return "kernel-matrix";
  return "free";
}

// The options people type (not the hidden ones), --help among them.
std::vector<CLI::Option*> completed_options(CLI::App& app) {
  std::vector<CLI::Option*> shown;
  for (CLI::Option* o : app.get_options())
    if (!o->get_positional() && !o->get_group().empty()) shown.push_back(o);
  return shown;
}

std::vector<std::string> option_names(const CLI::Option* o) {
  std::vector<std::string> names;
  for (const auto& n : o->get_snames()) names.push_back("-" + n);
  for (const auto& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

// The case arms of each generated function, for every command under `app`.
struct CompletionTables {
  std::string subcommands;  // CMD) echo "SUB SUB" ;;
  std::string options;      // CMD) echo "--a --b" ;;
  std::string values;       // "CMD --opt") echo CLASS ;;
  std::string positional;   // CMD) echo "CLASS once|many" ;;
};

void add_tables(CLI::App& app, std::span<const Command> commands, const std::string& prefix, CompletionTables& t) {
  std::vector<std::string> names;
  for (const Command& c : commands)
    if (*c.help) names.emplace_back(c.name);
  if (!prefix.empty() && !names.empty())
    t.subcommands += fmt::format("    \"{}\") echo \"{}\" ;;\n", prefix, join(names, " "));
  for (const Command& c : commands) {
    if (!*c.help) continue;
    CLI::App* cmd = app.get_subcommand(c.name);
    const std::string path = prefix.empty() ? c.name : prefix + " " + c.name;
    std::vector<std::string> words;
    for (CLI::Option* o : completed_options(*cmd)) {
      for (const auto& name : option_names(o)) {
        words.push_back(name);
        if (const std::string cls = completion_class(o); !cls.empty())
          t.values += fmt::format("    \"{} {}\") echo \"{}\" ;;\n", path, name, cls);
      }
    }
    t.options += fmt::format("    \"{}\") echo \"{}\" ;;\n", path, join(words, " "));
    for (CLI::Option* o : cmd->get_options()) {
      if (!o->get_positional()) continue;
      const bool many = o->get_items_expected_max() > 1 || o->get_expected_max() > 1;
      t.positional += fmt::format("    \"{}\") echo \"{} {}\" ;;\n", path, completion_class(o), many ? "many" : "once");
      break;  // the first positional decides: no command has two
    }
    add_tables(*cmd, c.subcommands, path, t);
  }
}

// The completion's logic; the tables above it say what each command takes.
constexpr const char* kCompletionLogic = R"bash(
# The lab kernels: those rxerun knows, and those prepared in the cache (as
# `rxerun vm status` finds them: $RXERUN_CACHE_DIR, else root's
# /var/cache/rxerun or the user's ~/.cache/rxerun, and root's).
_rxerun_kernel_labels() {
  local cache=${RXERUN_CACHE_DIR:-} d
  if [[ -z $cache ]]; then
    if ((EUID == 0)); then
      cache=/var/cache/rxerun
    elif [[ ${XDG_CACHE_HOME:-} == /* ]]; then
      cache=$XDG_CACHE_HOME/rxerun
    else
      cache=${HOME:-/tmp}/.cache/rxerun
    fi
  fi
  {
    printf '%s\n' $_rxerun_known_kernels
    for d in "$cache"/kernels/*/ /var/cache/rxerun/kernels/*/; do
      [[ -d $d ]] || continue
      d=${d%/}
      printf '%s\n' "${d##*/}"
    done
  } | LC_ALL=C sort -u
}

# Files matching an extended glob pattern, and directories to descend into.
_rxerun_files() {
  if declare -F _filedir >/dev/null; then
    _filedir "$1"
    return
  fi
  local IFS=$'\n' f
  for f in $(compgen -f -- "$cur"); do
    # shellcheck disable=SC2053 # $1 is a pattern
    if [[ -d $f || $f == *.$1 ]]; then COMPREPLY+=("$f"); fi
  done
  ((${#COMPREPLY[@]})) && compopt -o filenames 2>/dev/null
}

# The step kinds: the first column of `rxerun steps`, asked of the very
# binary being completed (a build tree's one works too).
_rxerun_kinds() {
  local bin=${words[0]} kind rest
  # shellcheck disable=SC2088 # a literal ~/ as typed on the command line
  [[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
  command -v -- "$bin" >/dev/null 2>&1 || return 0
  while read -r kind rest; do
    [[ -n $kind ]] && printf '%s\n' "$kind"
  done < <(LC_ALL=C "$bin" steps 2>/dev/null)
}

# The value of class $1 (from _rxerun_value_class or _rxerun_positional) in $cur.
_rxerun_complete_value() {
  local cls=$1 prefix
  case $cls in
    words:*) mapfile -t COMPREPLY < <(compgen -W "${cls#words:}" -- "$cur") ;;
    scenarios) _rxerun_files '@(yaml|yml)' ;;
    captures) _rxerun_files '@(pcap|pcapng|cap)' ;;
    plugin) _rxerun_files 'so' ;;
    kinds) mapfile -t COMPREPLY < <(compgen -W "$(_rxerun_kinds)" -- "$cur") ;;
    file)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      compopt -o filenames 2>/dev/null
      ;;
    dir)
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      compopt -o filenames 2>/dev/null
      ;;
    program)
      mapfile -t COMPREPLY < <(compgen -c -- "$cur")
      ;;
    kernels) mapfile -t COMPREPLY < <(compgen -W "$(_rxerun_kernel_labels)" -- "$cur") ;;
    kernel-matrix)
      # A label, a comma-separated list of them, all, or the path of a kernel of one's own.
      if [[ $cur == */* || $cur == .* || $cur == "~"* ]]; then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        compopt -o filenames 2>/dev/null
        return
      fi
      prefix=
      [[ $cur == *,* ]] && prefix=${cur%,*},
      mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$(_rxerun_kernel_labels) $([[ -z $prefix ]] && echo all)" -- "${cur##*,}")
      ;;
    report)
      if [[ $cur == json:* || $cur == junit:* ]]; then
        # FORMAT:PATH: files after the colon. Readline's word starts after
        # the last colon when COMP_WORDBREAKS has one (the default).
        local f i
        prefix=${cur%%:*}:
        while IFS= read -r f; do
          [[ -d $f ]] && f+=/
          COMPREPLY+=("$prefix$f")
        done < <(compgen -f -- "${cur#*:}")
        compopt -o nospace 2>/dev/null
        if [[ $COMP_WORDBREAKS == *:* ]]; then
          local colon_word=${cur%"${cur##*:}"}
          for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$colon_word"}; done
        fi
      else
        mapfile -t COMPREPLY < <(compgen -W "json: junit:" -- "$cur")
        compopt -o nospace 2>/dev/null
      fi
      ;;
  esac
}

# Without bash-completion: words/cword from COMP_WORDS, with the words that
# COMP_WORDBREAKS split at `=` and `:` glued back (`--color=al`, `json:out`).
_rxerun_plain_words() {
  words=()
  cword=0
  local j w n=-1 glue=0
  for ((j = 0; j < ${#COMP_WORDS[@]}; j++)); do
    w=${COMP_WORDS[j]}
    if ((n >= 0)) && [[ $w == "=" || $w == ":" || $glue == 1 ]]; then
      words[n]+=$w
      [[ $w == "=" || $w == ":" ]] && glue=1 || glue=0
    else
      words[++n]=$w
      glue=0
    fi
    ((j == COMP_CWORD)) && cword=$n
  done
  cur=${words[cword]}
  prev=
  ((cword > 0)) && prev=${words[cword - 1]}
  if [[ $cur == --?*=* ]]; then
    prev=${cur%%=*}
    cur=${cur#*=}
  fi
}

_rxerun() {
  # shellcheck disable=SC2034 # split is set by _init_completion -s
  local cur prev words cword split
  if declare -F _init_completion >/dev/null; then
    _init_completion -s -n : || return
  else
    COMPREPLY=()
    _rxerun_plain_words
  fi

  # The command (`vm setup`; options or a scenario first: the implicit
  # run) and how many positional arguments it already has.
  local cmd="" npos=0 i w subs
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    if [[ $w == -* ]]; then
      [[ $w != *=* && -n $(_rxerun_value_class "${cmd:-run}" "$w") ]] && ((i++))
    elif [[ -z $cmd ]]; then
      if [[ " $_rxerun_commands " == *" $w "* ]]; then
        cmd=$w
      else
        cmd=run
        npos=1
      fi
    else
      subs=$(_rxerun_subcommands "$cmd")
      if ((npos == 0)) && [[ -n $subs && " $subs " == *" $w "* ]]; then
        cmd="$cmd $w"
      else
        ((npos++))
      fi
    fi
  done

  local cls=""
  [[ $prev == -* ]] && cls=$(_rxerun_value_class "${cmd:-run}" "$prev")
  if [[ -n $cls ]]; then
    _rxerun_complete_value "$cls"
    return 0
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_rxerun_options "$cmd")" -- "$cur")
    return 0
  fi
  if [[ -z $cmd ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$_rxerun_commands" -- "$cur")
    _rxerun_complete_value scenarios
    return 0
  fi
  subs=$(_rxerun_subcommands "$cmd")
  if [[ -n $subs ]]; then
    ((npos == 0)) && mapfile -t COMPREPLY < <(compgen -W "$subs" -- "$cur")
    return 0
  fi
  local positional
  positional=$(_rxerun_positional "$cmd")
  [[ -z $positional ]] && return 0
  cls=${positional% *}
  if [[ $cls == commands ]]; then
    # help's COMMAND: a command, then a command of it.
    if ((npos == 0)); then
      mapfile -t COMPREPLY < <(compgen -W "$_rxerun_commands" -- "$cur")
    elif ((npos == 1)); then
      mapfile -t COMPREPLY < <(compgen -W "$(_rxerun_subcommands "${words[cword - 1]}")" -- "$cur")
    fi
    return 0
  fi
  if [[ $cls == program ]] && ((npos > 0)); then cls=file; fi
  if ((npos == 0)) || [[ $positional == *" many" ]]; then _rxerun_complete_value "$cls"; fi
  return 0
}

complete -F _rxerun rxerun
)bash";

}  // namespace

std::string bash_completion(CLI::App& app, std::span<const Command> commands) {
  CompletionTables t;
  add_tables(app, commands, "", t);
  std::vector<std::string> names;
  for (const Command& c : commands)
    if (*c.help) names.emplace_back(c.name);
  // Options before a scenario make an implicit run (`rxerun -v lab.yaml`).
  std::vector<std::string> top = {"-h", "--help", "--version"};
  for (CLI::Option* o : completed_options(*app.get_subcommand("run")))
    for (const auto& name : option_names(o))
      if (name != "-h" && name != "--help") top.push_back(name);
  const std::vector<std::string> kernels = known_kernels();
  std::string out =
      "# bash completion for rxerun(1)                             -*- shell-script -*-\n"
      "# Generated by `rxerun help --bash-completion` (scripts/generate) from the command line's\n"
      "# declarations: edit those, not this file. Installed as bash-completion/completions/rxerun;\n"
      "# works with the bash-completion helpers when they are loaded, and without them.\n\n";
  out += fmt::format("_rxerun_commands=\"{}\"\n", join(names, " "));
  out += fmt::format("_rxerun_known_kernels=\"{}\"\n\n", join(kernels, " "));
  out += "# The commands of a command that has them (vm).\n_rxerun_subcommands() {\n  case $1 in\n" + t.subcommands +
         "  esac\n}\n\n";
  out +=
      "# The options of a command (\"\": before any command, the implicit run's).\n_rxerun_options() {\n"
      "  case $1 in\n" +
      t.options + fmt::format("    \"\") echo \"{}\" ;;\n", join(top, " ")) + "  esac\n}\n\n";
  out +=
      "# What completes the value of a command's option (nothing: a flag).\n_rxerun_value_class() {\n"
      "  case \"$1 $2\" in\n" +
      t.values + "  esac\n}\n\n";
  out +=
      "# What completes a command's positional arguments: CLASS once|many.\n_rxerun_positional() {\n"
      "  case $1 in\n" +
      t.positional + "  esac\n}\n";
  out += kCompletionLogic;
  return out;
}

}  // namespace rxerun
