# The crash sweep: the shipped host scenario is killed (SIGKILL, injected by
# strace from outside rxerun) at every journal write a full run makes, one
# run per point; after each, `rxerun cleanup` must leave the machine exactly
# as it was, and the next plain run must pass.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN); CI runs it as root"; exit 77; }
command -v strace >/dev/null || { echo "SKIPPED: strace is not installed (scripts/setup installs it)"; exit 77; }

S=scenarios/netns-faults.yaml
J="$RXERUN_STATE_DIR/netns-faults.journal"
before=$(host_snapshot netns-faults rxf-)

# How many journal writes a full run makes (changes, identities, undos).
strace -f -qq -o "$WORK/count" -P "$J" -e trace=write "$RXERUN" run "$S" >"$WORK/plain.out" 2>&1
code=$?
[ "$code" -eq 0 ] || { fail "the plain run before the sweep: exit $code"; cat "$WORK/plain.out"; finish; }
points=$(grep -c ' write(' "$WORK/count")
[ "$points" -ge 10 ] && pass "a full run makes $points journal writes" || fail "only $points journal writes counted"

residue=0
for k in $(seq 1 "$points"); do
  strace -f -qq -o /dev/null -P "$J" -e trace=write -e inject=write:signal=SIGKILL:when="$k" \
    "$RXERUN" run "$S" >"$WORK/killed.out" 2>&1
  code=$?
  [ "$code" -eq 137 ] || fail "kill point $k: exit $code, the run was not killed there"
  "$RXERUN" cleanup "$S" >"$WORK/cleanup.out" 2>&1
  code=$?
  [ "$code" -eq 0 ] || { fail "kill point $k: rxerun cleanup exit $code"; cat "$WORK/cleanup.out"; }
  now=$(host_snapshot netns-faults rxf-)
  if [ "$now" != "$before" ]; then
    residue=$((residue + 1))
    fail "kill point $k: left behind:"
    diff <(echo "$before") <(echo "$now")
  fi
  [ -e "$J" ] && fail "kill point $k: the journal is still there after cleanup"
  "$RXERUN" run "$S" >"$WORK/next.out" 2>&1
  code=$?
  [ "$code" -eq 0 ] || { fail "kill point $k: the next plain run: exit $code"; cat "$WORK/next.out"; }
done
echo "killed at $points points, residue $residue"
[ "$residue" -eq 0 ] && pass "killed at $points points, residue $residue"
finish
