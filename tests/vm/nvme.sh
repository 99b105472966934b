# NVMe over Fabrics for real, in the lab VM (rxerun runs inside it, --host,
# so that the kernel can be looked at afterwards; tests/data/vm/nvme-guest.sh
# is the guest half): on every prepared kernel, a target and a host over rxe
# across the forced wire, fio writing and verifying through the namespace,
# the rxe counters proving the transfer, a host the target refuses, and
# nothing left after cleanup (no controller, no configfs entry, configfs
# unmounted, the modules this run loaded unloaded, the backing file gone);
# a connect to a port nobody listens on fails with the kernel's reason; on
# the newest kernel, rxerun SIGKILLed mid-lab and `rxerun cleanup` leaving
# nothing.
source "$(dirname "$0")/lib.sh"
guest() {  # KERNEL WHAT
  "$RXERUN" vm exec -q --kernel "$1" --timeout 10m -- /bin/bash tests/data/vm/nvme-guest.sh "$RXERUN" "$2"
}
for k in $KERNELS; do
  expect_exit 0 "kernel $k: the NVMe labs in the guest" -- guest "$k" lab
  check_guest "kernel $k"
done
expect_exit 0 "kernel $NEWEST: SIGKILL mid-lab, then rxerun cleanup" -- guest "$NEWEST" kill
check_guest "kernel $NEWEST, SIGKILL"
no_qemu_left "after the NVMe runs"
finish
