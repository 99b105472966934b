# A signal can interrupt any netlink call (EINTR). Injected by strace into
# one call at a time of rxerun's own process — sendmsg, recvmsg, sendto and
# recvfrom, at points spread over a whole run of the shipped host scenario —
# it must change nothing: the run passes and leaves the machine as it was.
# libnftables runs in worker processes with signals blocked (a real signal
# cannot interrupt it); an EINTR forced into every worker must still end in a
# clear step error and a clean host, never in rxerun's death.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN); CI runs it as root"; exit 77; }
command -v strace >/dev/null || { echo "SKIPPED: strace is not installed (scripts/setup installs it)"; exit 77; }

S=scenarios/netns-faults.yaml
before=$(host_snapshot netns-faults rxf-)
points=0
bad=0
for call in sendmsg recvmsg sendto recvfrom; do
  strace -qq -o "$WORK/count" -e trace="$call" "$RXERUN" run "$S" >/dev/null 2>&1 || fail "$call: the plain run failed"
  n=$(grep -c "^$call(" "$WORK/count")
  step=$(( n / 8 + 1 ))  # about eight points per call, first and last included
  for k in $(seq 1 "$step" "$n") "$n"; do
    points=$((points + 1))
    timeout 120 strace -qq -o /dev/null -e trace="$call" -e inject="$call":error=EINTR:when="$k" \
      "$RXERUN" run "$S" >"$WORK/run.out" 2>&1
    code=$?
    if [ "$code" -ne 0 ]; then
      bad=$((bad + 1)); fail "EINTR at $call #$k of $n: exit $code"; grep -v '^  ok' "$WORK/run.out"
      "$RXERUN" cleanup "$S" >/dev/null 2>&1
    fi
    now=$(host_snapshot netns-faults rxf-)
    [ "$now" = "$before" ] || { bad=$((bad + 1)); fail "EINTR at $call #$k: left behind"; diff <(echo "$before") <(echo "$now"); }
  done
done
echo "EINTR injected at $points netlink calls, $bad runs did not pass"
[ "$bad" -eq 0 ] && pass "EINTR at $points points: every run passed and left nothing"

# Every process, nft workers included: each worker's first send is
# interrupted, every time it is tried.
timeout 120 strace -f -qq -o /dev/null -e trace=sendmsg -e inject=sendmsg:error=EINTR:when=1 \
  "$RXERUN" run "$S" >"$WORK/workers.out" 2>&1
code=$?
[ "$code" -eq 3 ] && pass "EINTR in every nft worker: the block step errs (exit 3)" ||
  { fail "EINTR in every nft worker: exit $code, wanted 3"; cat "$WORK/workers.out"; }
contains "$(cat "$WORK/workers.out")" "ERROR no-icmp" "the step that met it is named"
now=$(host_snapshot netns-faults rxf-)
[ "$now" = "$before" ] && pass "EINTR in every nft worker: nothing left behind" ||
  { fail "EINTR in every nft worker: left behind"; diff <(echo "$before") <(echo "$now"); }
finish
