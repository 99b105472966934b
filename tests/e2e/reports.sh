# --report json:PATH and junit:PATH from real runs; the JUnit files are read
# by a real JUnit parser (junitparser, tests/tools/junit_check.py).
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CHECK=tests/tools/junit_check.py

expect_exit 0 "selftest with both reports" -- "$RXERUN" run scenarios/selftest.yaml --skip slow \
  --report json:"$WORK/pass.json" --report junit:"$WORK/pass.xml"
expect_exit 0 "the passing run's JUnit parses: 4 steps + cleanup, 1 skipped" -- $PY $CHECK "$WORK/pass.xml" \
  --expect-tests 5 --expect-failures 0 --expect-errors 0 --expect-skipped 1 \
  --expect-skipped-case "optional (sleep)" --expect-case "cleanup"
expect_exit 0 "the passing run's JSON" -- $PY -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_code"] == 0, r["exit_code"]
assert r["scenario"] == "selftest"
st = {s["name"]: s for s in r["steps"]}
assert st["overslept"]["outcome"] == "timeout" and st["overslept"]["status"] == "passed"
assert st["optional"]["status"] == "skipped"
assert st["nap"]["facts"]["slept_ms"] >= 100
assert r["cleanup"]["clean"] is True
assert "kernel" in r["host"]
' "$WORK/pass.json"

expect_exit 1 "a failing run with both reports" -- "$RXERUN" run tests/data/e2e/expect-fail.yaml \
  --report json:"$WORK/fail.json" --report junit:"$WORK/fail.xml"
expect_exit 0 "the failing run's JUnit has the failure" -- $PY $CHECK "$WORK/fail.xml" \
  --expect-tests 3 --expect-failures 1 --expect-errors 0 --expect-skipped 1 \
  --expect-failure-case "passes (sleep)"
expect_exit 1 "the checker notices a wrong expectation (it can fail)" -- $PY $CHECK "$WORK/fail.xml" \
  --expect-tests 3 --expect-failures 0 --expect-errors 0 --expect-skipped 1
expect_exit 0 "the failing run's JSON" -- $PY -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_code"] == 1
assert [s["status"] for s in r["steps"]] == ["failed", "not-run"]
assert r["steps"][0]["failures"] == ["expected fail, got ok"]
' "$WORK/fail.json"

expect_exit 3 "an unwritable report path is an environment error" -- "$RXERUN" run scenarios/selftest.yaml \
  --report json:/proc/nonexistent/r.json
contains "$err" "cannot write report /proc/nonexistent/r.json" "the report path is named"
finish
