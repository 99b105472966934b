# Bash completion (completions/rxerun.bash): what `rxerun help
# --bash-completion` makes of the command line now (stale: scripts/generate);
# commands and vm's commands, scenario files, each command's options exactly
# as its --help has them, option values (kernel names among them), and step
# kinds asked of the real binary. Runs every check twice: with the
# bash-completion helpers, and with the script's plain fallback.
source "$(dirname "$0")/lib.sh"

expect_exit 0 "rxerun help --bash-completion" -- "$RXERUN" help --bash-completion
printf '%s\n' "$out" >"$WORK/generated.bash"
if diff -u completions/rxerun.bash "$WORK/generated.bash" >"$WORK/diff"; then
  pass "completions/rxerun.bash is current"
else
  fail "completions/rxerun.bash is stale; regenerate with: scripts/generate"
  head -40 "$WORK/diff"
fi

BASH_COMPLETION=/usr/share/bash-completion/bash_completion
if [ ! -r "$BASH_COMPLETION" ]; then
  echo "bash-completion not installed ($BASH_COMPLETION missing)"
  exit 77
fi
# shellcheck disable=SC1090
source "$BASH_COMPLETION" || { echo "FAIL: cannot source $BASH_COMPLETION"; exit 1; }
source "$SRC/completions/rxerun.bash" || { echo "FAIL: cannot source completions/rxerun.bash"; exit 1; }
set +e  # completion functions return non-zero on purpose

func=$(complete -p rxerun 2>/dev/null | sed -n 's/.*-F \([^ ]*\).*/\1/p')
if [ -z "$func" ]; then
  echo "FAIL: completions/rxerun.bash registers no completion function for rxerun"
  exit 1
fi
pass "completion function for rxerun: $func"

mkdir -p "$WORK/empty" "$WORK/captures/sub"
# A kernel prepared in the cache, besides the ones rxerun knows (6.1, 7.3).
export RXERUN_CACHE_DIR="$WORK/cache"
mkdir -p "$RXERUN_CACHE_DIR/kernels/6.12"
touch "$WORK/captures/a.pcap" "$WORK/captures/b.pcapng" "$WORK/captures/notes.txt" "$WORK/captures/lab.yaml"

# complete ARGS: completes the last word of `rxerun ARGS` (a trailing space
# starts a new, empty word), with COMP_WORDS split the way bash splits them
# (also at the COMP_WORDBREAKS characters = and :). Sets $got to the sorted
# candidates, one space-separated line.
complete_args() {
  local args=$1 token piece
  COMP_WORDS=("$RXERUN")
  local -a tokens
  read -r -a tokens <<<"$args"
  for token in "${tokens[@]}"; do
    while [[ $token == *[=:]* ]]; do
      piece=${token%%[=:]*}
      [ -n "$piece" ] && COMP_WORDS+=("$piece")
      COMP_WORDS+=("${token:${#piece}:1}")
      token=${token:${#piece}+1}
    done
    [ -n "$token" ] && COMP_WORDS+=("$token")
  done
  [[ $args == *" " || -z $args ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="$RXERUN $args"
  COMP_POINT=${#COMP_LINE}
  COMP_TYPE=9
  COMP_KEY=9
  COMPREPLY=()
  local prev=""
  [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
  "$func" rxerun "${COMP_WORDS[COMP_CWORD]}" "$prev" >/dev/null 2>"$WORK/comp-err"
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | LC_ALL=C sort | tr '\n' ' ')
  got=${got% }
  if [ -s "$WORK/comp-err" ]; then fail "'rxerun $args' wrote to stderr: $(cat "$WORK/comp-err")"; fi
}

# complete_in DIR "ARGS": complete_args run from DIR.
complete_in() {
  pushd "$1" >/dev/null || { fail "cannot cd to $1"; return 1; }
  complete_args "$2"
  popd >/dev/null || exit 1
}

# expect_completion DIR "ARGS" "WANTED (sorted, space-separated)": exactly.
expect_completion() {
  complete_in "$1" "$2"
  if [ "$got" = "$3" ]; then pass "$mode: 'rxerun $2' -> [$got]"; else
    fail "$mode: 'rxerun $2' -> [$got], wanted [$3]"
  fi
}

# The long options `rxerun CMD --help` prints (without --help), sorted.
help_options() {
  "$RXERUN" "$@" --help 2>&1 | grep -oE -- '--[a-z][a-z-]*' | grep -vx -- '--help' | LC_ALL=C sort -u | tr '\n' ' '
}

kinds=$("$RXERUN" steps | awk '{print $1}' | LC_ALL=C sort | tr '\n' ' ')
kinds=${kinds% }
contains "$kinds" "sleep" "the binary lists sleep"
contains "$kinds" "revert" "the binary lists revert"

all_checks() {
  expect_completion "$WORK/empty" "pl" "plan"
  expect_completion "$WORK/empty" "" "cleanup decode graph help plan report run schema steps validate vm"
  expect_completion "$SRC" "steps sl" "sleep"
  expect_completion "$SRC" "steps " "$kinds"
  complete_in "$SRC" "steps "
  contains "$(tr ' ' '\n' <<<"$got")" "revert" "$mode: 'steps ' offers revert"
  contains "$(tr ' ' '\n' <<<"$got")" "sleep" "$mode: 'steps ' offers sleep"
  expect_completion "$SRC" "steps sleep " ""
  expect_completion "$SRC" "run --k" "--keep --kernel --kernel-health"
  expect_completion "$SRC" "vm " "exec setup status"
  expect_completion "$SRC" "vm ex" "exec"
  expect_completion "$SRC" "vm exec --t" "--timeout"
  expect_completion "$SRC" "run --color " "always auto never"
  expect_completion "$SRC" "run --color=al" "always"
  expect_completion "$SRC" "run --kernel-health " "fail off warn"
  expect_completion "$SRC" "cleanup --color n" "never"
  expect_completion "$SRC" "run scenarios/sel" "scenarios/selftest.yaml"
  expect_completion "$SRC/scenarios" "validate se" "selftest.yaml"
  expect_completion "$SRC/scenarios" "validate selftest.yaml se" "selftest.yaml"
  expect_completion "$SRC/scenarios" "sel" "selftest.yaml"
  expect_completion "$SRC" "scenarios/selftest.yaml --k" "--keep --kernel --kernel-health"
  expect_completion "$WORK/captures" "plan lab.yaml " "lab.yaml sub"
  expect_completion "$WORK/captures" "validate " "lab.yaml sub"
  expect_completion "$SRC/scenarios" "run selftest.yaml sel" "selftest.yaml"
  expect_completion "$SRC" "plan --only " ""
  expect_completion "$SRC" "run --report " "json: junit:"
  expect_completion "$SRC" "run --report ju" "junit:"
  expect_completion "$SRC" "run --report json:scenarios/sel" "scenarios/selftest.yaml"
  expect_completion "$WORK/empty" "de" "decode"
  expect_completion "$WORK/empty" "gr" "graph"
  expect_completion "$SRC" "graph scenarios/sel" "scenarios/selftest.yaml"
  expect_completion "$SRC" "graph scenarios/selftest.yaml " ""
  expect_completion "$WORK/captures" "graph -o no" "notes.txt"
  expect_completion "$WORK/captures" "graph lab.yaml --output a" "a.pcap"
  expect_completion "$SRC" "decode --" "--help --json --summary"
  expect_completion "$WORK/captures" "decode " "a.pcap b.pcapng sub"
  expect_completion "$WORK/captures" "decode a.pcap " ""
  expect_completion "$SRC" "validate --" "--help --host --json --kernel --plugin --var --var-file --vm"
  expect_completion "$SRC" "validate --kernel " "6.1 6.12 7.3 all"
  expect_completion "$SRC" "vm status --" "--help --json"
  expect_completion "$SRC" "vm status -" "--help --json -h"
  expect_completion "$SRC" "vm setup --" "--help --kernel --remove-snapshots"
  expect_completion "$SRC" "vm setup --kernel " "6.1 6.12 7.3"
  expect_completion "$SRC" "vm setup --kernel 6." "6.1 6.12"
  expect_completion "$SRC" "vm setup --kernel=7" "7.3"
  expect_completion "$SRC" "vm exec --kernel " "6.1 6.12 7.3"
  expect_completion "$SRC" "run --kernel " "6.1 6.12 7.3 all"
  expect_completion "$SRC" "run --kernel 6.1," "6.1,6.1 6.1,6.12 6.1,7.3"
  expect_completion "$WORK/captures" "run --kernel ./s" "./sub"
  expect_completion "$SRC" "lab.yaml --kernel 7" "7.3"
  expect_completion "$SRC" "vm status " ""
  expect_completion "$SRC" "help " "cleanup decode graph help plan report run schema steps validate vm"
  expect_completion "$SRC" "help vm " "exec setup status"
  expect_completion "$SRC" "help --" "--bash-completion --help --man"
  complete_in "$SRC" "validate --"
  contains "$(tr ' ' '\n' <<<"$got")" "--var" "$mode: 'validate --' offers --var"
  lacks "$(tr ' ' '\n' <<<"$got")" "--keep" "$mode: 'validate --' does not offer --keep"
  # Each command's long options are exactly those its --help prints.
  local cmd want
  for cmd in run validate plan graph cleanup steps schema decode help "vm setup" "vm status" "vm exec"; do
    # shellcheck disable=SC2086
    want="--help $(help_options $cmd)"
    want=$(tr ' ' '\n' <<<"$want" | sed '/^$/d' | LC_ALL=C sort | tr '\n' ' ')
    expect_completion "$SRC" "$cmd --" "${want% }"
  done
}

mode="bash-completion"
all_checks

# The plain fallback, as on a system without bash-completion's helpers.
# shellcheck disable=SC2030,SC2031 # the subshell reports its failures as its exit status
(
  unset -f _init_completion _filedir __ltrim_colon_completions _get_comp_words_by_ref
  mode="plain"
  failures=0
  all_checks
  exit "$failures"
)
# shellcheck disable=SC2031
failures=$((failures + $?))
finish
