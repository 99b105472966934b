# The SCSI RDMA Protocol for real, in the lab VM (rxerun runs inside it,
# --host, so that the kernel can be looked at afterwards;
# tests/data/vm/srp-guest.sh is the guest half): on every prepared kernel,
# scenarios/srp-rdma.yaml (an ib_srpt target in configfs, the ib_srp login
# across the forced wire, fio writing and verifying through the SCSI disk,
# the rxe counters proving the transfer, a login nobody answers refused
# with the kernel's reason) and nothing left after cleanup (no login, no
# disk, no configfs entry, configfs unmounted, the modules this run loaded
# unloaded); on the newest kernel (7.3), the initiator logging in from a
# network namespace of its own, and rxerun SIGKILLed mid-lab and `rxerun
# cleanup` leaving nothing.
source "$(dirname "$0")/lib.sh"
guest() {  # KERNEL WHAT
  "$RXERUN" vm exec -q --kernel "$1" --timeout 10m -- /bin/bash tests/data/vm/srp-guest.sh "$RXERUN" $2
}
# One boot per kernel: the newest one's also logs in from another network
# namespace (rxe works in any namespace from 7.1 on) and kills a run mid-lab.
for k in $KERNELS; do
  what=lab
  [ "$k" = "$NEWEST" ] && what="lab netns kill"
  expect_exit 0 "kernel $k: the SRP lab in the guest ($what)" -- guest "$k" "$what"
  check_guest "kernel $k"
done
no_qemu_left "after the SRP runs"
finish
