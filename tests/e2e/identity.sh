# Identity, not names, for real (root, throwaway namespaces): what a --keep
# run made is replaced by a namesake before `rxerun cleanup`, which must leave
# the namesake exactly as its maker left it, say why (exit 4), and still clean
# up everything else; once the namesake is gone, the next cleanup is clean.
# Two labs that set one rp_filter, cleaned up in either order, end with the
# value found before both, or the cleanup that finds the other's value says
# so. `ip` and /proc/sys are the observers.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN); CI runs it as root"; exit 77; }

VETH=tests/data/e2e/identity-veth.yaml
NETNS=tests/data/e2e/identity-netns.yaml
RPF_A=tests/data/e2e/identity-rpf-a.yaml
RPF_B=tests/data/e2e/identity-rpf-b.yaml
drop_all() { for ns in rxi-veth rxi-rpf rxi-lab; do ip netns del "$ns" 2>/dev/null; done; }
drop_all
trap 'drop_all; rm -rf "$WORK"' EXIT

# --- (a) a veth replaced by a namesake --------------------------------------
# Once with an alias of its maker's own, once with a copy of rxerun's mark.
for alias in "somebody's lab" "rxerun:e2e-identity-veth"; do
  ip netns add rxi-veth || { echo "FAIL: cannot make namespace rxi-veth"; exit 1; }
  expect_exit 0 "the veth lab comes up and is kept ($alias)" -- "$RXERUN" run "$VETH" --keep
  ip -n rxi-veth link del vA
  ip -n rxi-veth link add vA mtu 1300 type veth peer name vC
  ip -n rxi-veth addr add 192.0.2.9/24 dev vA
  ip -n rxi-veth link set vA up alias "$alias"
  theirs=$(ip -n rxi-veth -o addr show dev vA; ip -n rxi-veth -d link show dev vA)
  expect_exit 4 "cleanup leaves the namesake and says so ($alias)" -- "$RXERUN" cleanup "$VETH"
  contains "$out$err" "vA is another interface than the one this run changed: the journal recorded index" \
    "the reason names what was recorded"
  contains "$out$err" "left alone, with its addresses and settings" "and that the namesake was left alone"
  now=$(ip -n rxi-veth -o addr show dev vA; ip -n rxi-veth -d link show dev vA)
  if [ "$now" = "$theirs" ]; then pass "the namesake keeps its address, state, MTU and alias"; else
    fail "the namesake changed"; diff <(echo "$theirs") <(echo "$now")
  fi
  ip -n rxi-veth link show vC >/dev/null 2>&1 && pass "its peer is there too" || fail "the namesake's peer vC is gone"
  ip -n rxi-veth link show wA >/dev/null 2>&1 && fail "the run's other pair wA is still there" ||
    pass "the run's other pair is cleaned up"
  expect_exit 4 "a second cleanup leaves it again" -- "$RXERUN" cleanup "$VETH"
  [ "$(ip -n rxi-veth -o addr show dev vA; ip -n rxi-veth -d link show dev vA)" = "$theirs" ] &&
    pass "still untouched" || fail "the second cleanup changed the namesake"
  ip -n rxi-veth link del vA
  expect_exit 0 "once the namesake is gone, cleanup is clean" -- "$RXERUN" cleanup "$VETH"
  expect_exit 0 "and the next has nothing to do" -- "$RXERUN" cleanup "$VETH"
  contains "$out" "nothing to undo" "the last cleanup says so"
  ip netns del rxi-veth
done

# --- (b) two labs, one rp_filter -----------------------------------------------
rpf() { ip netns exec rxi-rpf cat /proc/sys/net/ipv4/conf/vX/rp_filter; }
for order in "a b" "b a"; do
  ip netns add rxi-rpf || { echo "FAIL: cannot make namespace rxi-rpf"; exit 1; }
  ip -n rxi-rpf link add vX type veth peer name vY
  ip netns exec rxi-rpf sh -c 'echo 2 > /proc/sys/net/ipv4/conf/vX/rp_filter'
  expect_exit 0 "lab a sets rp_filter 0" -- "$RXERUN" run "$RPF_A" --keep
  expect_exit 0 "lab b sets rp_filter 1 over it" -- "$RXERUN" run "$RPF_B" --keep
  [ "$(rpf)" = 1 ] && pass "rp_filter is lab b's 1" || fail "rp_filter is $(rpf), not 1"
  if [ "$order" = "a b" ]; then
    expect_exit 4 "cleaning up a first reports the conflict" -- "$RXERUN" cleanup "$RPF_A"
    contains "$out$err" "net.ipv4.conf.vX.rp_filter is 1 now, not the 0 this run wrote (it was 2 before the run)" \
      "the conflict names the key and the three values"
    [ "$(rpf)" = 1 ] && pass "lab b keeps its value" || fail "rp_filter is $(rpf), not lab b's 1"
    expect_exit 0 "cleaning up b puts back what b found" -- "$RXERUN" cleanup "$RPF_B"
    [ "$(rpf)" = 0 ] && pass "rp_filter is lab a's 0 again" || fail "rp_filter is $(rpf), not 0"
    expect_exit 0 "cleaning up a again now succeeds" -- "$RXERUN" cleanup "$RPF_A"
  else
    expect_exit 0 "cleaning up b first" -- "$RXERUN" cleanup "$RPF_B"
    expect_exit 0 "then a" -- "$RXERUN" cleanup "$RPF_A"
  fi
  [ "$(rpf)" = 2 ] && pass "cleaned up $order: the value found before both is back" ||
    fail "cleaned up $order: rp_filter is $(rpf), not 2"
  ip netns del rxi-rpf
done

# --- (c) a namespace made again under its name --------------------------------
for lo_alias in "" "rxerun:e2e-identity-netns"; do
  expect_exit 0 "the namespace lab comes up and is kept" -- "$RXERUN" run "$NETNS" --keep
  ip netns del rxi-lab
  ip netns add rxi-lab
  [ -n "$lo_alias" ] && ip -n rxi-lab link set lo alias "$lo_alias"
  ip -n rxi-lab link add vA type veth peer name vB
  ip -n rxi-lab addr add 192.0.2.9/24 dev vA
  theirs=$(ip -n rxi-lab -o addr show; ip -n rxi-lab -d link show)
  expect_exit 4 "cleanup leaves the new namespace alone (lo alias '$lo_alias')" -- "$RXERUN" cleanup "$NETNS"
  contains "$out$err" "network namespace rxi-lab is another one than the one this run made: the journal recorded inode" \
    "the reason names the inodes"
  ip netns list | grep -qw rxi-lab && pass "the namespace is still there" || fail "the namespace was deleted"
  [ "$(ip -n rxi-lab -o addr show; ip -n rxi-lab -d link show)" = "$theirs" ] &&
    pass "and everything in it as it was" || fail "the new namespace's interfaces changed"
  ip netns del rxi-lab
  expect_exit 0 "once it is gone, cleanup is clean" -- "$RXERUN" cleanup "$NETNS"
done

left=$(ip netns list | grep -E '^rxi-'; ls "$RXERUN_STATE_DIR"/*.journal 2>/dev/null)
[ -z "$left" ] && pass "no namespace and no journal left" || fail "left behind: $left"
finish
