# The module kind for real in the lab VM (rxerun runs inside it, --host, so
# that the kernel can be looked at after the run): null_blk loaded with
# parameters and unloaded by cleanup, a clash of parameters, a module the
# kernel has not. Then siw on the kernels that have none (Debian builds
# without it, and `vm setup` could not build it): a clear error naming the
# missing option, and nothing left.
source "$(dirname "$0")/lib.sh"
in_vm() { "$RXERUN" vm exec -q --kernel "$NEWEST" -- /bin/sh -c "$1"; }

expect_exit 0 "null_blk with parameters, then lsmod" -- in_vm "$RXERUN run --host tests/data/vm/modules.yaml; echo exit=\$?; lsmod"
contains "$out" "exit=0" "the scenario passed"
contains "$out" "cleanup: 1 undone, nothing left" "cleanup unloaded it"
if echo "$out" | grep -q '^null_blk '; then fail "null_blk is still loaded after cleanup"; else pass "null_blk is gone after cleanup"; fi

expect_exit 0 "null_blk asked for other parameters" -- in_vm "$RXERUN run --host tests/data/vm/module-clash.yaml; echo exit=\$?; lsmod"
contains "$out" "exit=3" "the clash is a step error (exit 3)"
contains "$out" "module null_blk is loaded already (not by this run) with nr_devices=0; it cannot take nr_devices=2" "the message names both values"
if echo "$out" | grep -q '^null_blk '; then fail "null_blk is still loaded after the clash"; else pass "null_blk is gone after the clash"; fi

expect_exit 3 "a module the kernel has not" -- "$RXERUN" run --vm --kernel "$NEWEST" tests/data/vm/module-missing.yaml
contains "$out" "this kernel has no module no_such_module_here" "the message names the module"

# Kernels `vm setup` could not build siw for (7.3 here: its headers want
# gcc-14) say so; those it built it for run tests/vm/siw.sh.
expect_exit 0 "rxerun vm status" -- "$RXERUN" vm status
status=$out
without=$(awk '/^siw /{on=1; next} on && $2 == "none:" {print $1}' <<<"$status")
for k in $without; do
  expect_exit 3 "kernel $k: no siw" -- "$RXERUN" run --vm --kernel "$k" tests/data/vm/siw.yaml
  contains "$out" "siw is not available in this kernel (CONFIG_RDMA_SIW is not set, and no siw module was built for it)" "kernel $k: the message names the option"
  contains "$out" "rxerun vm status" "kernel $k: the message says where to look"
  contains "$out" "nothing left" "kernel $k: cleanup left nothing"
done
[ -n "$without$(awk '/^siw /{on=1; next} on && $2 == "built" {print $1}' <<<"$status")" ] \
  && pass "vm status says for every kernel whether it has siw" || fail "vm status names no kernel's siw: $status"
no_qemu_left "after the module runs"
finish
