# NFS over RDMA for real, in the lab VM (rxerun runs inside it, --host, so
# that the kernel can be looked at afterwards; tests/data/vm/nfs-guest.sh
# is the guest half): on every prepared kernel, scenarios/nfs-rdma.yaml
# (nfsd with an RDMA listener and a tmpfs export, a mount nobody serves
# refused with the kernel's errno, the NFSv4.2 mount over RDMA across the
# forced wire, fio writing through it and verifying in the server's
# directory, the rxe counters proving the transfer) and nothing left after
# cleanup (no mount, no directory, nfsd's modules unloaded); on the newest
# kernel (7.3), an export of the lab's own directory that nobody mounts,
# the server in a network namespace of its own, a server gone silent
# (UDP 4791 dropped) whose mount's unmount shuts its NFS client down after
# 30 s instead of waiting minutes, and rxerun SIGKILLed mid-lab and
# `rxerun cleanup` leaving nothing.
source "$(dirname "$0")/lib.sh"
guest() {  # KERNEL WHAT
  "$RXERUN" vm exec -q --kernel "$1" --timeout 10m -- /bin/bash tests/data/vm/nfs-guest.sh "$RXERUN" $2
}
# One boot per kernel: the newest one's also serves from another network
# namespace (rxe works in any namespace from 7.1 on) and kills a run mid-lab.
for k in $KERNELS; do
  what=lab
  [ "$k" = "$NEWEST" ] && what="lab idle netns stall kill"
  expect_exit 0 "kernel $k: the NFS lab in the guest ($what)" -- guest "$k" "$what"
  check_guest "kernel $k"
done
no_qemu_left "after the NFS runs"
finish
