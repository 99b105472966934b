# The lab checked as a whole. Every planted mistake in tests/data/lab is
# refused by `validate` (exit 2) at the FILE:LINE:COL its EXPECTED.txt names,
# with the words it names; `plan` refuses it too, and shows the lab check's
# own problems in place, under their step. Then no false alarm: every
# scenario of the repository validates, and so do right but unusual labs
# (a host lab on `lo` and on a namespace made by hand, as root: as another
# user the host cannot run them, so they go to the lab VM, where nothing
# but the lab's own exists).
source "$(dirname "$0")/lib.sh"

lab=tests/data/lab
n=0
while read -r file where words; do
  case $file in '#'* | '') continue ;; esac
  n=$((n + 1))
  expect_exit 2 "validate $file" -- "$RXERUN" validate "$lab/$file"
  first=$(head -1 <<<"$err")
  contains "$first" "$lab/$file:$where: " "validate $file: reported at $where"
  contains "$first" "$words" "validate $file: says '$words'"
  expect_exit 2 "plan $file" -- "$RXERUN" plan "$lab/$file"
  # The loader's own errors (a step read alone) leave no plan to show them
  # in; the lab check's are shown under their step.
  if grep -qF "plan for" <<<"$out"; then
    contains "$out" "       error: $lab/$file:$where: " "plan $file: the error in place"
    contains "$out" "the lab would not run as written" "plan $file: the summary says so"
  else
    contains "$err" "$lab/$file:$where: " "plan $file: the error on stderr"
  fi
done <"$lab/EXPECTED.txt"
listed=$(ls "$lab"/*.yaml | wc -l)
[ "$n" -eq "$listed" ] && pass "EXPECTED.txt lists all $n planted mistakes" ||
  fail "EXPECTED.txt lists $n files, $lab has $listed"

# No false alarm on any scenario of the repository that is meant to be valid.
shopt -s nullglob
for f in scenarios/*.yaml scenarios/topology/*.yaml tests/data/e2e/*.yaml tests/data/vm/*.yaml bench/data/*.yaml; do
  "$RXERUN" validate "$f" >"$WORK/out" 2>"$WORK/err" </dev/null || { fail "validate $f:"; cat "$WORK/err"; }
done
shopt -u nullglob
pass "every scenario of the repository validates"

# `plan` is the same on every call (a background exec's token included).
"$RXERUN" plan scenarios/rc-pingpong.yaml >"$WORK/p1" 2>&1
"$RXERUN" plan scenarios/rc-pingpong.yaml >"$WORK/p2" 2>&1
cmp -s "$WORK/p1" "$WORK/p2" && pass "plan is the same on every call" || fail "plan differs between two calls"
cat >"$WORK/bg.yaml" <<'YEOF'
name: bg
steps:
  - name: server
    exec: {argv: [sleep, "5"], background: true}
  - wait: server
YEOF
expect_exit 0 "plan of a background exec" -- "$RXERUN" plan "$WORK/bg.yaml"
contains "$out" "RXERUN_TOKEN=bg/server/0000000000000001 sleep 5" "the plan's token is numbered, not random"
contains "$(sed -n 2p <<<"$out")" "where: the host" "the plan's second line says where the lab would run"

if [ "$(id -u)" -eq 0 ]; then
  cat >"$WORK/host.yaml" <<'YEOF'
name: host-own
steps:
  - address: {dev: lo, cidr: 127.0.0.77/8}
  - netns: handmade
    link: {dev: vHand, up: true}
YEOF
  expect_exit 0 "a host lab on lo and a namespace made by hand validates" -- "$RXERUN" validate "$WORK/host.yaml"
else
  echo "skip: a host lab on a namespace made by hand is a host lab only as root"
fi
finish
