#!/usr/bin/env bash
# Clean-build times on the machine at hand, from a clean checkout in a
# temporary directory (never the working tree's build/), REPEATS times each,
# alternating, and their medians:
#
#   rxerun      configure + `cmake --build --target rxerun`: what scripts/setup
#               builds, the wait before the first lab can run
#   everything  configure + `cmake --build` of every target (the test
#               binary too): what scripts/test builds, and what setup built
#               before the tests moved out of it
#
# With BASE (a commit), every target is built at BASE too, alternating with
# HEAD, and the table adds BASE's figure and HEAD's ratio to it.
#
# Usage: bench/build.sh [REPEATS] [JOBS] [BASE]   (defaults: 1, nproc, none)
# ccache is kept out (CCACHE_DISABLE=1) so that every build is a clean one.
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-1}
JOBS=${2:-$(nproc)}
BASE=${3:-}
WORK=$(mktemp -d)
trap 'git worktree remove --force "$WORK/src" >/dev/null 2>&1 || true
      git worktree remove --force "$WORK/base" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
git worktree add -q --detach "$WORK/src" HEAD
[ -z "$BASE" ] || git worktree add -q --detach "$WORK/base" "$BASE"
export CCACHE_DISABLE=1

clean_build() {  # SOURCE TARGET... -> seconds for configure + build in a fresh build directory
  rm -rf "$WORK/build"
  local start end
  start=$(date +%s.%N)
  cmake -S "$1" -B "$WORK/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$WORK/build" -j"$JOBS" "${@:2}" >"$WORK/log" 2>&1 || { tail -20 "$WORK/log"; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{a[NR] = $1} END {printf "%.0f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

: >"$WORK/rxerun"; : >"$WORK/all"; : >"$WORK/base_all"
for ((r = 0; r < REPEATS; r++)); do
  clean_build "$WORK/src" --target rxerun >>"$WORK/rxerun"
  clean_build "$WORK/src" >>"$WORK/all"
  [ -z "$BASE" ] || clean_build "$WORK/base" >>"$WORK/base_all"
done
rx=$(median <"$WORK/rxerun"); all=$(median <"$WORK/all")
if [ -z "$BASE" ]; then
  printf "%-10s %10s %10s %14s\n" jobs rxerun_s everything_s everything/rxerun
  printf "%-10s %10s %10s %14s\n" "$JOBS" "$rx" "$all" "$(echo "scale=1; $all / $rx" | bc)"
else
  base=$(median <"$WORK/base_all")
  printf "%-10s %10s %10s %14s %12s\n" jobs rxerun_s everything_s base_everything everything/base
  printf "%-10s %10s %10s %14s %12.2f\n" "$JOBS" "$rx" "$all" "$base" "$(echo "$all / $base" | bc -l)"
fi
