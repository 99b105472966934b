#!/usr/bin/env bash
# Time to the first step of a two-node lab (two lab VMs booted at once,
# joined by a wire, each with its agent: bench/data/two-node-idle.yaml)
# against a one-node lab of the same kernel in the same run
# (tests/data/vm/idle.yaml with --vm). Each run is timed from the command's
# start to the line that reports its first step; runs alternate, REPEATS of
# each; prints the medians and ranges and the ratio of the medians.
#
# Usage: bench/nodes.sh [RXERUN] [REPEATS] [KERNEL]
#   defaults: build/rxerun, 5 repeats, the newest prepared kernel
# No root needed; the two-node runs take two cores and 2.8 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
RXERUN=$(realpath "${1:-build/rxerun}")
REPEATS=${2:-5}
KERNEL=${3:-$("$RXERUN" vm status | awk '$2 == "ready" {print $1}' | sort -rV | head -1)}
[ -n "$KERNEL" ] || { echo "nodes: no lab kernel is prepared: run \`rxerun vm setup\`"; exit 77; }

# Seconds from the start of COMMAND... to its first line that reports a
# step (a result row: "  ok    NAME ..."); the command runs to its end.
first_step() {
  python3 - "$@" <<'PY'
import subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
first = None
for line in p.stdout:
    if first is None and line.lstrip("[ab] ").startswith("ok "):
        first = time.monotonic() - t0
if p.wait() != 0 or first is None:
    sys.exit("the run failed (exit %d)" % p.returncode)
print("%.2f" % first)
PY
}

stats() {  # numbers on stdin -> "median min max"
  sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
    printf "%.2f %.2f %.2f\n", m, a[1], a[NR]}'
}

one=() two=()
for ((r = 0; r < REPEATS; r++)); do
  one+=("$(first_step "$RXERUN" run --vm --kernel "$KERNEL" --color never tests/data/vm/idle.yaml)")
  two+=("$(first_step "$RXERUN" run --color never --var kernel="$KERNEL" bench/data/two-node-idle.yaml)")
done
read -r m1 lo1 hi1 < <(printf '%s\n' "${one[@]}" | stats)
read -r m2 lo2 hi2 < <(printf '%s\n' "${two[@]}" | stats)
printf "kernel %s, %d runs each: seconds to the first step, median (range)\n" "$KERNEL" "$REPEATS"
printf "  one node (one lab VM)    %s (%s-%s)\n" "$m1" "$lo1" "$hi1"
printf "  two nodes (two lab VMs)  %s (%s-%s)\n" "$m2" "$lo2" "$hi2"
printf "  ratio two/one            %.2f\n" "$(echo "$m2 / $m1" | bc -l)"
