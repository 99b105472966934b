# A scenario with nodes, without booting anything: what run refuses before
# any boot (--host, --kernel, --keep: exit 2, nothing started), plan naming
# each step's node, and cleanup finding nothing on the host (a node's lab
# lives and dies in its lab VM). The runs themselves: tests/vm/nodes.sh.
source "$(dirname "$0")/lib.sh"

lab=scenarios/two-node-interop.yaml
# A lab VM's run makes its private directory here first: none may appear.
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
expect_exit 0 "validate a two-node lab" -- "$RXERUN" validate "$lab"
for opt in "--host" "--kernel 7.3" "--keep"; do
  # shellcheck disable=SC2086 # the option and its value are two words
  expect_exit 2 "run $opt refuses a scenario with nodes" -- "$RXERUN" run $opt "$lab"
  contains "$err" "its nodes are lab VMs that name their own kernels" "run $opt says why"
done
[ -z "$(ls "$TMPDIR")" ] && pass "no lab VM was started" || fail "a lab VM's directory appeared: $(ls "$TMPDIR")"
expect_exit 0 "plan a two-node lab" -- "$RXERUN" plan "$lab"
contains "$out" "1. address-1 (address, on node a)" "plan names the node of a step"
contains "$out" "3. address-3 (address, on node b)" "plan names the other node"
expect_exit 0 "cleanup of a two-node lab" -- "$RXERUN" cleanup "$lab"
contains "$out" "nothing to undo" "cleanup finds nothing on the host"
finish
