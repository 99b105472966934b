#!/usr/bin/env bash
# Builds N veth pairs (two addresses each, both ends up, gro/gso/tso off,
# rp_filter 0) and removes them again, three ways, on the same machine in one
# run, and prints medians and ratios:
#
#   rxerun     one generated scenario: `rxerun run` (set-up, then cleanup)
#   shell      the hand recipe's commands (ip, ethtool, sysctl) in a loop
#   reference  what the kernel can do at best from a shell: `ip -batch` for
#              links, addresses and state, direct writes to /proc/sys, one
#              ethtool call per interface, removal as one group (`ip link del group`)
#   floor      the reference without offloads and sysctls: only the links,
#              addresses and states, and the group removal. No tool can do
#              the whole job in less, so shell/floor bounds any tool's
#              shell/rxerun ratio on this machine.
#
# Usage: sudo bench/netsetup.sh [RXERUN] [REPEATS] [N...]
#   defaults: build/rxerun, 5 repeats, N = 1 16 128
# Everything happens inside a throwaway network namespace (unshare -n), so
# the host's interfaces are never touched.
set -euo pipefail
cd "$(dirname "$0")/.."
RXERUN=$(realpath "${1:-build/rxerun}")
REPEATS=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1 16 128)
[ "$(id -u)" -eq 0 ] || { echo "netsetup: needs root (it creates interfaces in a throwaway namespace)"; exit 77; }

if [ -z "${NETSETUP_INSIDE:-}" ]; then
  exec env NETSETUP_INSIDE=1 unshare --net -- "$0" "$RXERUN" "$REPEATS" "${SIZES[@]}"
fi
ip link set lo up
WORK=$(mktemp -d)
export RXERUN_STATE_DIR=$WORK/state
trap 'rm -rf "$WORK"' EXIT

addr() { echo "10.$((200 + $1 / 256)).$(($1 % 256)).$2/24"; }  # pair i, host 1 or 2

gen_scenario() {  # N -> scenario on stdout
  echo "name: bench-netsetup"
  echo "steps:"
  for ((i = 0; i < $1; i++)); do
    cat <<YAML
  - veth: {name: ba$i, peer: bb$i}
  - address: {dev: ba$i, cidr: "$(addr $i 1)"}
  - address: {dev: bb$i, cidr: "$(addr $i 2)"}
  - link: {dev: ba$i, up: true}
  - link: {dev: bb$i, up: true}
  - offload: {dev: ba$i, gro: off, gso: off, tso: off}
  - offload: {dev: bb$i, gro: off, gso: off, tso: off}
  - sysctl: {key: net.ipv4.conf.ba$i.rp_filter, value: 0}
  - sysctl: {key: net.ipv4.conf.bb$i.rp_filter, value: 0}
YAML
  done
}

run_rxerun() {  # N
  "$RXERUN" run -q "$WORK/s$1.yaml" >/dev/null
}

run_shell() {  # N: the hand recipe, one command at a time
  for ((i = 0; i < $1; i++)); do
    ip link add ba$i type veth peer name bb$i
    ip addr add "$(addr $i 1)" dev ba$i
    ip addr add "$(addr $i 2)" dev bb$i
    ip link set ba$i up
    ip link set bb$i up
    ethtool -K ba$i gro off gso off tso off
    ethtool -K bb$i gro off gso off tso off
    sysctl -qw net.ipv4.conf.ba$i.rp_filter=0
    sysctl -qw net.ipv4.conf.bb$i.rp_filter=0
  done
  for ((i = 0; i < $1; i++)); do ip link del ba$i; done
}

run_reference() {  # N: batched by the kernel's own tools
  {
    for ((i = 0; i < $1; i++)); do echo "link add ba$i group 77 type veth peer name bb$i group 77"; done
  } | ip -batch -
  {
    for ((i = 0; i < $1; i++)); do
      echo "addr add $(addr $i 1) dev ba$i"
      echo "addr add $(addr $i 2) dev bb$i"
      echo "link set ba$i up"
      echo "link set bb$i up"
    done
  } | ip -batch -
  for ((i = 0; i < $1; i++)); do
    ethtool -K ba$i gro off gso off tso off
    ethtool -K bb$i gro off gso off tso off
    echo 0 >/proc/sys/net/ipv4/conf/ba$i/rp_filter
    echo 0 >/proc/sys/net/ipv4/conf/bb$i/rp_filter
  done
  ip link del group 77
}

run_floor() {  # N: the kernel's share alone (no offloads, no sysctls)
  {
    for ((i = 0; i < $1; i++)); do echo "link add ba$i group 78 type veth peer name bb$i group 78"; done
    for ((i = 0; i < $1; i++)); do
      echo "addr add $(addr $i 1) dev ba$i"
      echo "addr add $(addr $i 2) dev bb$i"
      echo "link set ba$i up"
      echo "link set bb$i up"
    done
  } | ip -batch -
  ip link del group 78
}

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

time_it() {  # COMMAND... -> seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

residue() { ip -o link show | grep -c ' b[ab][0-9]' || true; }

printf "%-6s %10s %10s %10s %10s %12s %12s %12s\n" N rxerun_s shell_s ref_s floor_s shell/rxerun rxerun/ref shell/floor
for n in "${SIZES[@]}"; do
  gen_scenario "$n" >"$WORK/s$n.yaml"
  declare -a tr=() ts=() tf=() tk=()
  for ((r = 0; r < REPEATS; r++)); do
    tr+=("$(time_it run_rxerun "$n")")
    [ "$(residue)" -eq 0 ] || { echo "netsetup: rxerun left interfaces behind"; exit 1; }
    ts+=("$(time_it run_shell "$n")")
    tf+=("$(time_it run_reference "$n")")
    tk+=("$(time_it run_floor "$n")")
    [ "$(residue)" -eq 0 ] || { echo "netsetup: interfaces left behind"; exit 1; }
  done
  mr=$(printf "%s\n" "${tr[@]}" | median)
  ms=$(printf "%s\n" "${ts[@]}" | median)
  mf=$(printf "%s\n" "${tf[@]}" | median)
  mk=$(printf "%s\n" "${tk[@]}" | median)
  printf "%-6s %10.3f %10.3f %10.3f %10.3f %12.1f %12.2f %12.1f\n" "$n" "$mr" "$ms" "$mf" "$mk" \
    "$(echo "$ms / $mr" | bc -l)" "$(echo "$mr / $mf" | bc -l)" "$(echo "$ms / $mk" | bc -l)"
done
