# A passing, a failing and a hanging guest scenario give the guest's exit
# code (0, 1) and the lab VM's own (3); no qemu outlives rxerun.
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

expect_exit 3 "a guest run past vm.timeout" -- "$RXERUN" run --vm tests/data/vm/hang.yaml
contains "$err" "the run in the lab VM hung" "the hang is named"
contains "$err" "within 15 s" "with the budget"
no_qemu_left "after a hang"
finish
