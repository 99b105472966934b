# bash completion for rxerun(1)                             -*- shell-script -*-
# Installed as bash-completion/completions/rxerun. Works with the
# bash-completion helpers when they are loaded, and without them.
#
# The option table mirrors engine/cli.cpp; tests/e2e/completion.sh checks it.
# Step kinds are never listed here: `rxerun steps` prints them, asked of the
# very binary being completed (a build tree's one works too).

_rxerun_commands="run validate plan graph cleanup steps schema decode vm"

# The options of a command ("" = before any command).
_rxerun_options() {
  case $1 in
    run) echo "--help --plugin --var --only --skip --keep --force --report -v --verbose -q --quiet --color --vm --host --kernel --modules -j --jobs --fail-fast --shard --output-dir --kernel-health" ;;
    validate) echo "--help --plugin --var" ;;
    plan) echo "--help --plugin --var --only --skip" ;;
    graph) echo "--help --plugin --var -o --output" ;;
    cleanup) echo "--help --plugin --var -v --verbose -q --quiet --color" ;;
    steps) echo "--help --plugin --markdown" ;;
    schema) echo "--help --plugin" ;;
    decode) echo "--help --json --summary" ;;
    vm) echo "--help --kernel --timeout -q --quiet" ;;
    # Options before a scenario make an implicit run (`rxerun -v lab.yaml`).
    "") echo "--help -h --version --plugin --var --only --skip --keep --force --report -v --verbose -q --quiet --color --vm --host --kernel --modules -j --jobs --fail-fast --shard --output-dir --kernel-health" ;;
  esac
}

# Options that take a value as the next word (or after `=`).
_rxerun_takes_value() {
  case $1 in
    --plugin | --var | --only | --skip | --report | --color | --kernel | --modules | --timeout | --output-dir | -j | --jobs | --shard | --kernel-health | -o | --output) return 0 ;;
  esac
  return 1
}

# Scenario files: *.yaml, *.yml and directories (to descend into).
_rxerun_scenarios() {
  if declare -F _filedir >/dev/null; then
    _filedir '@(yaml|yml)'
    return
  fi
  local IFS=$'\n' f
  for f in $(compgen -f -- "$cur"); do
    if [[ -d $f || $f == *.yaml || $f == *.yml ]]; then COMPREPLY+=("$f"); fi
  done
  ((${#COMPREPLY[@]})) && compopt -o filenames 2>/dev/null
}

# Capture files: *.pcap, *.pcapng, *.cap and directories (to descend into).
_rxerun_captures() {
  if declare -F _filedir >/dev/null; then
    _filedir '@(pcap|pcapng|cap)'
    return
  fi
  local IFS=$'\n' f
  for f in $(compgen -f -- "$cur"); do
    if [[ -d $f || $f == *.pcap || $f == *.pcapng || $f == *.cap ]]; then COMPREPLY+=("$f"); fi
  done
  ((${#COMPREPLY[@]})) && compopt -o filenames 2>/dev/null
}

# The step kinds: the first column of `rxerun steps`.
_rxerun_kinds() {
  local bin=${words[0]} kind rest
  # shellcheck disable=SC2088 # a literal ~/ as typed on the command line
  [[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
  command -v -- "$bin" >/dev/null 2>&1 || return 0
  while read -r kind rest; do
    [[ -n $kind ]] && printf '%s\n' "$kind"
  done < <(LC_ALL=C "$bin" steps 2>/dev/null)
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

  # The command (explicit, or the implicit run) and how many positional
  # arguments it already has.
  local cmd="" npos=0 i w
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    if [[ $w == -* ]]; then
      [[ $w != *=* ]] && _rxerun_takes_value "$w" && ((i++))
    elif [[ -z $cmd ]]; then
      if [[ " $_rxerun_commands " == *" $w "* ]]; then
        cmd=$w
      else
        cmd=run
        npos=1
      fi
    else
      ((npos++))
    fi
  done

  case $prev in
    --output-dir | --modules)
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      compopt -o filenames 2>/dev/null
      return
      ;;
    --plugin)
      # Shared objects, and directories to descend into.
      mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.so' -- "$cur")
      compopt -o filenames 2>/dev/null
      return
      ;;
    -o | --output)
      # graph's SVG file: any file name, directories to descend into.
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      compopt -o filenames 2>/dev/null
      return
      ;;
    --color)
      mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur")
      return
      ;;
    --kernel-health)
      mapfile -t COMPREPLY < <(compgen -W "fail warn off" -- "$cur")
      return
      ;;
    --report)
      if [[ $cur == json:* || $cur == junit:* ]]; then
        # FORMAT:PATH: files after the colon. Readline's word starts after
        # the last colon when COMP_WORDBREAKS has one (the default).
        local prefix=${cur%%:*}: f
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
      return
      ;;
    --var | --only | --skip)
      return # free text
      ;;
  esac

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_rxerun_options "$cmd")" -- "$cur")
    return
  fi

  case $cmd in
    "")
      mapfile -t COMPREPLY < <(compgen -W "$_rxerun_commands" -- "$cur")
      _rxerun_scenarios
      ;;
    validate)
      _rxerun_scenarios
      ;;
    run)
      _rxerun_scenarios # a suite: any number of files and directories
      ;;
    plan | graph | cleanup)
      ((npos == 0)) && _rxerun_scenarios
      ;;
    decode)
      ((npos == 0)) && _rxerun_captures
      ;;
    steps)
      ((npos == 0)) && mapfile -t COMPREPLY < <(compgen -W "$(_rxerun_kinds)" -- "$cur")
      ;;
    vm)
      ((npos == 0)) && mapfile -t COMPREPLY < <(compgen -W "setup status exec" -- "$cur")
      ;;
  esac
  return 0
}

complete -F _rxerun rxerun
