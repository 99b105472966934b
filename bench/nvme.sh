#!/usr/bin/env bash
# Wall time of the NVMe over Fabrics lab against the hand script a user
# writes today for the same set-up, check and teardown, in ONE lab VM boot
# (kernel 6.1): scenarios/nvme-rdma.yaml run by rxerun, and the same lab as
# a shell script (ip, sysctl, modprobe, rdma, the target in configfs by
# mkdir/echo/ln -s, `nvme connect`, fio, `nvme disconnect`, the teardown),
# doing the same checks (a connect nobody listens for fails; fio writes and
# verifies 4 MiB; both rxe devices and both veth ends counted it), each set
# up, checked and removed REPEATS times, alternating which goes first.
# Prints the medians (and ranges) and the ratio shell / rxerun; the target
# is at least 2.
#
# Usage: bench/nvme.sh [RXERUN] [REPEATS]
#   defaults: build/rxerun, 5 repeats
# No root needed (the lab VM). Run it under the VM lock where others share
# the machine: flock /tmp/rxerun-vm.lock bench/nvme.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/vm_ratio.sh
vm_ratio nvme nvme-guest.sh "scenarios/nvme-rdma.yaml against the hand script" "hand script" "$@"
