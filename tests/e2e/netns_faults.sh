# The shipped network lab, for real (root): two namespaces, a veth, ping, an
# nftables block that must make ping fail with the rule's counter as proof,
# its revert; then nothing of rxerun's may be left on the host.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN); CI runs it as root"; exit 77; }

residue() {
  { ip netns list | grep -E '^rxf-' ; ip -o link show | grep -F 'rxerun:netns-faults' ; nft list tables | grep -F rxerun-netns-faults ; } 2>/dev/null
}
[ -z "$(residue)" ] || { fail "leftovers before the run: $(residue)"; finish; }

expect_exit 0 "netns-faults passes" -- "$RXERUN" run scenarios/netns-faults.yaml --report json:"$WORK/r.json"
contains "$out" "fail, as expected" "the blocked ping failed as expected"
lacks "$out" "hint:" "the likely causes of a failure the scenario expected are not shown"
expect_exit 0 "the revert proved the block was hit" -- /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in r["steps"]}
assert st["blocked"]["outcome"] == "fail", st["blocked"]
assert st["lift"]["facts"]["packets"] >= 3, st["lift"]["facts"]
assert st["reachable-again"]["facts"]["received"] == 3
assert r["cleanup"]["clean"]
' "$WORK/r.json"
left=$(residue)
[ -z "$left" ] && pass "nothing left behind" || fail "left behind: $left"

# Ctrl-C in the middle (during the blocked ping): cleanup still leaves nothing.
"$RXERUN" run scenarios/netns-faults.yaml >"$WORK/int.out" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -q "no-icmp" "$WORK/int.out" && break; sleep 0.02; done
kill -INT $pid
wait $pid
code=$?
[ "$code" -eq 130 ] && pass "Ctrl-C exits 130" || { fail "Ctrl-C: exit $code"; cat "$WORK/int.out"; }
left=$(residue)
[ -z "$left" ] && pass "nothing left behind after Ctrl-C" || fail "left behind after Ctrl-C: $left"

# SIGKILL in the middle: the journal lets `rxerun cleanup` finish the job.
"$RXERUN" run scenarios/netns-faults.yaml >"$WORK/kill.out" 2>&1 &
pid=$!
for _ in $(seq 200); do grep -q "no-icmp" "$WORK/kill.out" && break; sleep 0.02; done
kill -KILL $pid
wait $pid 2>/dev/null
[ -n "$(residue)" ] && pass "SIGKILL left the lab up, as it must" || fail "SIGKILL: nothing was left to clean up (the test did not test)"
expect_exit 0 "rxerun cleanup after SIGKILL" -- "$RXERUN" cleanup scenarios/netns-faults.yaml
left=$(residue)
[ -z "$left" ] && pass "nothing left behind after SIGKILL + cleanup" || fail "left behind after SIGKILL + cleanup: $left"
expect_exit 0 "a second cleanup has nothing to do" -- "$RXERUN" cleanup scenarios/netns-faults.yaml
contains "$out" "nothing to undo" "the second cleanup says so"
finish
