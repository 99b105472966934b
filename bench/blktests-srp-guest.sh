#!/bin/bash
# The guest half of bench/blktests-srp.sh, run by `rxerun vm exec` (root, a
# throwaway kernel state). blktests wants a writable /etc (multipath.conf),
# the kernel's config under /boot, udevd (multipathd's events, the by-id
# links) and interfaces with a carrier to bind rxe to: overlays on tmpfs
# over the read-only root, udevd started by hand, a veth pair.
# Usage: blktests-srp-guest.sh RXERUN BLKTESTS_DIR
RXERUN=$1
BLK=$2
for d in etc boot var; do
  mkdir -p /run/ov/$d/up /run/ov/$d/work
  mount -t overlay overlay -o lowerdir=/$d,upperdir=/run/ov/$d/up,workdir=/run/ov/$d/work /$d
done
cp /var/cache/rxerun/kernels/6.1/root/boot/config-"$(uname -r)" /boot/
modprobe configfs
mount -t configfs none /sys/kernel/config
mkdir -p /run/udev
/lib/systemd/systemd-udevd --daemon
udevadm trigger --action=add >/dev/null 2>&1
udevadm settle -t 30
ip link add bA type veth peer name bB
ip addr add 10.99.0.1/24 dev bA
ip addr add 10.99.0.2/24 dev bB
ip link set bA up
ip link set bB up
sleep 2

cd "$BLK" || exit 1
start=$(date +%s.%N)
USE_RXE=1 ./check srp
echo "blktests srp group: exit $?, $(echo "$(date +%s.%N) - $start" | bc) s"
cd - >/dev/null || exit 1
umount /sys/kernel/config 2>/dev/null

# The SRP lab, 5 rounds, each with its own teardown.
for i in 1 2 3 4 5; do
  s=$(date +%s.%N)
  out=$("$RXERUN" run --host scenarios/srp-rdma.yaml 2>&1)
  code=$?
  echo "srp-rdma round $i: exit $code, wall $(echo "$(date +%s.%N) - $s" | bc) s; $(echo "$out" | grep -E '^(PASS|FAIL)')"
done
