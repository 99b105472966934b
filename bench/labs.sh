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
RXERUN=$(realpath "${1:-build/rxerun}")
REPEATS=${2:-5}
"$RXERUN" vm status | awk '$1 == "6.1" && $2 == "ready"' | grep -q . ||
  { echo "labs: kernel 6.1 is not prepared: run \`rxerun vm setup --kernel 6.1\`"; exit 77; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

"$RXERUN" vm exec -q --kernel 6.1 --timeout 30m -- "$PWD/bench/labs-guest.sh" "$RXERUN" "$REPEATS" >"$WORK/out" 2>&1 ||
  { cat "$WORK/out"; echo "labs: the run in the lab VM failed"; exit 1; }

python3 - "$WORK/out" "$REPEATS" <<'PYEOF'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    words = line.split()
    if words and words[0] in ("rxerun", "shell"):
        times[words[0]] = [float(w) for w in words[1:]]
def show(v):
    return "%7.2f  (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))
print("scenarios/veth-pair-wire.yaml against the hand recipe as a shell script, %s rounds, lab VM kernel 6.1" % sys.argv[2])
print("  rxerun         s median %s" % show(times["rxerun"]))
print("  shell recipe   s median %s" % show(times["shell"]))
ratio = statistics.median(times["shell"]) / statistics.median(times["rxerun"])
print("  ratio shell / rxerun: %.2f (target >= 2: %s)" % (ratio, "met" if ratio >= 2 else "NOT met"))
PYEOF
