# No function of rxerun itself is longer than 120 lines, except the kinds'
# declaration tables (steps/*.cpp's KIND_kind(), which are data): the
# compiler's own view of every function, through clang-tidy's
# readability-function-size, on the whole core compiled as one unit (one
# parse of the shared headers, about a minute).
source "$(dirname "$0")/lib.sh"
TIDY=$(command -v clang-tidy-14 || command -v clang-tidy || true)
[ -n "$TIDY" ] || { echo "clang-tidy is not installed (scripts/setup installs clang-tidy-14)"; exit 77; }
MAX=120
CONFIG="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $MAX}]}"
FILTER="$PWD/(app|base|engine|roce|sys|steps|vm)/"

# A compilation database of the core as one unit, without precompiled
# headers (clang reads no gcc PCH); configured only, nothing is built.
cmake -S . -B "$WORK/db" -DRXERUN_TESTS=OFF -DRXERUN_UNITY_BATCH_SIZE=0 -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$WORK/cmake.log" 2>&1 || { fail "cannot configure"; cat "$WORK/cmake.log"; finish; }
mapfile -t units < <(python3 -c 'import json,sys; [print(c["file"]) for c in json.load(open(sys.argv[1]))]' \
  "$WORK/db/compile_commands.json")
[ ${#units[@]} -ge 3 ] && pass "${#units[@]} translation units" || fail "only ${#units[@]} translation units"

"$TIDY" -p "$WORK/db" --quiet --checks='-*,readability-function-size' --config="$CONFIG" --header-filter="$FILTER" \
  "${units[@]}" >"$WORK/tidy.log" 2>&1
# clang must read every file as gcc does: an error hides functions from the check.
if grep -qE '^/.*: error: ' "$WORK/tidy.log"; then
  fail "clang cannot compile the core as one unit:"
  grep -E '^/.*: error: ' "$WORK/tidy.log" | sed "s|^$PWD/|  |" | sort -u
fi
grep -E '^/.*: warning: function .* exceeds' "$WORK/tidy.log" | sed "s|^$PWD/||" | sort -u >"$WORK/long"
# The kinds' declaration tables are data, as long as their kind has parameters.
grep -vE "^steps/[a-z_]+\.cpp:[0-9]+:[0-9]+: warning: function '[a-z_]+_kind' " "$WORK/long" >"$WORK/too_long" || true
if [ -s "$WORK/too_long" ]; then
  fail "functions longer than $MAX lines:"
  grep -E 'note: [0-9]+ lines including' "$WORK/tidy.log" | sed "s|^$PWD/|  |" | sort -u
else
  pass "no function is longer than $MAX lines (the kinds' declaration tables aside)"
fi

# The check can fail: a function of 130 lines is caught.
{
  echo 'int long_one(int x) {'
  for i in $(seq 130); do echo "  x += $i;"; done
  echo '  return x;'
  echo '}'
} >"$WORK/long.cpp"
# (Into a file, not a pipe: grep -q leaves at its first match, and under
# pipefail clang-tidy's SIGPIPE on its next line would fail the check.)
"$TIDY" --quiet --checks='-*,readability-function-size' --config="$CONFIG" "$WORK/long.cpp" -- >"$WORK/long.log" 2>&1
if grep -q "function 'long_one' exceeds" "$WORK/long.log"; then
  pass "a function of 130 lines is caught"
else
  fail "clang-tidy let a function of 130 lines through"
fi
finish
