# Ctrl-C stops the lab VM (exit 130) and removes its share dir; a SIGKILLed
# rxerun takes qemu along, and the next run removes the share dir it left.
source "$(dirname "$0")/lib.sh"
for how in INT KILL; do
  "$RXERUN" run --vm tests/data/vm/hang.yaml >"$WORK/sig.out" 2>&1 &
  pid=$!
  # The namespace step's line shows that the guest is in the 10-minute sleep.
  for _ in $(seq 1200); do grep -q "netns-1" "$WORK/sig.out" && break; sleep 0.1; done
  [ -n "$(lab_qemus)" ] && pass "SIG$how: a qemu runs" || fail "SIG$how: no qemu was started"
  kill -$how $pid
  wait $pid
  code=$?
  want=130; [ "$how" = KILL ] && want=137
  [ "$code" -eq "$want" ] && pass "SIG$how: exit $code" || { fail "SIG$how: exit $code, wanted $want"; cat "$WORK/sig.out"; }
  no_qemu_left "SIG$how"
  left=$(ls "$TMPDIR")
  if [ "$how" = INT ]; then
    [ -z "$left" ] && pass "SIGINT: share dir removed" || fail "SIGINT: left $left"
  else
    [ -n "$left" ] && pass "SIGKILL: the share dir stays (nothing ran to remove it)" || fail "SIGKILL: no share dir?"
  fi
done
expect_exit 2 "the next --vm run (a usage error, before any boot)" -- "$RXERUN" run --vm --kernel nine tests/data/vm/idle.yaml
expect_exit 1 "the next --vm run" -- "$RXERUN" run --vm tests/data/vm/fail.yaml
left=$(ls "$TMPDIR")
[ -z "$left" ] && pass "the next run removed the SIGKILLed run's share dir" || fail "still there: $left"
finish
