# Every prepared kernel boots and runs a network scenario for real.
source "$(dirname "$0")/lib.sh"
for k in $KERNELS; do
  expect_exit 0 "kernel $k: scenario passes" -- "$RXERUN" run --vm --kernel "$k" tests/data/vm/pass.yaml --report json:"$WORK/$k.json"
  echo "$out" | grep '^lab VM:'
  release=$(json_field "$WORK/$k.json" 'r["vm"]["release"]')
  [ "$(json_field "$WORK/$k.json" 'r["host"]["kernel"]')" = "$release" ] && pass "kernel $k: the guest ran $release" \
    || fail "kernel $k: guest kernel $(json_field "$WORK/$k.json" 'r["host"]["kernel"]') is not $release"
done
expect_exit 2 "an unknown kernel is a usage error" -- "$RXERUN" run --vm --kernel 9.9 tests/data/vm/pass.yaml
contains "$err" "unknown lab kernel '9.9'" "it names the kernel"
no_qemu_left "after the kernels"
finish
