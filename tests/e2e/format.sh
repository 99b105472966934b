# Every C++ file of the project is formatted as .clang-format says: the
# formatting is checked, not hoped for. Fix with:
#   git ls-files '*.h' '*.cpp' | xargs clang-format-14 -i
source "$(dirname "$0")/lib.sh"
CF=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$CF" ] || { echo "clang-format is not installed (scripts/setup installs clang-format-14)"; exit 77; }
[ -r .clang-format ] || { fail ".clang-format is missing"; finish; }

mapfile -t files < <(git ls-files '*.h' '*.cpp' '*.h.in')
[ ${#files[@]} -gt 100 ] && pass "${#files[@]} files to check" || fail "only ${#files[@]} C++ files found"
unformatted=()
for f in "${files[@]}"; do
  "$CF" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [ ${#unformatted[@]} -eq 0 ]; then pass "every file is formatted"; else
  fail "${#unformatted[@]} file(s) differ from .clang-format:"
  printf '  %s\n' "${unformatted[@]}"
fi

# The check can fail: a badly indented file is caught.
printf 'int  f( ){return 1;}\n' >"$WORK/bad.cpp"
cp .clang-format "$WORK/"
if (cd "$WORK" && "$CF" --style=file --dry-run --Werror bad.cpp >/dev/null 2>&1); then
  fail "clang-format accepted a badly formatted file"
else
  pass "a badly formatted file is caught"
fi
finish
