# Suites in the lab VM: a kernel matrix reported per kernel (rxe inside a
# namespace passes on 7.3 and is refused on 6.1), every scenario for one
# kernel in one boot, the JUnit file read back by a real parser, -j 2 with
# two kernels (both VMs, both results), and Ctrl-C with two VMs running
# leaving no qemu behind.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CHECK=tests/tools/junit_check.py
case " $KERNELS " in *" 6.1 "*) ;; *) echo "skip: needs kernel 6.1 prepared"; exit 77 ;; esac
case " $KERNELS " in *" 7.3 "*) ;; *) echo "skip: needs kernel 7.3 prepared"; exit 77 ;; esac

expect_exit 3 "a matrix of two scenarios on two kernels: the 6.1 error wins" -- "$RXERUN" run \
  tests/data/vm/rxe-netns.yaml tests/data/vm/pass.yaml --kernel 6.1,7.3 \
  --report json:"$WORK/m.json" --report junit:"$WORK/m.xml"
[ "$(grep -c '^lab VM: kernel' <<<"$out")" = 2 ] && pass "one boot per kernel, not per run" \
  || fail "boots: $(grep '^lab VM' <<<"$out")"
contains "$out" "[1/4] vm-rxe-netns@6.1" "the runs are numbered and named NAME@KERNEL"
contains "$out" "[4/4] vm-pass@7.3" "the last run"
contains "$out" "vm-rxe-netns  6.1      error" "the summary: refused on 6.1"
contains "$out" "vm-rxe-netns  7.3      passed" "the summary: passes on 7.3"
contains "$out" "suite: 4 runs: 3 passed, 1 error (exit 3)" "the summary's counts"
expect_exit 0 "JUnit: one testsuite per scenario and kernel, the error where expected" -- $PY $CHECK "$WORK/m.xml" \
  --expect-suites 4 --expect-suite vm-rxe-netns@6.1 --expect-suite vm-rxe-netns@7.3 --expect-suite vm-pass@6.1 \
  --expect-suite vm-pass@7.3 --expect-error-case "vm-rxe-netns@6.1::dev (rxe)" --expect-errors 1 --expect-failures 0
expect_exit 0 "the JSON report: each run with its kernel and the VM's facts" -- $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
runs = {(r["scenario"], r["kernel"]): r for r in j["runs"]}
assert runs[("vm-rxe-netns", "6.1")]["exit_code"] == 3
assert runs[("vm-rxe-netns", "7.3")]["exit_code"] == 0
assert runs[("vm-rxe-netns", "6.1")]["vm"]["release"].startswith("6.1")
assert runs[("vm-pass", "7.3")]["vm"]["release"].startswith("7.3")
assert runs[("vm-pass", "6.1")]["file"] == "tests/data/vm/pass.yaml", runs[("vm-pass", "6.1")]["file"]
assert j["exit_code"] == 3
' "$WORK/m.json"
no_qemu_left "after the matrix"

# vm.kernels in the scenario: the same matrix without --kernel.
expect_exit 0 "vm: {kernels: [...]} runs the scenario on each" -- "$RXERUN" run tests/data/vm/matrix.yaml
contains "$out" "[2/2] vm-matrix@7.3" "on both kernels"

# A guest kernel that panics in the second of three scenarios: the first
# keeps its result, the panic is a kernel health finding of the second's
# step, the third is not run.
expect_exit 1 "a panic in the middle of a suite" -- "$RXERUN" run --vm --kernel "$NEWEST" tests/data/vm/pass.yaml \
  tests/data/vm/kernel-panic.yaml tests/data/vm/idle.yaml --report json:"$WORK/panic.json"
contains "$out" "died during step 'crash'" "the panic is placed in its step"
expect_exit 0 "the report: passed, a finding, not run" -- $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
got = [(r["scenario"], r["exit_code"], r.get("not_run", False)) for r in j["runs"]]
assert got == [("vm-pass", 0, False), ("vm-kernel-panic", 1, False), ("vm-idle", 0, True)], got
f = j["runs"][1]["kernel_health"]["findings"][0]
assert f["kind"] == "kernel panic" and f["step"] == "crash", f
' "$WORK/panic.json"
no_qemu_left "after the panic"

# Two kernels side by side: both VMs, both results, lines marked by kernel.
expect_exit 1 "-j 2: two lab VMs at once" -- "$RXERUN" run tests/data/vm/pass.yaml tests/data/vm/fail.yaml \
  --kernel 6.1,7.3 -j 2 --report json:"$WORK/j2.json"
contains "$out" "[6.1] lab VM: kernel 6.1" "the 6.1 VM's lines are marked"
contains "$out" "[7.3] lab VM: kernel 7.3" "the 7.3 VM's lines are marked"
contains "$out" "suite: 4 runs: 2 passed, 2 failed (exit 1)" "all four results"
expect_exit 0 "the report has the four runs in the order of the arguments" -- $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
got = [(r["scenario"], r["kernel"], r["exit_code"]) for r in j["runs"]]
assert got == [("vm-pass", "6.1", 0), ("vm-pass", "7.3", 0), ("vm-fail", "6.1", 1), ("vm-fail", "7.3", 1)], got
' "$WORK/j2.json"
no_qemu_left "after -j 2"

# Ctrl-C while both VMs run.
"$RXERUN" run tests/data/vm/wait-long.yaml --kernel 6.1,7.3 -j 2 --report json:"$WORK/int.json" \
  >"$WORK/int.out" 2>&1 &
pid=$!
for _ in $(seq 1800); do [ "$(grep -c 'netns-1' "$WORK/int.out")" = 2 ] && break; sleep 0.1; done
[ "$(lab_qemus | wc -l)" = 2 ] && pass "-j 2: two qemu run" || fail "-j 2: qemus: $(lab_qemus | wc -l)"
kill -INT $pid
wait $pid
code=$?
[ "$code" = 130 ] && pass "Ctrl-C: exit 130" || { fail "Ctrl-C: exit $code"; cat "$WORK/int.out"; }
no_qemu_left "Ctrl-C with two lab VMs"
[ -z "$(ls "$TMPDIR")" ] && pass "Ctrl-C: both share dirs removed" || fail "left: $(ls "$TMPDIR")"
expect_exit 0 "the report says both were interrupted" -- $PY -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["exit_code"] == 130, j["exit_code"]
assert sorted(r["kernel"] for r in j["runs"]) == ["6.1", "7.3"]
assert all(r["exit_code"] == 130 for r in j["runs"]), [r["exit_code"] for r in j["runs"]]
' "$WORK/int.json"
finish
