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
  contains "$out" "       error: $lab/$file:$where: " "plan $file: the error in place"
  contains "$out" "the lab would not run as written" "plan $file: the summary says so"
done <"$lab/EXPECTED.txt"
listed=$(ls "$lab"/*.yaml | wc -l)
[ "$n" -eq "$listed" ] && pass "EXPECTED.txt lists all $n planted mistakes" ||
  fail "EXPECTED.txt lists $n files, $lab has $listed"

# The loader's errors in place too, in what it could read: each under the
# step it is in (an included file's under its step), a top-level one above
# the steps; the steps that hold one are not previewed, the others are.
cat >"$WORK/topo.yaml" <<'YEOF'
steps:
  - veth: {name: vA, peer: vB}
  - link: {dev: vA, upp: true}
YEOF
cat >"$WORK/broken.yaml" <<'YEOF'
name: broken
include: topo.yaml
nmae: x
steps:
  - sleeep: {duration: 1s}
  - sleep: {duration: 1s}
  - sleep: {duration: 1q}
YEOF
expect_exit 2 "plan of a file the loader refuses" -- "$RXERUN" plan "$WORK/broken.yaml"
[ -z "$err" ] && pass "its errors go to the plan, not to stderr" || fail "stderr: $err"
plan_lines=$(grep -vE '^ +(ip|sleep) ' <<<"$out" | sed "s|$WORK/||g")
expected=$(cat <<'PEOF'
plan for broken (broken.yaml), 5 steps; nothing is changed
where: the host: it has what every step needs
       error: broken.yaml:3:1: unknown key 'nmae' at the top level (did you mean 'name'?)
  1. veth-1 (veth)
  2. link-2 (link)
       # not previewed: written wrong (below)
       error: topo.yaml:3:21: unknown parameter 'upp' for 'link' (did you mean 'up'?) (included from broken.yaml:2:10)
  3. step-3 (no kind)
       # not previewed: written wrong (below)
PEOF
)
# (grep -F takes each line of a pattern alone: the lines in order are
# matched as one string.)
holds_lines() { if [[ $1 == *"$2"* ]]; then pass "$3"; else fail "$3: no '$2' in:"; echo "$1"; fi; }
holds_lines "$plan_lines" "$expected" "the top-level error first, the included step's under it, kind-less step named"
holds_lines "$plan_lines" "$(printf '  4. sleep-4 (sleep)\n  5. sleep-5 (sleep)\n       # not previewed: written wrong (below)\n       error: broken.yaml:7:23: ')" \
  "a right step between wrong ones is previewed"
contains "$out" "       sleep 1 " "  ... with its action"
contains "$out" "4 errors: the lab would not run as written" "the summary counts the loader's errors"
printf 'name: b\nsteps: [\n' >"$WORK/syntax.yaml"
expect_exit 2 "plan of a file that is not YAML" -- "$RXERUN" plan "$WORK/syntax.yaml"
[ -z "$out" ] && contains "$err" "syntax.yaml:3:1: YAML syntax error" "leaves no plan: the error on stderr" ||
  fail "a plan of a file that is not YAML: $out"

# validate and plan take run's --kernel (and --vm, --host): the lab is
# checked for the kernel run would use.
grep -v '^vm:' "$lab/lab_rxe_netns_61.yaml" >"$WORK/rxe-netns.yaml"
expect_exit 2 "validate --kernel 6.1: rxe in a namespace" -- "$RXERUN" validate --kernel 6.1 "$WORK/rxe-netns.yaml"
contains "$err" "rxe-netns.yaml:7:12: " "  ... refused at its netns"
contains "$err" "kernel 6.1" "  ... for kernel 6.1"
expect_exit 0 "validate --kernel 7.3: the same lab" -- "$RXERUN" validate --kernel 7.3 "$WORK/rxe-netns.yaml"
expect_exit 0 "validate --kernel 6.1,7.3: a matrix compares kernels" -- "$RXERUN" validate --kernel 6.1,7.3 "$WORK/rxe-netns.yaml"
expect_exit 2 "plan --kernel 6.1" -- "$RXERUN" plan --kernel 6.1 "$WORK/rxe-netns.yaml"
contains "$out" "       error: $WORK/rxe-netns.yaml:7:12: " "  ... shows the error in place"
expect_exit 2 "validate --vm --host" -- "$RXERUN" validate --vm --host "$WORK/rxe-netns.yaml"

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
