#!/usr/bin/env bash
# Two lab VMs against one, REPEATS runs of each, alternating; medians and
# ranges, and the ratio of the medians:
# - time to the first step of a two-node lab (two lab VMs booted at once,
#   joined by a wire, each with its agent: bench/data/two-node-idle.yaml)
#   against a one-node lab of the same kernel (tests/data/vm/idle.yaml with
#   --vm), from the command's start to the line that reports its first step;
# - the bandwidth of 64 KiB RDMA WRITEs, measured by rxerun's verbs check
#   and by ib_write_bw, across the wire between two lab VMs
#   (bench/data/two-node-bw.yaml) against across a veth in one
#   (bench/data/one-node-bw.yaml), both on 7.3.
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
# step; the command runs to its end.
first_step() { python3 bench/first_step.py "$@" | cut -d' ' -f1; }

stats() {  # numbers on stdin -> "median min max"
  sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
    printf "%.2f %.2f %.2f\n", m, a[1], a[NR]}'
}

# compare TITLE LABEL1 LABEL2 RATIO_LABEL -- VALUES1... -- VALUES2...: each
# set's median and range, and the ratio of the medians (second / first).
compare() {
  local title=$1 l1=$2 l2=$3 lr=$4 m1 lo1 hi1 m2 lo2 hi2
  shift 5
  local first=() second=()
  while [ "$1" != -- ]; do first+=("$1"); shift; done
  shift
  second=("$@")
  read -r m1 lo1 hi1 < <(printf '%s\n' "${first[@]}" | stats)
  read -r m2 lo2 hi2 < <(printf '%s\n' "${second[@]}" | stats)
  printf "%s\n" "$title"
  printf "  %-35s %s (%s-%s)\n" "$l1" "$m1" "$lo1" "$hi1"
  printf "  %-35s %s (%s-%s)\n" "$l2" "$m2" "$lo2" "$hi2"
  printf "  %-35s %.2f\n" "$lr" "$(echo "$m2 / $m1" | bc -l)"
}

# One untimed run of each first: it makes the snapshot of its machine when
# there is none (a lab VM with a wire is another machine than one without).
first_step "$RXERUN" run --vm --kernel "$KERNEL" --color never tests/data/vm/idle.yaml >/dev/null
first_step "$RXERUN" run --color never --var kernel="$KERNEL" bench/data/two-node-idle.yaml >/dev/null
one=() two=()
for ((r = 0; r < REPEATS; r++)); do
  one+=("$(first_step "$RXERUN" run --vm --kernel "$KERNEL" --color never tests/data/vm/idle.yaml)")
  two+=("$(first_step "$RXERUN" run --color never --var kernel="$KERNEL" bench/data/two-node-idle.yaml)")
done
compare "kernel $KERNEL, $REPEATS runs each: seconds to the first step, median (range)" \
  "one node (one lab VM)" "two nodes (two lab VMs)" "ratio two/one" -- "${one[@]}" -- "${two[@]}"

# FACT of step STEP of a JSON report.
fact() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print([s["facts"][sys.argv[3]] for s in r["steps"] if s["name"] == sys.argv[2]][0])' "$@"; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
veth=() wire=() vveth=() vwire=()
for ((r = 0; r < REPEATS; r++)); do
  "$RXERUN" run -q --vm bench/data/one-node-bw.yaml --report json:"$WORK/one.json" >/dev/null
  veth+=("$(fact "$WORK/one.json" bw bw_avg_mib_s)")
  vveth+=("$(fact "$WORK/one.json" vbw bw_mib_65536)")
  "$RXERUN" run -q bench/data/two-node-bw.yaml --report json:"$WORK/two.json" >/dev/null
  wire+=("$(fact "$WORK/two.json" bw bw_avg_mib_s)")
  vwire+=("$(fact "$WORK/two.json" vbw bw_mib_65536)")
done
for tool in verbs ib_write_bw; do
  title="$tool, 64 KiB RDMA WRITEs, kernel 7.3, $REPEATS runs each: MiB/s, median (range)"
  rows=("across a veth in one lab VM" "across a wire between two lab VMs" "ratio wire/veth")
  if [ "$tool" = verbs ]; then
    compare "$title" "${rows[@]}" -- "${vveth[@]}" -- "${vwire[@]}"
  else
    compare "$title" "${rows[@]}" -- "${veth[@]}" -- "${wire[@]}"
  fi
done
