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
RXERUN=$(realpath "${1:-build/rxerun}")
REPEATS=${2:-5}
"$RXERUN" vm status | awk '$1 == "6.1" && $2 == "ready"' | grep -q . ||
  { echo "nvme: kernel 6.1 is not prepared: run \`rxerun vm setup --kernel 6.1\`"; exit 77; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

"$RXERUN" vm exec -q --kernel 6.1 --timeout 30m -- "$PWD/bench/nvme-guest.sh" "$RXERUN" "$REPEATS" >"$WORK/out" 2>&1 ||
  { cat "$WORK/out"; echo "nvme: the run in the lab VM failed"; exit 1; }

python3 - "$WORK/out" "$REPEATS" <<'PYEOF'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    words = line.split()
    if words and words[0] in ("rxerun", "shell"):
        times[words[0]] = [float(w) for w in words[1:]]
def show(v):
    return "%7.2f  (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))
print("scenarios/nvme-rdma.yaml against the hand script, %s rounds, lab VM kernel 6.1" % sys.argv[2])
print("  rxerun         s median %s" % show(times["rxerun"]))
print("  hand script    s median %s" % show(times["shell"]))
ratio = statistics.median(times["shell"]) / statistics.median(times["rxerun"])
print("  ratio shell / rxerun: %.2f (target >= 2: %s)" % (ratio, "met" if ratio >= 2 else "NOT met"))
PYEOF
