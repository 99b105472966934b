#!/usr/bin/env bash
# Boot-to-first-step time of the lab VM: for each prepared kernel, REPEATS
# runs of a one-step scenario with `rxerun run --vm`; prints the median and
# the range of the time from qemu's start to the guest's first step (the
# report's vm.boot_s), of the guest kernel's own uptime at that moment, and
# of the whole command.
#
# Usage: bench/vmboot.sh [RXERUN] [REPEATS] [KERNEL...]
#   defaults: build/rxerun, 10 repeats, every prepared kernel
# No root needed. Runs one VM at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
RXERUN=$(realpath "${1:-build/rxerun}")
REPEATS=${2:-10}
shift $(( $# > 2 ? 2 : $# ))
KERNELS=("$@")
[ ${#KERNELS[@]} -gt 0 ] || read -r -a KERNELS <<<"$("$RXERUN" vm status | awk '$2 == "ready" {print $1}' | tr '\n' ' ')"
[ ${#KERNELS[@]} -gt 0 ] || { echo "vmboot: no lab kernel is prepared: run \`rxerun vm setup\`"; exit 77; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

stats() {  # numbers on stdin -> "median (min-max)"
  sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
    printf "%.2f (%.2f-%.2f)", m, a[1], a[NR]}'
}

printf "%-7s %-6s %-22s %-22s %-22s %s\n" kernel accel "boot_to_step_s" "guest_uptime_s" "total_s" "boots>1"
for k in "${KERNELS[@]}"; do
  : >"$WORK/boot"; : >"$WORK/up"; : >"$WORK/total"; retries=0; accel=?
  for ((r = 0; r < REPEATS; r++)); do
    t0=$(date +%s.%N)
    "$RXERUN" run -q --vm --kernel "$k" tests/data/vm/idle.yaml --report json:"$WORK/r.json" >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l >>"$WORK/total"
    read -r boot up boots accel < <(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["vm"]; print(v["boot_s"], v["guest_uptime_at_start_s"], v["boots"], v["accel"])' "$WORK/r.json")
    echo "$boot" >>"$WORK/boot"; echo "$up" >>"$WORK/up"
    [ "$boots" -gt 1 ] && retries=$((retries + 1))
  done
  printf "%-7s %-6s %-22s %-22s %-22s %s\n" "$k" "$accel" "$(stats <"$WORK/boot")" "$(stats <"$WORK/up")" "$(stats <"$WORK/total")" "$retries"
done
