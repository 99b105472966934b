#!/bin/bash
# `rxerun validate` on broken scenarios: exit 2, a FILE:LINE:COL: diagnostic at
# the place tests/data/bad/EXPECTED.txt names, and never a crash. Then files that
# are not scenarios at all (a directory without any, random bytes, 10 MB, an empty file, a
# missing path), and the shipped scenarios, which must validate.
#
# usage: bash validate_bad.sh RXERUN_BINARY SOURCE_DIR

set -u

rxerun=${1:?usage: validate_bad.sh RXERUN_BINARY SOURCE_DIR}
src=${2:?usage: validate_bad.sh RXERUN_BINARY SOURCE_DIR}
bad_dir=$src/tests/data/bad
expected=$bad_dir/EXPECTED.txt

passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

# validate PATH: runs `rxerun validate PATH`, leaving its exit code in $code and
# its stderr in $tmp/err.
validate() {
  "$rxerun" validate "$1" >"$tmp/out" 2>"$tmp/err" </dev/null
  code=$?
}

show_output() {
  sed 's/^/    | /' "$tmp/err" | head -5
}

# expect_invalid PATH DESCRIPTION [L:C|OTHER:L:C]: exit 2 and a PATH:LINE:COL:
# line on stderr, at L:C when given; OTHER:L:C (OTHER beside PATH): the line
# is about OTHER, a file PATH includes.
expect_invalid() {
  local path=$1 what=$2 where=${3:-}
  if [[ $where == *:*:* ]]; then
    path_shown=$(dirname "$path")/${where%:*:*}
    where=${where#"${where%:*:*}:"}
  else
    path_shown=$path
  fi
  validate "$path"
  if ((code >= 128)); then
    fail "$what: rxerun crashed (exit $code)"
    show_output
    return
  fi
  if ((code != 2)); then
    fail "$what: exit $code, expected 2"
    show_output
    return
  fi
  local found=0 line
  while IFS= read -r line; do
    if [[ -n $where ]]; then
      [[ $line == "$path_shown:$where: "* ]] && found=1
    else
      [[ $line == "$path_shown:"[0-9]*:[0-9]*": "* ]] && found=1
    fi
  done <"$tmp/err"
  if ((found == 0)); then
    fail "$what: no '$path_shown:${where:-LINE:COL}: ' diagnostic on stderr"
    show_output
    return
  fi
  passed=$((passed + 1))
}

# --- the broken scenarios, each at its expected place
if [[ ! -f $expected ]]; then
  fail "missing $expected"
else
  declare -A listed=()
  while read -r name where; do
    [[ -z $name || $name == \#* ]] && continue
    listed[$name]=1
    if [[ ! -f $bad_dir/$name ]]; then
      fail "$name is listed in EXPECTED.txt but does not exist"
      continue
    fi
    expect_invalid "$bad_dir/$name" "$name" "$where"
  done <"$expected"
  for path in "$bad_dir"/*; do
    name=${path##*/}
    [[ $name == EXPECTED.txt || -d $path ]] && continue  # a directory holds files the listed ones include
    [[ -n ${listed[$name]:-} ]] || fail "$name is not listed in EXPECTED.txt"
  done
fi

# --- files that are not scenarios
# A directory stands for its *.yaml (as for run): one without any is refused.
mkdir "$tmp/a-directory.yaml"
validate "$tmp/a-directory.yaml"
if [[ $code == 2 ]] && grep -qxF "rxerun: $tmp/a-directory.yaml: a directory without scenarios (*.yaml)" "$tmp/err"; then
  passed=$((passed + 1))
else
  fail "a directory without scenarios: exit $code"
  show_output
fi

{ printf 'steps:\0'; head -c 4096 /dev/urandom; } >"$tmp/random.yaml"
expect_invalid "$tmp/random.yaml" "random bytes with a NUL"

head -c 10485760 /dev/zero | tr '\0' '#' >"$tmp/ten-megabytes.yaml"
expect_invalid "$tmp/ten-megabytes.yaml" "a 10 MB file" "1:1"

: >"$tmp/empty.yaml"
expect_invalid "$tmp/empty.yaml" "an empty file" "1:1"

expect_invalid "$tmp/does-not-exist.yaml" "a path that does not exist" "1:1"

# --- the shipped scenarios validate
shopt -s nullglob
shipped=("$src"/scenarios/*.yaml)
shopt -u nullglob
if ((${#shipped[@]} == 0)); then
  echo "note: no scenarios/*.yaml to validate"
else
  "$rxerun" validate "${shipped[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null
  code=$?
  if ((code != 0)); then
    fail "rxerun validate scenarios/*.yaml: exit $code, expected 0"
    show_output
  else
    passed=$((passed + 1))
  fi
fi

echo "validate_bad: $passed passed, $failed failed"
((failed == 0))
