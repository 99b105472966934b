#!/usr/bin/env bash
# Clean-build time of the three libFuzzer targets (loader_fuzz, decode_fuzz,
# journal_fuzz: what the fuzz.* tests build before they fuzz), at BASE and at
# HEAD, each from a clean checkout in a temporary directory and a fresh
# build directory, REPEATS times alternating; their medians and the ratio.
#
# Usage: bench/fuzz_build.sh [BASE] [REPEATS] [JOBS]   (defaults: HEAD~1, 1, nproc)
# Needs clang++-14 and libFuzzer (scripts/setup installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-HEAD~1}
REPEATS=${2:-1}
JOBS=${3:-$(nproc)}
WORK=$(mktemp -d)
trap 'git worktree remove --force "$WORK/base" >/dev/null 2>&1 || true
      git worktree remove --force "$WORK/head" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
git worktree add -q --detach "$WORK/base" "$BASE"
git worktree add -q --detach "$WORK/head" HEAD
export CCACHE_DISABLE=1

clean_build() {  # SOURCE -> seconds for configure + build of the three targets
  rm -rf "$WORK/build"
  local start end
  start=$(date +%s.%N)
  cmake -S "$1" -B "$WORK/build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRXERUN_FUZZ=ON -DRXERUN_TESTS=OFF >/dev/null
  cmake --build "$WORK/build" -j"$JOBS" --target loader_fuzz decode_fuzz journal_fuzz >"$WORK/log" 2>&1 \
    || { tail -20 "$WORK/log"; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{a[NR] = $1} END {printf "%.0f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

: >"$WORK/base.s"; : >"$WORK/head.s"
for ((r = 0; r < REPEATS; r++)); do
  clean_build "$WORK/base" >>"$WORK/base.s"
  clean_build "$WORK/head" >>"$WORK/head.s"
done
b=$(median <"$WORK/base.s"); h=$(median <"$WORK/head.s")
printf "%-6s %8s %8s %10s\n" jobs base_s head_s head/base
printf "%-6s %8s %8s %10.2f\n" "$JOBS" "$b" "$h" "$(echo "$h / $b" | bc -l)"
