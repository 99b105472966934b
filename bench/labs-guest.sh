#!/usr/bin/env bash
# The guest half of bench/labs.sh: runs inside the lab VM (root, kernel 6.1),
# where it times scenarios/veth-pair-wire.yaml run by rxerun against the same
# lab as a hand recipe's shell script doing the same checks. Not meant to be
# run on a host: it changes the network configuration of the machine it runs
# on (the lab VM's is thrown away).
#
# Usage (in the guest): bench/labs-guest.sh RXERUN REPEATS
set -uo pipefail
cd "$(dirname "$0")/.."
RXERUN=$1
REPEATS=$2
[ "${RXERUN_IN_LAB_VM:-}" = 1 ] || { echo "labs-guest: run me through bench/labs.sh (the lab VM)"; exit 2; }

A=10.10.0.1
B=10.10.0.2
hw() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
net() { cat "/sys/class/net/$1/statistics/$2"; }
die() { echo "shell recipe: $*" >&2; exit 1; }

# The common hand recipe with the forced wire, as a script: the same
# lab, the same checks as the scenario. Where a person waits for a server
# in another terminal, the script sleeps a second, as such scripts do; the
# port state is polled.
shell_recipe() (
  set -e
  ip link add vA type veth peer name vB
  ip addr add $A/24 dev vA
  ip addr add $B/24 dev vB
  ip link set vA up
  ip link set vB up
  ethtool -K vA gro off gso off tso off
  ethtool -K vB gro off gso off tso off
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
  ping -q -c2 -i0.1 -I vA $B >/dev/null || { sleep 0.5; ping -q -c2 -i0.1 -I vA $B >/dev/null; }
  ping -q -c2 -i0.1 -I vB $A >/dev/null
  modprobe rdma_rxe
  rdma link add rxe0 type rxe netdev vA
  rdma link add rxe1 type rxe netdev vB
  for d in rxe0 rxe1; do
    until rdma link show $d/1 | grep -q 'state ACTIVE'; do sleep 0.1; done
  done
  [ "$(cat /sys/class/infiniband/rxe0/ports/1/gids/1)" = "0000:0000:0000:0000:0000:ffff:0a0a:0001" ] || die "GID[1] of rxe0"

  local s0 r0 s1 r1 tx rx
  s0=$(hw rxe0 sent_pkts) r0=$(hw rxe0 rcvd_pkts) s1=$(hw rxe1 sent_pkts) r1=$(hw rxe1 rcvd_pkts)
  tx=$(net vB tx_packets) rx=$(net vA rx_packets)
  rping -s -a $A -p 7174 -C 5 -S 64 >/dev/null &
  sleep 1
  n=$(rping -c -a $A -I $B -p 7174 -C 5 -S 64 -v | grep -c 'ping data')
  wait
  [ "$n" = 5 ] || die "rping: $n round trips"
  [ $(hw rxe0 sent_pkts) -gt $s0 ] && [ $(hw rxe0 rcvd_pkts) -gt $r0 ] && [ $(hw rxe1 sent_pkts) -gt $s1 ] &&
    [ $(hw rxe1 rcvd_pkts) -gt $r1 ] && [ $(net vB tx_packets) -gt $tx ] && [ $(net vA rx_packets) -gt $rx ] ||
    die "rping's counters"

  s1=$(hw rxe1 sent_pkts) tx=$(net vB tx_packets) rx=$(net vA rx_packets)
  LC_ALL=C ib_write_bw -d rxe0 -x 1 -F -R -m 1024 -s 1024 -n 2000 -p 18515 >/dev/null 2>&1 &
  sleep 1
  LC_ALL=C ib_write_bw -d rxe1 -x 1 -F -R -m 1024 -s 1024 -n 2000 -p 18515 $A 2>/dev/null |
    grep -Eq '^ *1024 +2000 ' || die "ib_write_bw's result row"
  wait
  [ $(($(hw rxe1 sent_pkts) - s1)) -gt 1000 ] && [ $(($(net vB tx_packets) - tx)) -gt 1000 ] &&
    [ $(($(net vA rx_packets) - rx)) -gt 1000 ] || die "ib_write_bw's counters"

  # The recipe's cleanup, in reverse.
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
      "$RXERUN" run --host -q scenarios/veth-pair-wire.yaml >/tmp/rxerun.out 2>&1 ||
        { cat /tmp/rxerun.out; echo "labs-guest: rxerun's run failed"; exit 1; }
      rx_times+=("$(echo "$(now) - $t0" | bc)")
    else
      shell_recipe || { echo "labs-guest: the shell recipe failed"; exit 1; }
      sh_times+=("$(echo "$(now) - $t0" | bc)")
    fi
  done
done
echo "rxerun ${rx_times[*]}"
echo "shell ${sh_times[*]}"
