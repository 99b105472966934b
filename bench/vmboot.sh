#!/usr/bin/env bash
# Start-to-first-step time of the lab VM, both ways it starts: for each
# prepared kernel, REPEATS runs of a one-step scenario with `rxerun run --vm`
# from the kernel's snapshot and as many with --cold-boot, alternating (a
# first run makes the snapshot when there is none, and is not counted).
# Prints, per kernel and start, the median and the range of: the time from
# qemu's start to the guest's start of the run (the report's vm.boot_s);
# from the command's start to the line of its first step (what a user
# waits for: the host's and the guest's rxerun included); of the whole
# command. Then the ratios of the medians (boot / snapshot).
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

median() { sort -n | awk '{a[NR] = $1} END {printf "%.3f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# one KERNEL START: a run (START: snapshot or boot), its figures appended.
one() {
  local first total boot start boots accel
  read -r first total < <(python3 bench/first_step.py "$RXERUN" run --color never --vm --kernel "$1" \
    $([ "$2" = boot ] && echo --cold-boot) tests/data/vm/idle.yaml --report json:"$WORK/r.json")
  read -r boot start boots accel < <(python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))["vm"]; print(v["boot_s"], v["start"], v["boots"], v["accel"])' "$WORK/r.json")
  [ "$start" = "$2" ] || { echo "vmboot: wanted a start from $2, the run says $start" >&2; exit 1; }
  echo "$total" >>"$WORK/$2.total"
  echo "$first" >>"$WORK/$2.first"
  echo "$boot" >>"$WORK/$2.boot"
  echo "$accel" >"$WORK/accel"
  [ "$boots" -gt 1 ] && echo >>"$WORK/$2.retries"
  return 0
}

printf "%-7s %-6s %-9s %-20s %-20s %-20s %s\n" kernel accel start "boot_s" "first_step_s" "total_s" "boots>1"
for k in "${KERNELS[@]}"; do
  rm -f "$WORK"/*.boot "$WORK"/*.first "$WORK"/*.total "$WORK"/*.retries
  "$RXERUN" run -q --vm --kernel "$k" tests/data/vm/idle.yaml >/dev/null  # makes the snapshot if there is none
  for ((r = 0; r < REPEATS; r++)); do
    one "$k" snapshot
    one "$k" boot
  done
  for start in snapshot boot; do
    printf "%-7s %-6s %-9s %-20s %-20s %-20s %s\n" "$k" "$(cat "$WORK/accel")" "$start" "$(stats <"$WORK/$start.boot")" \
      "$(stats <"$WORK/$start.first")" "$(stats <"$WORK/$start.total")" \
      "$(cat "$WORK/$start.retries" 2>/dev/null | wc -l)"
  done
  ratio() { echo "$(median <"$WORK/boot.$1") / $(median <"$WORK/snapshot.$1")" | bc -l; }
  printf "%-7s boot/snapshot: boot_s %.1fx, first_step_s %.1fx\n" "$k" "$(ratio boot)" "$(ratio first)"
done
