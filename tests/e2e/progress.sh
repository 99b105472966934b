# The live status line of a step that waits: on a terminal (a pty from
# script(1)), a step that runs past a second shows what it waits for, the
# time so far and its timeout, redrawn in place and erased before its result
# line; in a pipe, with -q or with TERM=dumb there is none.
source "$(dirname "$0")/lib.sh"
command -v script >/dev/null || { echo "skip: script(1) (util-linux) is not installed"; exit 77; }

cat >"$WORK/wait.yaml" <<'YAML'
name: e2e-progress
steps:
  - name: waits
    sleep: {duration: 1800ms}
    timeout: 10s
  - name: quick
    sleep: {duration: 10ms}
YAML

# on_terminal ARGS...: runs rxerun on a pty; its raw output in $WORK/tty.
on_terminal() {
  local cmd
  printf -v cmd '%q ' "$RXERUN" "$@"
  TERM=xterm script -qec "$cmd" /dev/null >"$WORK/tty" 2>&1
}

on_terminal run "$WORK/wait.yaml" --color never
tty=$(cat -v "$WORK/tty")
contains "$tty" "^M^[[K  ..    waits                 sleep     1." "on a terminal: the waiting step's line, drawn in place"
contains "$tty" "s of 10s" "with its timeout"
contains "$tty" "^M^[[K  ok    waits" "erased before the step's result line"
lacks "$tty" "quick                sleep     0." "a step shorter than a second shows none" # only its result line
grep -q "ok    quick" "$WORK/tty" && pass "the short step's result line is there" || fail "no result line for quick"

expect_exit 0 "in a pipe" -- "$RXERUN" run "$WORK/wait.yaml"
lacks "$(cat -v "$WORK/out")" "^M" "no status line in a pipe"
lacks "$out" ".." "nor its text"

on_terminal run "$WORK/wait.yaml" -q
lacks "$(cat -v "$WORK/tty")" "  ..  " "-q: no status line"
TERM=dumb script -qec "$(printf '%q ' "$RXERUN" run "$WORK/wait.yaml")" /dev/null >"$WORK/tty" 2>&1
lacks "$(cat -v "$WORK/tty")" "  ..  " "TERM=dumb: no status line"
finish
