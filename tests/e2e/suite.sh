# Suites on the host: several files and a directory in one invocation, a
# summary table, one JSON report holding every run, one JUnit testsuite per
# run (read by a real JUnit parser), the exit code by precedence,
# --fail-fast, --shard, and bad input refused before anything runs.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CHECK=tests/tools/junit_check.py

# A directory of three scenarios that need nothing of the host: one passes,
# one fails its expectation, one passes slowly.
mkdir -p "$WORK/suite"
cat >"$WORK/suite/a-pass.yaml" <<'YAML'
name: suite-a
steps:
  - name: nap
    sleep: {duration: 10ms}
YAML
cat >"$WORK/suite/b-fail.yaml" <<'YAML'
name: suite-b
steps:
  - name: passes
    sleep: {duration: 10ms}
    expect: fail
YAML
cat >"$WORK/suite/c-pass.yaml" <<'YAML'
name: suite-c
steps:
  - name: nap
    sleep: {duration: 20ms}
YAML
echo "not a scenario" >"$WORK/suite/notes.txt"

expect_exit 1 "a directory and a file: the worst exit code is the failure's" -- "$RXERUN" run "$WORK/suite" \
  scenarios/selftest.yaml --skip slow --report json:"$WORK/s.json" --report junit:"$WORK/s.xml"
contains "$out" "[1/4] suite-a" "each run is announced with its place in the suite"
contains "$out" "[4/4] selftest" "the file after the directory runs last"
contains "$out" "suite: 4 runs: 3 passed, 1 failed (exit 1)" "the summary's last line counts the verdicts"
summary=$(sed -n '/^SCENARIO/,$p' <<<"$out")
contains "$summary" "suite-b   host     failed          0/1" "the table has scenario, kernel, result and steps"
[ "$(grep -c '^suite-\|^selftest' <<<"$summary")" = 4 ] && pass "one row per run" || fail "rows: $summary"
lacks "$out" "notes" "a directory's other files are not scenarios"
expect_exit 0 "the JUnit file has one testsuite per run" -- $PY $CHECK "$WORK/s.xml" --expect-suites 4 \
  --expect-suite suite-a --expect-suite suite-b --expect-suite selftest \
  --expect-failure-case "suite-b::passes (sleep)" --expect-case "suite-c::cleanup" --expect-failures 1
expect_exit 1 "the checker sees a testsuite that is not there (it can fail)" -- $PY $CHECK "$WORK/s.xml" \
  --expect-suite "suite-b@7.3"
expect_exit 0 "the JSON report holds every run" -- $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["exit_code"] == 1, j["exit_code"]
assert [r["scenario"] for r in j["runs"]] == ["suite-a", "suite-b", "suite-c", "selftest"]
assert [r["exit_code"] for r in j["runs"]] == [0, 1, 0, 0]
assert j["summary"] == {"runs": 4, "passed": 3, "failed": 1, "errors": 0, "residue": 0, "interrupted": 0, "not_run": 0}, j["summary"]
assert all("kernel" not in r for r in j["runs"])   # host runs carry no lab kernel
' "$WORK/s.json"

expect_exit 1 "--fail-fast stops at the first run that does not pass" -- "$RXERUN" run "$WORK/suite" --fail-fast \
  --report json:"$WORK/ff.json" --report junit:"$WORK/ff.xml"
lacks "$out" "[3/3] suite-c" "the run after the failure is not started"
contains "$out" "suite: 3 runs: 1 passed, 1 failed, 1 not-run (exit 1)" "the summary says which did not run"
expect_exit 0 "the run left out is in the reports" -- $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
r = j["runs"][2]
assert r["scenario"] == "suite-c" and r["not_run"] is True, r
assert "fail-fast" in r["error"]
' "$WORK/ff.json"
expect_exit 0 "and skipped in JUnit" -- $PY $CHECK "$WORK/ff.xml" --expect-skipped-case "suite-c::run"

# --shard: the parts are disjoint and together the whole suite.
printf 'name: suite-d\nsteps:\n  - sleep: {duration: 10ms}\n' >"$WORK/d.yaml"
: >"$WORK/shards"
for k in 1 2 3; do
  expect_exit 0 "--shard $k/3 runs" -- "$RXERUN" run "$WORK/suite/a-pass.yaml" "$WORK/suite/c-pass.yaml" \
    scenarios/selftest.yaml "$WORK/d.yaml" --skip slow --shard "$k/3" --report json:"$WORK/shard$k.json"
  $PY -c 'import json,sys; [print(r["scenario"]) for r in json.load(open(sys.argv[1]))["runs"]]' \
    "$WORK/shard$k.json" >>"$WORK/shards"
done
[ "$(sort "$WORK/shards" | tr '\n' ' ')" = "selftest suite-a suite-c suite-d " ] \
  && pass "the three shards ran every scenario exactly once" || fail "shards ran: $(cat "$WORK/shards")"
[ "$(head -1 "$WORK/shards")" = suite-a ] && [ "$(sed -n 2p "$WORK/shards")" = suite-d ] \
  && pass "shard 1/3 takes the 1st and 4th runs" || fail "shard 1/3: $(cat "$WORK/shard1.json")"
expect_exit 2 "--shard 4/3 is a usage error" -- "$RXERUN" run "$WORK/suite" --shard 4/3
contains "$err" "expected K/N with 1 <= K <= N" "and says what it expects"

# Bad input: nothing runs, not even the valid scenarios before it.
cat >"$WORK/bad.yaml" <<'YAML'
name: suite-bad
steps:
  - slep: {duration: 1s}
YAML
expect_exit 2 "one invalid scenario stops the whole suite before it starts" -- "$RXERUN" run "$WORK/suite" \
  "$WORK/bad.yaml"
contains "$err" "bad.yaml:3:5" "the error names the place"
lacks "$out" "[1/" "no scenario ran"
mkdir -p "$WORK/empty"
expect_exit 2 "a directory without scenarios" -- "$RXERUN" run "$WORK/empty"
contains "$err" "a directory without scenarios" "says so"
expect_exit 2 "a path that does not exist" -- "$RXERUN" run "$WORK/suite" "$WORK/nope.yaml"
contains "$err" "nope.yaml:1:1:" "is named with a place, as for one scenario"
lacks "$out" "[1/" "and nothing ran"
expect_exit 2 "--host cannot run a kernel matrix" -- "$RXERUN" run "$WORK/suite" --host --kernel 6.1,7.3
expect_exit 2 "--keep keeps one lab, not a suite" -- "$RXERUN" run "$WORK/suite" --keep
expect_exit 2 "-j 0" -- "$RXERUN" run "$WORK/suite" -j 0

# Ctrl-C: the run in progress is stopped and cleaned up, the rest not started.
printf 'name: suite-long\nsteps:\n  - netns: {name: suite-long-ns}\n  - sleep: {duration: 30s}\n    timeout: 60s\n' \
  >"$WORK/long.yaml"
if [ "$(id -u)" = 0 ]; then
  : >"$WORK/int.out"
  "$RXERUN" run "$WORK/long.yaml" "$WORK/suite/a-pass.yaml" --report json:"$WORK/int.json" >"$WORK/int.out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q "netns-1" "$WORK/int.out" && break; sleep 0.1; done
  kill -INT $pid
  wait $pid
  code=$?
  [ "$code" = 130 ] && pass "Ctrl-C during a suite: exit 130" || { fail "Ctrl-C: exit $code"; cat "$WORK/int.out"; }
  contains "$(cat "$WORK/int.out")" "cleanup: 1 undone, nothing left" "the interrupted run cleaned up"
  lacks "$(cat "$WORK/int.out")" "[2/2]" "the next run was not started"
  ip netns list | grep -q suite-long-ns && fail "the namespace is left" || pass "nothing left on the host"
  pgrep -f "rxerun run $WORK/long.yaml" >/dev/null && fail "a child rxerun is left" || pass "no child rxerun left"
  expect_exit 0 "the report: one interrupted, one not run" -- $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["exit_code"] == 130, j["exit_code"]
assert j["runs"][0]["exit_code"] == 130 and j["runs"][0]["interrupted"] is True
assert j["runs"][1]["not_run"] is True and "interrupted" in j["runs"][1]["error"], j["runs"][1]
' "$WORK/int.json"
else
  echo "skip part: Ctrl-C during a suite needs root (its scenario makes a namespace)"
fi

# A scenario's vm.kernels on the host (--host, as the lab VM's guest runs
# it): the host has one kernel, so it runs once.
printf 'name: suite-kernels\nvm: {kernels: ["6.1", "7.3"]}\nsteps:\n  - sleep: {duration: 10ms}\n' >"$WORK/kernels.yaml"
expect_exit 0 "vm.kernels with --host runs once" -- timeout 20 "$RXERUN" run --host "$WORK/kernels.yaml"
[ "$(grep -c '^PASS suite-kernels' <<<"$out")" = 1 ] && pass "once, not once per kernel" || fail "ran: $out"

expect_exit 1 "-q: only failures and the summary" -- "$RXERUN" run "$WORK/suite" -q
contains "$out" "suite: 3 runs: 2 passed, 1 failed (exit 1)" "the summary is there"
lacks "$out" "[1/3]" "the announcements are not"

# A run that can go nowhere (it needs rdma_rxe, which this host lacks, and
# no lab kernel is prepared) is an error of its own; the others still run.
if [ ! -d /sys/module/rdma_rxe ] && ! modinfo rdma_rxe >/dev/null 2>&1; then
  printf 'name: suite-rxe\nsteps:\n  - rxe: {name: rxe0, netdev: lo}\n' >"$WORK/rxe.yaml"
  expect_exit 3 "a run that can go nowhere" -- env RXERUN_CACHE_DIR="$WORK/no-kernels" "$RXERUN" run "$WORK/rxe.yaml" \
    "$WORK/suite/a-pass.yaml"
  contains "$err" "suite-rxe: host kernel has no rdma_rxe" "says why"
  contains "$out" "suite-rxe  host     error" "an error in the summary"
  contains "$out" "suite-a    host     passed" "the other scenario ran"
fi

# `rxerun DIR` is `rxerun run DIR`; one scenario alone prints no suite table.
expect_exit 0 "rxerun DIR" -- "$RXERUN" "$WORK/suite/a-pass.yaml" "$WORK/suite/c-pass.yaml"
contains "$out" "suite: 2 runs: 2 passed (exit 0)" "two files are a suite"
expect_exit 0 "one scenario is not a suite" -- "$RXERUN" run "$WORK/suite/a-pass.yaml" --report json:"$WORK/one.json"
lacks "$out" "[1/1]" "no suite numbering"
lacks "$out" "SCENARIO" "no summary table"
expect_exit 0 "its JSON report is the run itself, as before" -- $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert "runs" not in j and j["scenario"] == "suite-a"
' "$WORK/one.json"
finish
