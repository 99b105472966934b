# A step's warning shows under it when the step passes, and -q keeps it quiet
# (root: the block step's rule lives in a namespace of the scenario's own).
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN); CI runs it as root"; exit 77; }

expect_exit 0 "a block of UDP 4791 on the output hook passes" -- "$RXERUN" run tests/data/e2e/warning.yaml
contains "$out" "  ok    no-roce-out" "the step passed"
below=$(grep -A1 -F "  ok    no-roce-out" <<<"$out" | tail -n 1)
contains "$below" "        hint: dropping UDP 4791 on the output hook wedges rxe" "its warning is on the line under it"
expect_exit 0 "-q passes too" -- "$RXERUN" run tests/data/e2e/warning.yaml -q
lacks "$out" "hint:" "-q shows no warning of a step that passed"
[ -z "$(ip netns list | grep -E '^rxw-e2e')" ] && pass "nothing left behind" || fail "namespace rxw-e2e left behind"
finish
