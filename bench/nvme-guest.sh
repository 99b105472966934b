#!/usr/bin/env bash
# The guest half of bench/nvme.sh: runs inside the lab VM (root, kernel
# 6.1), where it times scenarios/nvme-rdma.yaml run by rxerun against the
# same lab as the hand script a user writes today (configfs by mkdir, echo
# and ln -s, `nvme connect`, fio, `nvme disconnect`), with the same checks.
# Not meant to be run on a host: it changes the kernel state of the machine
# it runs on (the lab VM's is thrown away).
#
# Usage (in the guest): bench/nvme-guest.sh RXERUN REPEATS
set -uo pipefail
cd "$(dirname "$0")/.."
RXERUN=$1
REPEATS=$2
[ "${RXERUN_IN_LAB_VM:-}" = 1 ] || { echo "nvme-guest: run me through bench/nvme.sh (the lab VM)"; exit 2; }

A=10.10.0.1
B=10.10.0.2
NQN=nqn.2026-01.io.rxerun:nvme-rdma
CFG=/sys/kernel/config
S=$CFG/nvmet/subsystems/$NQN
P=$CFG/nvmet/ports/1
NB=$CFG/nullb/bench0
hw() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
net() { cat "/sys/class/net/$1/statistics/$2"; }
die() { echo "hand script: $*" >&2; exit 1; }

# The lab as a hand script: the same forced wire, the same target (64 MiB
# memory-backed null_blk), the same checks (a connect nobody listens for
# fails, fio writes and verifies 4 MiB, both rxe devices and both veth
# ends counted it), then the teardown in the order the kernel needs. Where
# a script must wait, it polls the ports' state every 0.1 s, and sleeps a
# second after `nvme connect` (which returns before the namespace's block
# device exists) as such scripts do; rxerun watches sysfs instead.
hand_script() (
  set -e
  ip link add vA type veth peer name vB
  ip addr add $A/24 dev vA
  ip addr add $B/24 dev vB
  ip link set vA up
  ip link set vB up
  sysctl -qw net.ipv4.conf.vA.rp_filter=0
  sysctl -qw net.ipv4.conf.vB.rp_filter=0
  sysctl -qw net.ipv4.conf.all.accept_local=1
  sysctl -qw net.ipv4.conf.vA.accept_local=1
  sysctl -qw net.ipv4.conf.vB.accept_local=1
  ip route add $B/32 dev vA src $A table 100
  ip route add $A/32 dev vB src $B table 101
  ip rule add pref 100 iif lo to $B/32 table 100
  ip rule add pref 101 iif lo to $A/32 table 101
  ip rule add pref 1000 table local
  ip rule del pref 0 table local
  modprobe rdma_rxe
  rdma link add rxe0 type rxe netdev vA
  rdma link add rxe1 type rxe netdev vB
  for d in rxe0 rxe1; do
    until rdma link show $d/1 | grep -q 'state ACTIVE'; do sleep 0.1; done
  done

  modprobe nvmet
  modprobe nvmet-rdma
  modprobe null_blk nr_devices=0
  mountpoint -q $CFG || mount -t configfs none $CFG
  mkdir $NB
  echo 64 >$NB/size
  echo 1 >$NB/memory_backed
  echo 1 >$NB/power
  mkdir $S
  echo 1 >$S/attr_allow_any_host
  mkdir $S/namespaces/1
  echo -n /dev/bench0 >$S/namespaces/1/device_path
  echo 1 >$S/namespaces/1/enable
  mkdir $P
  echo rdma >$P/addr_trtype
  echo ipv4 >$P/addr_adrfam
  echo $A >$P/addr_traddr
  echo 4420 >$P/addr_trsvcid
  ln -s $S $P/subsystems/$NQN

  ping -q -c1 -I vB $A >/dev/null || { sleep 0.2; ping -q -c1 -I vB $A >/dev/null; }
  modprobe nvme-rdma
  nvme connect -t rdma -a $A -s 4420 -n $NQN --host-traddr=$B >/dev/null
  # nvme connect returns before the kernel has scanned the namespaces: a
  # script waits a second (then looks, and keeps looking if need be).
  sleep 1
  dev=
  for _ in $(seq 300); do
    dev=$(ls /sys/class/nvme-subsystem/*/ 2>/dev/null | grep -m1 -E '^nvme[0-9]+n1$' || true)
    [ -n "$dev" ] && [ -b /dev/$dev ] && break
    sleep 0.1
  done
  [ -b /dev/$dev ] || die "no namespace block device"
  if nvme connect -t rdma -a $A -s 4421 -n $NQN --host-traddr=$B >/dev/null 2>&1; then die "a connect to 4421 passed"; fi

  local s0 r0 s1 r1 tx rx
  s0=$(hw rxe0 sent_pkts) r0=$(hw rxe0 rcvd_pkts) s1=$(hw rxe1 sent_pkts) r1=$(hw rxe1 rcvd_pkts)
  tx=$(net vB tx_packets) rx=$(net vA rx_packets)
  fio --name=verify --filename=/dev/$dev --direct=1 --ioengine=psync --rw=write --bs=64k --size=4M \
    --verify=crc32c --do_verify=1 --output-format=json >/tmp/fio.json
  python3 -c 'import json,sys; j=json.load(open("/tmp/fio.json"))["jobs"][0]; sys.exit(0 if j["error"] == 0 and j["write"]["io_bytes"] == j["read"]["io_bytes"] == 4194304 else 1)' ||
    die "fio's result"
  [ $(($(hw rxe1 sent_pkts) - s1)) -gt 1000 ] && [ $(($(hw rxe1 rcvd_pkts) - r1)) -gt 1000 ] &&
    [ $(($(hw rxe0 sent_pkts) - s0)) -gt 1000 ] && [ $(($(hw rxe0 rcvd_pkts) - r0)) -gt 1000 ] &&
    [ $(($(net vB tx_packets) - tx)) -gt 1000 ] && [ $(($(net vA rx_packets) - rx)) -gt 1000 ] || die "fio's counters"

  nvme disconnect -n $NQN >/dev/null
  rm $P/subsystems/$NQN
  rmdir $P
  echo 0 >$S/namespaces/1/enable
  rmdir $S/namespaces/1
  rmdir $S
  echo 0 >$NB/power
  rmdir $NB
  umount $CFG
  modprobe -r nvme-rdma nvmet-rdma nvmet null_blk
  rdma link delete rxe1
  rdma link delete rxe0
  modprobe -r rdma_rxe
  ip rule add pref 0 table local
  ip rule del pref 1000 table local
  ip rule del pref 101
  ip rule del pref 100
  ip link del vA
  sysctl -qw net.ipv4.conf.all.accept_local=0
)

now() { date +%s.%N; }
rx_times=() sh_times=()
for ((i = 1; i <= REPEATS; i++)); do
  for who in $( ((i % 2)) && echo "rxerun shell" || echo "shell rxerun"); do
    t0=$(now)
    if [ "$who" = rxerun ]; then
      "$RXERUN" run --host -q scenarios/nvme-rdma.yaml >/tmp/rxerun.out 2>&1 ||
        { cat /tmp/rxerun.out; echo "nvme-guest: rxerun's run failed"; exit 1; }
      rx_times+=("$(echo "$(now) - $t0" | bc)")
    else
      hand_script || { echo "nvme-guest: the hand script failed"; exit 1; }
      sh_times+=("$(echo "$(now) - $t0" | bc)")
    fi
  done
done
echo "rxerun ${rx_times[*]}"
echo "shell ${sh_times[*]}"
