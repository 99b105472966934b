#!/usr/bin/env bash
# RDMA WRITE bandwidth of the `verbs` step against ib_write_bw's (the
# `perftest` step, rdma_cm on), at the same size and iteration count, in ONE
# lab VM run (kernel 7.3): two namespaces, each with a veth end, an address
# and an rxe device, then REPEATS rounds of both, alternating which goes
# first. Prints each median (and range) in MiB/s and the ratio verbs /
# ib_write_bw; the target is a ratio of at least 1. A benchmark, not a test:
# under software emulation the figures vary 2-3x from run to run.
#
# Usage: bench/verbs-bw.sh [RXERUN] [REPEATS] [SIZE] [ITERATIONS]
#   defaults: build/rxerun, 5 repeats, 65536 bytes, 2000 iterations
# No root needed (the lab VM). Run it under the VM lock where others share
# the machine: flock /tmp/rxerun-vm.lock bench/verbs-bw.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RXERUN=$(realpath "${1:-build/rxerun}")
REPEATS=${2:-5}
SIZE=${3:-65536}
ITERS=${4:-2000}
"$RXERUN" vm status | awk '$1 == "7.3" && $2 == "ready"' | grep -q . ||
  { echo "verbs-bw: kernel 7.3 is not prepared: run \`rxerun vm setup --kernel 7.3\`"; exit 77; }
# Without the perftest kind (not in this build yet) only the verbs half runs.
PERFTEST=1
"$RXERUN" steps perftest >/dev/null 2>&1 || PERFTEST=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

verbs_step() {  # ROUND
  cat <<EOF
  - name: verbs-$1
    verbs:
      server: {addr: 10.82.0.1, netns: bw-a}
      client: {addr: 10.82.0.2, netns: bw-b}
      ops: [write]
      sizes: [$SIZE]
      iterations: $ITERS
    timeout: 5m
EOF
}
perftest_step() {  # ROUND
  [ "$PERFTEST" = 1 ] || return 0
  cat <<EOF
  - name: perftest-$1
    perftest:
      test: write_bw
      server: {dev: rxe0, netns: bw-a}
      client: {dev: rxe1, to: 10.82.0.1, netns: bw-b}
      size: $SIZE
      iterations: $ITERS
      rdma_cm: true
    timeout: 5m
EOF
}

{
  cat <<EOF
name: bench-verbs-bw
vm: {kernel: "7.3", timeout: 30m}
steps:
  - netns: {name: bw-a}
  - netns: {name: bw-b}
  - veth: {name: vA, peer: vB, peer_netns: bw-b}
    netns: bw-a
  - address: {dev: vA, cidr: 10.82.0.1/24}
    netns: bw-a
  - link: {dev: vA, up: true}
    netns: bw-a
  - address: {dev: vB, cidr: 10.82.0.2/24}
    netns: bw-b
  - link: {dev: vB, up: true}
    netns: bw-b
  - rxe: {name: rxe0, netdev: vA}
    netns: bw-a
  - rxe: {name: rxe1, netdev: vB}
    netns: bw-b
  - port: {dev: rxe0}
    netns: bw-a
  - port: {dev: rxe1}
    netns: bw-b
EOF
  for ((r = 1; r <= REPEATS; r++)); do
    if ((r % 2)); then verbs_step "$r"; perftest_step "$r"; else perftest_step "$r"; verbs_step "$r"; fi
  done
} >"$WORK/bench.yaml"

"$RXERUN" run -q --vm --kernel 7.3 "$WORK/bench.yaml" --report json:"$WORK/r.json" >"$WORK/out" 2>&1 ||
  { cat "$WORK/out"; echo "verbs-bw: the lab run failed"; exit 1; }

python3 - "$WORK/r.json" "$SIZE" "$ITERS" "$REPEATS" <<'EOF'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
size, iters, repeats = sys.argv[2], sys.argv[3], sys.argv[4]
def figures(prefix, fact):
    return [s["facts"][fact] for s in r["steps"] if s["name"].startswith(prefix) and fact in s["facts"]]
verbs = figures("verbs-", "bw_mib_" + size)
perf = figures("perftest-", "bw_avg_mib_s")
def show(v):
    return "%8.2f  (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))
print("RDMA WRITE, %s bytes x %s iterations, %s rounds, kernel %s (%s), two namespaces" %
      (size, iters, repeats, r["vm"]["release"], r["vm"]["accel"]))
print("  verbs step     MiB/s median %s" % show(verbs))
if not perf:
    print("  ib_write_bw    not measured: this rxerun has no perftest step kind")
    sys.exit(0)
# perftest times with the cycle counter; when it cannot calibrate it under
# emulation, the perftest step reports no rate (clock_calibrated=false).
untimed = int(repeats) - len(perf)
if not perf:
    print("  ib_write_bw    not measured: perftest could not calibrate its cycle counter in any round")
    sys.exit(1)
print("  ib_write_bw    MiB/s median %s%s" % (show(perf), "  (%d of %s rounds untimed: perftest could not calibrate)" % (untimed, repeats) if untimed else ""))
ratio = statistics.median(verbs) / statistics.median(perf)
print("  ratio verbs / ib_write_bw: %.2f (target >= 1: %s)" % (ratio, "met" if ratio >= 1 else "NOT met"))
EOF
