# Kernel health: --kernel-health and the kernel_health key take fail, warn or
# off; as root, lines a program writes into /dev/kmsg that look like kernel
# reports (a WARNING, a panic) are no finding. A real finding needs a kernel
# that misbehaves: tests/vm/kernel_health.sh provokes one in the lab VM.
source "$(dirname "$0")/lib.sh"

expect_exit 2 "--kernel-health takes fail, warn or off" -- \
  "$RXERUN" run scenarios/selftest.yaml --kernel-health loud
contains "$err" "--kernel-health" "the error names the option"

printf 'kernel_health: loud\nsteps:\n  - sleep: {duration: 1ms}\n' >"$WORK/bad.yaml"
expect_exit 2 "the kernel_health key takes fail, warn or off" -- "$RXERUN" validate "$WORK/bad.yaml"
contains "$err" "bad.yaml:1:16: 'kernel_health' must be fail, warn or off, got 'loud'" "the error names the place"

expect_exit 0 "the selftest passes with --kernel-health off" -- \
  "$RXERUN" run scenarios/selftest.yaml --host --kernel-health off --report "json:$WORK/off.json"
policy=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernel_health"]["policy"])' "$WORK/off.json")
[ "$policy" = off ] && pass "the JSON report names the policy" || fail "kernel_health.policy is '$policy', wanted off"

if [ "$(id -u)" -ne 0 ] || [ ! -w /dev/kmsg ]; then
  [ "$failures" -gt 0 ] && finish
  echo "skip: writing to /dev/kmsg needs root"
  exit 77
fi

data=tests/data/e2e/kmsg-lookalike.yaml
expect_exit 0 "look-alike lines a program wrote to /dev/kmsg fail nothing" -- \
  "$RXERUN" run "$data" --host --report "json:$WORK/lookalike.json" --report "junit:$WORK/lookalike.xml"
lacks "$out" "kernel health:" "the terminal shows no finding"
# grep -c reads to the end: `grep -q` would stop at the first match and
# dmesg, still writing, would die of SIGPIPE and fail the pipe.
if [ "$(dmesg 2>/dev/null | grep -cF "rxerun/e2e/lookalike.c:1")" -gt 0 ]; then
  pass "the line is in the kernel's log"
else
  fail "the look-alike WARNING did not reach the kernel's log"
fi
findings=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["kernel_health"]; print(h["policy"], len(h["findings"]))' \
  "$WORK/lookalike.json")
[ "$findings" = "fail 0" ] && pass "the JSON report has no finding" || fail "kernel_health: '$findings', wanted 'fail 0'"
lacks "$(cat "$WORK/lookalike.xml")" "kernel health" "the JUnit report has no kernel health testcase"
finish
