#!/usr/bin/env bash
# Wall time of a shipped lab against the hand recipe it replaces, in ONE lab
# VM boot (kernel 6.1, what the recipe ran on): scenarios/veth-pair-wire.yaml
# run by rxerun, and the same lab as a shell script of the recipe's commands
# (ip, ethtool, sysctl, ping, modprobe, rdma, rping, ib_write_bw) doing the
# same checks (pings both ways, ports ACTIVE, GID[1], rping's 5 round trips
# and ib_write_bw's 2000 writes with the counters of both rxe devices and
# both veth ends), each set up, checked and removed REPEATS times,
# alternating which goes first. Prints the medians (and ranges) and the
# ratio shell / rxerun; the target is at least 2.
#
# Usage: bench/labs.sh [RXERUN] [REPEATS]
#   defaults: build/rxerun, 5 repeats
# No root needed (the lab VM). Run it under the VM lock where others share
# the machine: flock /tmp/rxerun-vm.lock bench/labs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/vm_ratio.sh
vm_ratio labs labs-guest.sh "scenarios/veth-pair-wire.yaml against the hand recipe as a shell script" "shell recipe" "$@"
