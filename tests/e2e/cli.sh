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

# Each command's --help ends with its own exit codes, not run's.
exit_codes() {  # CMD...: the codes its --help's footer names, space-separated
  "$RXERUN" "$@" --help 2>&1 | tr '\n' ' ' | grep -oE '(Exit codes:|;) [0-9]+ ' | grep -oE '[0-9]+' | tr '\n' ' '
}
check_codes() {  # "WANTED" CMD...
  local want=$1 got
  shift
  got=$(exit_codes "$@")
  [ "${got% }" = "$want" ] && pass "'$*' --help: exit codes $want" || fail "'$*' --help: exit codes [$got], wanted [$want]"
}
check_codes "0 1 2 3 4 130" run
check_codes "0 2" validate
check_codes "0 2" plan
check_codes "0 2 3" graph
check_codes "0 2 3 4 130" cleanup
check_codes "0 2" steps
check_codes "0 2" schema
check_codes "0 1 2 3" decode
check_codes "0 2 3 130" vm setup
check_codes "0 2" vm status
check_codes "0 2 3 130" vm exec
check_codes "0 2" help
expect_exit 0 "validate --help" -- "$RXERUN" validate --help
lacks "$out" "cleanup left something behind" "validate's help does not print run's exit codes"

# rxerun help [COMMAND...]: the same text as --help.
for words in "" "validate" "vm" "vm setup" "vm status" "help"; do
  # shellcheck disable=SC2086
  "$RXERUN" $words --help >"$WORK/direct" 2>&1
  # shellcheck disable=SC2086
  expect_exit 0 "help $words" -- "$RXERUN" help $words
  [ "$out" = "$(cat "$WORK/direct")" ] && pass "'help $words' prints what '$words --help' prints" ||
    fail "'help $words' differs from '$words --help'"
done
expect_exit 2 "help of an unknown command" -- "$RXERUN" help valdate
contains "$err" "rxerun: unknown command 'valdate'; did you mean 'validate'?" "help suggests the near command"
expect_exit 2 "help of an unknown command of vm" -- "$RXERUN" help vm statsu
contains "$err" "unknown command 'statsu'; did you mean 'status'?" "help suggests the near command of vm"

# A mistyped command: refused with the near name; a scenario path still runs.
expect_exit 2 "a misspelled command" -- "$RXERUN" valdate scenarios/selftest.yaml
[ "$err" = "rxerun: unknown command 'valdate'; did you mean 'validate'?" ] && pass "it suggests validate" ||
  fail "valdate: [$err]"
expect_exit 2 "a misspelled command after options" -- "$RXERUN" -v --var a=b valdate scenarios/selftest.yaml
[ "$err" = "rxerun: unknown command 'valdate'; did you mean 'validate'?" ] && pass "it suggests validate there too" ||
  fail "-v valdate: [$err]"
expect_exit 2 "a word that is no command and no file" -- "$RXERUN" frobnicate
contains "$err" "unknown command 'frobnicate' (and no such scenario file): the commands are run, validate" "it lists the commands"
expect_exit 2 "a missing scenario path is a scenario, not a command" -- "$RXERUN" "$WORK/valdate.yaml"
contains "$err" "valdate.yaml:1:1: cannot open the scenario" "the loader names it"
expect_exit 2 "a missing scenario named with .yaml" -- "$RXERUN" plann.yaml
contains "$err" "plann.yaml:1:1: cannot open the scenario" "a .yaml word is a scenario"
mkdir -p "$WORK/cwd" && cp scenarios/selftest.yaml "$WORK/cwd/valdate"
if (cd "$WORK/cwd" && "$RXERUN" valdate >"$WORK/out" 2>&1); then
  pass "an existing file named like a command typo runs as a scenario"
else
  fail "rxerun valdate (a file) did not run"; cat "$WORK/out"
fi
if (cd "$WORK/cwd" && "$RXERUN" -q --var a=b valdate >"$WORK/out" 2>&1); then
  pass "... and so after options"
else
  fail "rxerun -q --var a=b valdate (a file) did not run"; cat "$WORK/out"
fi
expect_exit 0 "a scenario as the first word runs" -- "$RXERUN" scenarios/selftest.yaml -q

# validate DIR and plan DIR take a directory's *.yaml, as run does.
mkdir -p "$WORK/labs" "$WORK/nolabs"
cp scenarios/selftest.yaml "$WORK/labs/b.yaml"
sed 's/^name: .*/name: selftest-a/' scenarios/selftest.yaml >"$WORK/labs/a.yaml"
touch "$WORK/labs/notes.txt"
expect_exit 0 "validate DIR" -- "$RXERUN" validate "$WORK/labs"
[ "$(grep -c ': ok: ' <<<"$out")" = 2 ] && pass "validate DIR validated both scenarios" || fail "validate DIR: $out"
[ "$(head -1 <<<"$out" | cut -d: -f1)" = "$WORK/labs/a.yaml" ] && pass "in sorted order" || fail "not sorted: $out"
expect_exit 0 "validate scenarios/ (every shipped lab)" -- "$RXERUN" validate scenarios/
[ "$(grep -c ': ok: ' <<<"$out")" = "$(find scenarios -maxdepth 1 -name '*.yaml' | wc -l)" ] &&
  pass "one ok line per shipped scenario" || fail "validate scenarios/: $out"
expect_exit 2 "validate of a directory without scenarios" -- "$RXERUN" validate "$WORK/nolabs"
contains "$err" "a directory without scenarios (*.yaml)" "it says so"
expect_exit 0 "plan DIR" -- "$RXERUN" plan "$WORK/labs"
[ "$(grep -c '^plan for ' <<<"$out")" = 2 ] && pass "plan DIR planned both scenarios" || fail "plan DIR: $out"
contains "$out" "plan for selftest-a" "the first scenario's plan"
expect_exit 2 "plan of a good and a missing file" -- "$RXERUN" plan scenarios/selftest.yaml "$WORK/none.yaml"
contains "$out" "plan for selftest" "the good one is planned"
contains "$err" "none.yaml:1:1: cannot open the scenario" "the missing one is named"

# validate --json: one document, every file's result and its diagnostics.
printf 'name: bad\nsteps:\n  - slep: {duration: 1s}\n' >"$WORK/bad.yaml"
expect_exit 2 "validate --json with an invalid file" -- "$RXERUN" validate --json scenarios/selftest.yaml "$WORK/bad.yaml"
[ -z "$err" ] && pass "validate --json writes nothing on stderr" || fail "validate --json wrote on stderr: $err"
read -r -d '' shape <<'PY'
import json, sys
doc = json.loads(sys.argv[2])
assert set(doc) == {"valid", "files"} and doc["valid"] is False, doc
good, bad = doc["files"]
assert good == {"file": "scenarios/selftest.yaml", "valid": True, "diagnostics": [], "scenario": "selftest",
                "steps": good["steps"]} and good["steps"] > 0, good
assert bad["file"] == sys.argv[1] and bad["valid"] is False and "scenario" not in bad, bad
d = bad["diagnostics"][0]
assert set(d) == {"file", "line", "col", "severity", "message"}, d
assert (d["file"], d["line"], d["col"], d["severity"]) == (sys.argv[1], 3, 5, "error"), d
assert "did you mean 'sleep'" in d["message"], d
PY
python3 -c "$shape" "$WORK/bad.yaml" "$out" && pass "validate --json: the documented shape" || fail "validate --json: $out"
expect_exit 0 "validate --json of good files" -- "$RXERUN" validate --json scenarios/selftest.yaml
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["valid"] is True and d["files"][0]["valid"] is True' "$out" &&
  pass "valid: true" || fail "validate --json: $out"

# vm status --json: the kernels known and prepared, paths relative to the
# cache (an empty one here: no kernel is prepared, nothing boots).
read -r -d '' shape <<'PY'
import json, sys
doc = json.loads(sys.argv[2])
assert set(doc) == {"cache", "kernels", "debian_suites", "kvm_usable"}, doc
assert doc["cache"] == sys.argv[1], doc
assert [(k["label"], k["state"]) for k in doc["kernels"]] == [("6.1", "missing"), ("7.3", "missing")], doc
assert doc["kernels"][0]["setup"] == "rxerun vm setup --kernel 6.1", doc
assert "trixie-backports" in doc["debian_suites"] and isinstance(doc["kvm_usable"], bool), doc
PY
mkdir -p "$WORK/cache"
expect_exit 0 "vm status --json with an empty cache" -- env RXERUN_CACHE_DIR="$WORK/cache" "$RXERUN" vm status --json
python3 -c "$shape" "$WORK/cache" "$out" && pass "vm status --json: the documented shape" || fail "vm status --json: $out"
finish
