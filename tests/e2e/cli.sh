# The command line: help, version, step kinds, usage errors, plan.
source "$(dirname "$0")/lib.sh"

expect_exit 0 "--version" -- "$RXERUN" --version
contains "$out" "rxerun 0." "version printed"
expect_exit 0 "--help" -- "$RXERUN" --help
top_help=$out
for cmd in run validate plan graph cleanup steps schema decode; do
  contains "$top_help" "$cmd" "--help lists $cmd"
  expect_exit 0 "$cmd --help" -- "$RXERUN" $cmd --help
  contains "$out" "Usage" "$cmd --help shows usage"
done
expect_exit 2 "no command" -- "$RXERUN"
expect_exit 2 "an unknown option" -- "$RXERUN" --bogus
expect_exit 2 "run without a scenario" -- "$RXERUN" run

expect_exit 0 "steps lists the kinds" -- "$RXERUN" steps
contains "$out" "sleep" "sleep listed"
contains "$out" "revert" "revert listed"
expect_exit 0 "steps sleep" -- "$RXERUN" steps sleep
contains "$out" "duration" "sleep's parameter shown"
contains "$out" "slept_ms" "sleep's fact shown"
contains "$out" "example:" "an example shown"
expect_exit 2 "an unknown kind" -- "$RXERUN" steps slep
contains "$err" "did you mean 'sleep'" "a near spelling is suggested"

expect_exit 0 "plan changes nothing and lists the actions" -- "$RXERUN" plan scenarios/selftest.yaml
contains "$out" "sleep 0.1" "plan shows the shell equivalent of a sleep"
contains "$out" "sleep 0.2" "plan cuts the over-long sleep at its timeout"
contains "$out" "not previewed" "plan says what it cannot preview"
[ -e "$RXERUN_STATE_DIR" ] && fail "plan created state: $(ls -R "$RXERUN_STATE_DIR")" || pass "plan touched no state"

expect_exit 0 "validate a good file" -- "$RXERUN" validate scenarios/selftest.yaml
contains "$out" "ok: scenario 'selftest'" "validate says ok"
[ -e "$RXERUN_STATE_DIR" ] && fail "validate created state" || pass "validate touched no state"

expect_exit 0 "cleanup with nothing left" -- "$RXERUN" cleanup scenarios/selftest.yaml
contains "$out" "nothing to undo" "cleanup says so"

# --keep then cleanup: the journal is replayed by the cleanup command.
expect_exit 0 "run --keep" -- "$RXERUN" run scenarios/selftest.yaml --keep
expect_exit 0 "cleanup after --keep" -- "$RXERUN" cleanup scenarios/selftest.yaml

# A user without CAP_NET_ADMIN runs a lab that needs none (the quick start).
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null &&
  runuser -u nobody -- test -x "$RXERUN" -a -r scenarios/selftest.yaml; then
  mkdir -p "$WORK/nobody" && chmod 777 "$WORK/nobody" && chmod 755 "$WORK"
  expect_exit 0 "a user without root runs the selftest" -- runuser -u nobody -- env -u XDG_RUNTIME_DIR \
    RXERUN_STATE_DIR="$WORK/nobody/state" "$RXERUN" run scenarios/selftest.yaml
  lacks "$out" "LEFT" "its preclean asks nothing of kinds it does not use"
fi

# A value that is not UTF-8 text is refused before anything runs, with a
# readable message (the byte shown, not passed on).
rm -rf "$RXERUN_STATE_DIR"
expect_exit 2 "a --var value that is not UTF-8" -- "$RXERUN" run scenarios/selftest.yaml --var $'dev=v\xe9'
contains "$err" "scenarios/selftest.yaml:1:1: --var dev: the value is not UTF-8 text (byte 0xe9 at offset 1)" "it says which byte"
lacks "$err" "internal error" "no internal error"
[ -e "$RXERUN_STATE_DIR" ] && fail "the refused run created state" || pass "the refused run touched nothing"
expect_exit 2 "a --var name that is not UTF-8" -- "$RXERUN" validate scenarios/selftest.yaml --var $'d\xe9v=1'
contains "$err" "invalid variable name 'd\\xe9v'" "the name's byte is shown escaped"

# A repeatable option takes one value each time: the words after it are
# scenarios again.
expect_exit 0 "validate --var K=V A B: both files are scenarios" -- "$RXERUN" validate --var x=1 scenarios/selftest.yaml scenarios/veth-pair.yaml
contains "$out" "scenarios/veth-pair.yaml: ok" "the second file was validated"
expect_exit 2 "run --only TAG A B, --skip TAG A B: the same" -- "$RXERUN" run --only a --skip b "$WORK/none-1.yaml" "$WORK/none-2.yaml"
contains "$err" "none-2.yaml:1:1: cannot open the scenario" "the second file was read as a scenario"
lacks "$err" "expected KEY=VALUE" "not as an option's value"
finish
