# Outcomes end to end through the real binary: pass, expected failure that
# did not happen, unexpected timeout, invalid input.
source "$(dirname "$0")/lib.sh"

expect_exit 0 "selftest passes" -- "$RXERUN" run scenarios/selftest.yaml
contains "$out" "selftest" "summary names the scenario"
contains "$out" "overslept" "the timeout step is listed"

expect_exit 0 "the default command is run" -- "$RXERUN" scenarios/selftest.yaml
expect_exit 0 "options before the scenario" -- "$RXERUN" -q scenarios/selftest.yaml

expect_exit 0 "--skip leaves tagged steps out" -- "$RXERUN" run scenarios/selftest.yaml --skip slow
contains "$out" "skip" "the skipped step says so"

expect_exit 1 "expect: fail on a passing step exits 1" -- "$RXERUN" run tests/data/e2e/expect-fail.yaml
contains "$out" "expected fail, got ok" "the reason is shown"

expect_exit 1 "an unexpected timeout exits 1" -- "$RXERUN" run tests/data/e2e/unexpected-timeout.yaml
contains "$out" "expected ok, got timeout" "the timeout is named"

expect_exit 0 "--var overrides a variable" -- "$RXERUN" run scenarios/selftest.yaml --var short=1500ms --report json:"$WORK/var.json"
expect_exit 0 "the overridden duration was used" -- /usr/bin/python3 -c '
import json, sys
nap = json.load(open(sys.argv[1]))["steps"][0]
assert nap["name"] == "nap" and nap["facts"]["slept_ms"] >= 1500, nap
' "$WORK/var.json"

expect_exit 2 "an undefined --var target is fine but a malformed one is not" -- "$RXERUN" run scenarios/selftest.yaml --var oops
expect_exit 2 "a missing file exits 2" -- "$RXERUN" run "$WORK/nope.yaml"
contains "$err" "$WORK/nope.yaml:1:1:" "the missing file is named with a place"
expect_exit 2 "an unknown option exits 2" -- "$RXERUN" run scenarios/selftest.yaml --frobnicate
expect_exit 2 "a bad --report exits 2 before running" -- "$RXERUN" run scenarios/selftest.yaml --report xml:out.xml

ls "$RXERUN_STATE_DIR"/*.journal >/dev/null 2>&1 && fail "a journal was left behind: $(ls "$RXERUN_STATE_DIR")" || pass "no journal left behind"
finish
