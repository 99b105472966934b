# Every prepared kernel boots and runs a network scenario for real.
source "$(dirname "$0")/lib.sh"
for k in $KERNELS; do
  expect_exit 0 "kernel $k: scenario passes" -- "$RXERUN" run --vm --kernel "$k" tests/data/vm/pass.yaml --report json:"$WORK/$k.json"
  echo "$out" | grep '^lab VM:'
  release=$(json_field "$WORK/$k.json" 'r["vm"]["release"]')
  [ "$(json_field "$WORK/$k.json" 'r["host"]["kernel"]')" = "$release" ] && pass "kernel $k: the guest ran $release" \
    || fail "kernel $k: guest kernel $(json_field "$WORK/$k.json" 'r["host"]["kernel"]') is not $release"
done
expect_exit 2 "a kernel that is no version is a usage error" -- "$RXERUN" run --vm --kernel nine tests/data/vm/pass.yaml
contains "$err" "unknown lab kernel 'nine'" "it names the kernel"
expect_exit 3 "a version not prepared" -- "$RXERUN" run --vm --kernel 9.9 tests/data/vm/pass.yaml
contains "$err" "rxerun vm setup --kernel 9.9" "it says how to prepare it"
no_qemu_left "after the kernels"
finish
