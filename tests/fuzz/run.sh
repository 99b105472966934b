#!/bin/bash
# A short libFuzzer run of one target (CTest tests fuzz.loader, fuzz.decode,
# fuzz.journal).
#
# usage: bash run.sh SOURCE_DIR BUILD_DIR [TARGET]
#   TARGET: loader (default; the scenario loader, seeds tests/fuzz/corpus),
#           decode (the RoCEv2 decoder, seeds tests/fuzz/corpus-decode)
#           or journal (the journal's reader and replay, seeds
#           tests/fuzz/corpus-journal).
#   Configures a separate clang build in BUILD_DIR (-DRXERUN_FUZZ=ON), builds
#   TARGET_fuzz and runs it over a copy of its seed corpus for FUZZ_SECONDS
#   (default 30). Exits non-zero on any crash, leak, timeout or out-of-memory;
#   77 (skip) when clang++-14 or libFuzzer is not installed. Targets share
#   BUILD_DIR: CTest runs them one at a time (RESOURCE_LOCK fuzz_build).

set -u

src=${1:?usage: run.sh SOURCE_DIR BUILD_DIR [TARGET]}
build=${2:?usage: run.sh SOURCE_DIR BUILD_DIR [TARGET]}
target=${3:-loader}
seconds=${FUZZ_SECONDS:-30}
cxx=${FUZZ_CXX:-clang++-14}

case $target in
  loader) seeds=$src/tests/fuzz/corpus extra=(-dict="$src/tests/fuzz/yaml.dict" -max_len=16384) ;;
  decode) seeds=$src/tests/fuzz/corpus-decode extra=(-max_len=2048) ;;
  journal) seeds=$src/tests/fuzz/corpus-journal extra=(-dict="$src/tests/fuzz/journal.dict" -max_len=8192) ;;
  *) echo "FAIL: unknown fuzz target '$target' (loader, decode, journal)"; exit 1 ;;
esac

if ! command -v "$cxx" >/dev/null; then
  echo "skip: $cxx not found (apt-get install clang-14 libclang-rt-14-dev)"
  exit 77
fi

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' >"$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "skip: $cxx cannot link libFuzzer (apt-get install libclang-rt-14-dev):"
  sed 's/^/  /' "$probe/err" | head -5
  exit 77
fi

echo "== configuring $build"
mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRXERUN_FUZZ=ON -DRXERUN_TESTS=OFF >"$build/configure.log" 2>&1 || {
  cat "$build/configure.log"
  echo "FAIL: configuring the fuzz build"
  exit 1
}
echo "== building ${target}_fuzz"
cmake --build "$build" --target "${target}_fuzz" -j2 || {
  echo "FAIL: building ${target}_fuzz"
  exit 1
}

corpus=$probe/corpus
artifacts=$build/fuzz-artifacts-$target
mkdir -p "$corpus" "$artifacts"
cp "$seeds"/* "$corpus"/

echo "== fuzzing $target for ${seconds}s"
# libFuzzer exits 77 on a crash by default, which CTest would read as "skipped".
# TMPDIR: where a target keeps files of its own (journal), removed with $probe.
TMPDIR=$probe "$build/tests/fuzz/${target}_fuzz" "$corpus" "${extra[@]}" \
  -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -error_exitcode=1 -timeout_exitcode=1 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 2>"$build/fuzz-$target.log"
rc=$?
tail -25 "$build/fuzz-$target.log"
if ((rc != 0)); then
  echo "FAIL: ${target}_fuzz exit $rc; reproduce with: $build/tests/fuzz/${target}_fuzz $artifacts/<crash-file>"
  ls -l "$artifacts"
  exit 1
fi
echo "fuzz.$target: 1 passed, 0 failed"
