# The route and rule kinds for real (root, no RDMA needed): the forced wire
# of docs/kernel-notes.md in a namespace this script makes. ping -I vA fails while
# traffic loops back, passes once the routes and rules are in; then the
# namespace's rule set, routes and accept_local are exactly as before, also
# after Ctrl-C and after SIGKILL + `rxerun cleanup`. The same for the IPv6
# wire (tests/data/e2e/forced-wire6.yaml). `ip` is the observer.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN); CI runs it as root"; exit 77; }

NS=rxw-forced
SCENARIO=tests/data/e2e/forced-wire.yaml
ip netns del "$NS" 2>/dev/null
ip netns add "$NS" || { echo "FAIL: cannot make namespace $NS"; exit 1; }
trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$WORK"' EXIT
# A rule of the namespace's own that rxerun must leave alone.
ip -n "$NS" rule add pref 500 from 192.0.2.0/24 lookup main

state() {
  ip -n "$NS" -d rule show
  ip -n "$NS" -d -6 rule show
  ip -n "$NS" route show table all
  ip -n "$NS" -6 route show table all
  ip -n "$NS" -o link show | awk -F': ' '{print $2}'
  ip netns exec "$NS" cat /proc/sys/net/ipv4/conf/all/accept_local
}
before=$(state)
contains "$before" "0:	from all lookup local proto kernel" "the namespace starts with the kernel's local rule at pref 0"
[ "$(grep -c "^0:	from all lookup local proto kernel" <<<"$before")" = 2 ] \
  && pass "for IPv4 and for IPv6" || fail "the local rules before: $before"

same_as_before() {
  local now
  now=$(state)
  if [ "$now" = "$before" ]; then pass "$1: rules, routes, links and accept_local as before"; else
    fail "$1: the namespace differs from before"; diff <(echo "$before") <(echo "$now")
  fi
}

expect_exit 0 "the forced wire passes" -- "$RXERUN" run "$SCENARIO" --report json:"$WORK/r.json"
contains "$out" "fail, as expected" "the looped-back ping failed as expected"
expect_exit 0 "ping failed before and passed after, and cleanup was clean" -- /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in r["steps"]}
assert st["looped"]["outcome"] == "fail" and st["looped"]["facts"]["received"] == 0, st["looped"]
assert st["wired"]["outcome"] == "ok" and st["wired"]["facts"]["received"] >= 1, st["wired"]
assert st["no-local-0"]["facts"]["changed"] is True
assert r["cleanup"]["clean"], r["cleanup"]
undos = {u["summary"]: u for u in r["cleanup"]["undos"]}
put_back = undos["put back rule pref 0 lookup local"]
assert not put_back.get("covered_by"), put_back   # really undone, not taken along
' "$WORK/r.json"
same_as_before "after a run"

# Ctrl-C with the rules moved (during the hold): cleanup still restores them.
"$RXERUN" run "$SCENARIO" --var hold=30s >"$WORK/int.out" 2>&1 &
pid=$!
for _ in $(seq 500); do grep -q " wired " "$WORK/int.out" && break; sleep 0.02; done
moved=$(ip -n "$NS" rule show)
contains "$moved" "1000:	from all lookup local" "while the lab is up, the local table is looked up at pref 1000"
[ -z "$(ip -n "$NS" rule show pref 0)" ] && pass "while the lab is up, pref 0 is empty" || fail "pref 0 still there: $moved"
kill -INT $pid
wait $pid
code=$?
[ "$code" -eq 130 ] && pass "Ctrl-C exits 130" || { fail "Ctrl-C: exit $code"; cat "$WORK/int.out"; }
same_as_before "after Ctrl-C"

# SIGKILL: the journal lets `rxerun cleanup` finish the job.
"$RXERUN" run "$SCENARIO" --var hold=30s >"$WORK/kill.out" 2>&1 &
pid=$!
for _ in $(seq 500); do grep -q " wired " "$WORK/kill.out" && break; sleep 0.02; done
kill -KILL $pid
wait $pid 2>/dev/null
if [ "$(state)" != "$before" ]; then pass "SIGKILL left the lab up, as it must"; else
  fail "SIGKILL: nothing was left to clean up (the test did not test)"; cat "$WORK/kill.out"
fi
expect_exit 0 "rxerun cleanup after SIGKILL" -- "$RXERUN" cleanup "$SCENARIO"
same_as_before "after SIGKILL + cleanup"
expect_exit 0 "a second cleanup has nothing to do" -- "$RXERUN" cleanup "$SCENARIO"
contains "$out" "nothing to undo" "the second cleanup says so"

# The IPv6 wire: no reply while looped back, a reply across the veth once
# IPv6's local table is moved behind the rules, and everything put back.
expect_exit 0 "the IPv6 forced wire passes" -- "$RXERUN" run tests/data/e2e/forced-wire6.yaml \
  --report json:"$WORK/r6.json"
expect_exit 0 "IPv6: ping failed before, crossed vB after, cleanup was clean" -- /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in r["steps"]}
assert st["looped"]["outcome"] == "fail" and st["looped"]["facts"]["received"] == 0, st["looped"]
assert st["wired"]["facts"]["received"] >= 1, st["wired"]
assert st["wire"]["facts"]["vB.rx_packets"] >= 2, st["wire"]
assert st["no-local-0"]["facts"]["family"] == "inet6", st["no-local-0"]
assert r["cleanup"]["clean"], r["cleanup"]
' "$WORK/r6.json"
same_as_before "after the IPv6 run"
finish
