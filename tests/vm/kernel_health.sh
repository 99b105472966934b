# Kernel health in the lab VM: a guest kernel that panics during a step (the
# magic SysRq 'c') is a kernel health finding of that step, exit 1, with the
# console's lines in the terminal and the JSON and JUnit reports; under
# --kernel-health off it stays a lab VM error (exit 3). Two boots.
source "$(dirname "$0")/lib.sh"

data=tests/data/vm/kernel-panic.yaml
expect_exit 1 "a guest kernel panic fails the run (kernel $NEWEST)" -- \
  "$RXERUN" run --vm "$data" --report "json:$WORK/panic.json" --report "junit:$WORK/panic.xml"
contains "$out" "kernel health: kernel panic during step 'crash' (kernel " "the panic is a finding of the step"
contains "$out" "Kernel panic - not syncing: sysrq triggered crash" "with the console's lines"
contains "$out" "FAIL vm-kernel-panic:" "the verdict is a failure"
lacks "$err" "the lab VM stopped during the run" "not a lab VM error"
same "$(json_field "$WORK/panic.json" 'r["kernel_health"]["findings"][0]["kind"]')" "kernel panic" "JSON: the kind"
same "$(json_field "$WORK/panic.json" 'r["kernel_health"]["findings"][0]["step"]')" "crash" "JSON: the step"
same "$(json_field "$WORK/panic.json" 'r["kernel_health"]["policy"]')" "fail" "JSON: the policy"
same "$(json_field "$WORK/panic.json" 'r["exit_code"]')" "1" "JSON: the exit code"
same "$(step_field "$WORK/panic.json" before status)" "passed" "JSON: the step before kept the status the guest noted"
same "$(step_field "$WORK/panic.json" crash status)" "failed" "JSON: the step the kernel died in failed"
same "$(step_field "$WORK/panic.json" never status)" "not-run" "JSON: the step after it was not run"
if /usr/bin/python3 - "$WORK/panic.xml" <<'PY'; then pass "JUnit: a failing 'kernel health' testcase"; else fail "JUnit: no failing 'kernel health' testcase"; fi
import sys, xml.etree.ElementTree as ET
cases = [c for c in ET.parse(sys.argv[1]).iter("testcase") if c.get("name") == "kernel health"]
sys.exit(0 if cases and cases[0].find("failure") is not None else 1)
PY
no_qemu_left "after a panic"

expect_exit 3 "under --kernel-health off a panic stays a lab VM error" -- \
  "$RXERUN" run --vm "$data" --kernel-health off
contains "$err" "the lab VM stopped during the run" "the VM error is named"
lacks "$out" "kernel health:" "no finding is shown"
no_qemu_left "after a panic, off"
finish
