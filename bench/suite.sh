#!/usr/bin/env bash
# What a suite saves, same machine, same run, alternating which goes first:
#
# 1. Every shipped lab of one kernel (scenarios/*.yaml whose vm.kernel is
#    KERNEL) as ONE suite invocation (one boot) against one invocation per
#    lab (a boot each): wall time, medians, ratio per-lab / suite (target 2).
# 2. Every shipped lab on its own kernel (6.1 and 7.3: two boots) with -j 2
#    against -j 1: wall time, medians, ratio -j 1 / -j 2, next to the
#    number of cores (the ceiling of that ratio).
#
# Usage: bench/suite.sh [RXERUN] [REPEATS] [KERNEL]
#   defaults: build/rxerun, 3 repeats, kernel 6.1
# Needs both lab kernels prepared; no root. Run it under the VM lock where
# others share the machine: flock /tmp/rxerun-vm.lock bench/suite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RXERUN=$(realpath "${1:-build/rxerun}")
REPEATS=${2:-3}
KERNEL=${3:-6.1}
for k in 6.1 7.3; do
  "$RXERUN" vm status | awk -v k=$k '$1 == k && $2 == "ready"' | grep -q . ||
    { echo "suite: kernel $k is not prepared: run \`rxerun vm setup --kernel $k\`"; exit 77; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

labs_of() {  # KERNEL: the shipped labs that name it
  local f
  for f in scenarios/*.yaml; do
    grep -qE "^vm: \{kernel: \"$1\"\}" "$f" && echo "$f"
  done
}
mapfile -t one < <(labs_of "$KERNEL")
mapfile -t all < <(labs_of 6.1; labs_of 7.3)

# seconds COMMAND...: runs it quietly, prints its wall time; a failure stops
# the benchmark (a timing of a broken run means nothing).
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >"$WORK/out" 2>&1 || { cat "$WORK/out"; echo "suite: failed: $*"; exit 1; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f\n", b - a }'
}
per_lab() {
  local f
  for f in "${one[@]}"; do "$RXERUN" run --vm -q --output-dir "$WORK/out-files" "$f" || return 1; done
}

: >"$WORK/suite" >"$WORK/perlab" >"$WORK/j1" >"$WORK/j2"
for ((r = 1; r <= REPEATS; r++)); do
  if ((r % 2)); then
    seconds "$RXERUN" run --vm -q --output-dir "$WORK/out-files" "${one[@]}" >>"$WORK/suite"
    seconds per_lab >>"$WORK/perlab"
    seconds "$RXERUN" run --vm -q --output-dir "$WORK/out-files" -j 1 "${all[@]}" >>"$WORK/j1"
    seconds "$RXERUN" run --vm -q --output-dir "$WORK/out-files" -j 2 "${all[@]}" >>"$WORK/j2"
  else
    seconds per_lab >>"$WORK/perlab"
    seconds "$RXERUN" run --vm -q --output-dir "$WORK/out-files" "${one[@]}" >>"$WORK/suite"
    seconds "$RXERUN" run --vm -q --output-dir "$WORK/out-files" -j 2 "${all[@]}" >>"$WORK/j2"
    seconds "$RXERUN" run --vm -q --output-dir "$WORK/out-files" -j 1 "${all[@]}" >>"$WORK/j1"
  fi
done

python3 - "$WORK" "$REPEATS" "$KERNEL" "${#one[@]}" "${#all[@]}" "$(nproc)" <<'PYEOF'
import statistics, sys
work, repeats, kernel, n_one, n_all, cores = sys.argv[1:]
def times(name):
    return [float(line) for line in open(f"{work}/{name}") if line.strip()]
def show(v):
    return "%7.1f  (%.1f-%.1f)" % (statistics.median(v), min(v), max(v))
suite, perlab, j1, j2 = times("suite"), times("perlab"), times("j1"), times("j2")
print(f"{n_one} shipped labs of kernel {kernel}, {repeats} rounds, lab VM under the machine's accelerator")
print(f"  one suite (1 boot)      s median {show(suite)}")
print(f"  one run per lab         s median {show(perlab)}")
r = statistics.median(perlab) / statistics.median(suite)
print("  ratio per-lab / suite: %.2f (target >= 2: %s)" % (r, "met" if r >= 2 else "NOT met"))
print(f"{n_all} shipped labs on their own kernels (6.1 and 7.3), {repeats} rounds, {cores} cores")
print(f"  -j 1                    s median {show(j1)}")
print(f"  -j 2                    s median {show(j2)}")
print("  ratio -j 1 / -j 2: %.2f (ceiling: %s cores, and the longer of the two kernels' suites)"
      % (statistics.median(j1) / statistics.median(j2), cores))
PYEOF
