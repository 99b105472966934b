# What the guest halves of the storage tests (nvme-guest.sh, srp-guest.sh,
# nfs-guest.sh) share, sourced by them in the lab VM. Each defines
# residue LABEL (nothing of its protocol is left) before it calls these.
# $RXERUN is the rxerun binary.

fail() { echo "FAIL: $*"; }
pass() { echo "ok: $*"; }

# Runs the lab FILE on this machine (--host) with ARGS, prints its outcome
# lines (without the network setup's), and passes with SAYING when it
# exits 0; else fails and prints the whole output. $out and $code hold
# what it printed and its exit code.
run_lab() {  # FILE SAYING [ARGS...]
  local file=$1 saying=$2
  shift 2
  out=$("$RXERUN" run --host "$file" "$@" 2>&1)
  code=$?
  echo "$out" | grep -E '^  (ok|FAIL|ERROR|TIMEOUT)|^cleanup|^PASS|^FAIL' | grep -vE ' (veth|address|link|sysctl|route|rule)-'
  [ "$code" = 0 ] && pass "$saying" || { fail "$file: exit $code"; echo "$out"; }
}

# SIGKILL in the middle of the lab FILE, then `rxerun cleanup`: the lab
# runs until its output shows WAITFOR (a step's line, which shows when the
# step ends: the one before the hold), `lab_up` checks that what the lab
# made is there, SIGKILL, `left_behind` checks that it still is, then
# cleanup exits 0, `residue` finds nothing, and a second cleanup has
# nothing to do. The caller defines lab_up and left_behind.
kill_then_cleanup() {  # FILE WAITFOR
  local pid
  "$RXERUN" run --host "$1" >/tmp/hang.out 2>&1 &
  pid=$!
  for _ in $(seq 600); do grep -q "$2" /tmp/hang.out && break; sleep 0.1; done
  lab_up || cat /tmp/hang.out
  kill -KILL $pid
  wait $pid 2>/dev/null
  left_behind
  out=$("$RXERUN" cleanup "$1" 2>&1)
  code=$?
  echo "$out" | tail -3
  [ "$code" = 0 ] && pass "rxerun cleanup: exit 0" || { fail "rxerun cleanup: exit $code"; echo "$out"; }
  residue "after SIGKILL and rxerun cleanup"
  out=$("$RXERUN" cleanup "$1" 2>&1)
  echo "$out" | grep -q 'nothing to undo\|0 undone\|nothing left' && pass "a second cleanup has nothing to do" \
    || { fail "a second cleanup:"; echo "$out"; }
}
