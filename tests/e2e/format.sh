# Every C++ file of the project is formatted as .clang-format says: the
# formatting is checked, not hoped for. Fix with:
#   git ls-files '*.h' '*.cpp' | xargs clang-format-14 -i
source "$(dirname "$0")/lib.sh"
CF=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$CF" ] || { echo "clang-format is not installed (scripts/setup installs clang-format-14)"; exit 77; }
[ -r .clang-format ] || { fail ".clang-format is missing"; finish; }

mapfile -t files < <(git ls-files '*.h' '*.cpp' '*.h.in')
[ ${#files[@]} -gt 100 ] && pass "${#files[@]} files to check" || fail "only ${#files[@]} C++ files found"
# One clang-format for all of them (one process per file took 40 s): each
# file that differs is named in a "FILE:LINE:COL: error: code should be
# clang-formatted" line, once per place; any other complaint (a file it
# cannot read) fails the check as it is.
# unformatted FILE...: the files that differ, one per line; 1 when
# clang-format failed otherwise.
unformatted() {
  local out status
  out=$("$CF" --style=file --dry-run --Werror "$@" 2>&1)
  status=$?
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$out" | sort -u
  if [ $status != 0 ] && ! grep -q 'error: code should be clang-formatted' <<<"$out"; then
    echo "$out" | head -5 >&2
    return 1
  fi
}
if ! differ=$(unformatted "${files[@]}"); then
  fail "clang-format failed (above)"
elif [ -z "$differ" ]; then
  pass "every file is formatted"
else
  fail "$(wc -l <<<"$differ") file(s) differ from .clang-format:"
  sed 's/^/  /' <<<"$differ"
fi

# The check can fail: a badly indented file among good ones is caught, and
# named alone; a file that is not there is a failure.
printf 'int  f( ){return 1;}\n' >"$WORK/bad.cpp"
printf 'int f() {\n  return 1;\n}\n' >"$WORK/good.cpp"
cp .clang-format "$WORK/"
caught=$(cd "$WORK" && unformatted good.cpp bad.cpp good.cpp)
[ "$caught" = bad.cpp ] && pass "a badly formatted file is caught, and only it" || fail "caught: '$caught'"
(cd "$WORK" && unformatted good.cpp missing.cpp >/dev/null 2>&1) && fail "a missing file passed" \
  || pass "a file clang-format cannot read fails the check"
finish
