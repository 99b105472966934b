# A passing, a failing and a hanging guest scenario give the guest's exit
# code (0, 1) and the lab VM's own (3); no qemu outlives rxerun. `vm exec`:
# any program's output and exit code; its bad usage is exit 2 before any VM.
source "$(dirname "$0")/lib.sh"

expect_exit 0 "passing scenario in the lab VM (kernel $NEWEST)" -- "$RXERUN" run --vm tests/data/vm/pass.yaml --report json:"$WORK/pass.json" --report junit:"$WORK/pass.xml"
echo "$out" | grep '^lab VM:'   # the boot time, in CI's log
contains "$out" "lab VM: kernel $NEWEST" "the output names the lab kernel"
contains "$out" "across" "the guest's step lines are relayed"
[ "$(json_field "$WORK/pass.json" 'r["vm"]["kernel"]')" = "$NEWEST" ] && pass "JSON report: vm.kernel" || fail "JSON report: vm.kernel"
[ "$(json_field "$WORK/pass.json" 'r["steps"][-1]["status"]')" = "passed" ] && pass "JSON report: the guest's steps" || fail "JSON report steps"
[ "$(json_field "$WORK/pass.json" 'r["host"]["kernel"].split("-")[0] != open("/proc/sys/kernel/osrelease").read().split("-")[0]')" = "True" ] \
  && pass "JSON report: host facts are the guest's kernel" || fail "JSON report: host kernel is this machine's"
[ -s "$WORK/pass.xml" ] && pass "JUnit report came back" || fail "no JUnit report"
no_qemu_left "after a passing run"

expect_exit 1 "failing expectation in the lab VM" -- "$RXERUN" run --vm tests/data/vm/fail.yaml
contains "$out" "lo-answers" "the failing step is shown"
no_qemu_left "after a failing run"

expect_exit 3 "a guest run past vm.timeout" -- "$RXERUN" run --vm tests/data/vm/over-budget.yaml
contains "$err" "the run in the lab VM hung" "the hang is named"
contains "$err" "within 5 s" "with the budget"
no_qemu_left "after a hang"

expect_exit 2 "vm exec without a program" -- "$RXERUN" vm exec
expect_exit 2 "vm exec with an unknown kernel" -- "$RXERUN" vm exec --kernel two.six -- true
contains "$err" "unknown lab kernel 'two.six'" "the unknown kernel is named"
expect_exit 3 "vm exec with a version not prepared" -- "$RXERUN" vm exec --kernel 2.6 -- true
contains "$err" "rxerun vm setup --kernel 2.6" "it says how to prepare it"
expect_exit 2 "vm exec with a bad --timeout" -- "$RXERUN" vm exec --timeout soon -- true
expect_exit 5 "vm exec: the program's exit code" -- "$RXERUN" vm exec -- /bin/sh -c 'echo "in $(uname -r) as $(id -u)"; exit 5'
contains "$out" " as 0" "its output is relayed"
lacks "$out" "in $(uname -r) as" "it ran on the lab kernel, not this one"
expect_exit 143 "vm exec: a program ended by SIGTERM is 128+15" -- "$RXERUN" vm exec -- /bin/sh -c 'kill -TERM $$'
expect_exit 3 "vm exec past --timeout" -- "$RXERUN" vm exec --timeout 3s -- sleep 60
contains "$err" "the run in the lab VM hung" "the timeout is named"
no_qemu_left "after vm exec"
finish
