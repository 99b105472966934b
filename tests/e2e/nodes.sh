# A scenario with nodes, without booting anything: what run refuses before
# any boot (--host, --kernel, --keep: exit 2, nothing started), plan naming
# each step's node, and cleanup finding nothing on the host (a node's lab
# lives and dies in its lab VM); the two programs a pair step across nodes
# runs on the other node, on this host: the verbs server (no RDMA here: its
# result says why it cannot listen) and the counter reader. The runs
# themselves: tests/vm/nodes.sh.
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

request='{"mode":"cm","server":{"addr":"10.70.0.1","to":""},"client":{"addr":"","to":""},"port":18515,"dev":"","addr":"","ops":["send","write","read"],"sizes":[4096],"iterations":0,"budget_ms":2000}'
expect_exit 0 "__verbs-server ends with its result" -- sh -c 'printf "%s" "$1" | "$2" __verbs-server' - "$request" "$RXERUN"
[ "$(wc -l <<<"$out")" -eq 1 ] && pass "... one line: no 'listening' without a listener" || fail "... got: $out"
contains "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["error"])' "$out")" \
  "cannot open the rdma_cm event channel" "... which says why it could not listen"
expect_exit 2 "__verbs-server refuses what is not JSON" -- sh -c 'echo nonsense | "$1" __verbs-server' - "$RXERUN"
contains "$err" "stdin is not JSON" "... and says so"
expect_exit 2 "__verbs-server refuses a request without its port" -- \
  sh -c 'printf "%s" "$1" | "$2" __verbs-server' - "${request/\"port\":18515,/}" "$RXERUN"
contains "$err" "not a verbs request" "... and says so"
expect_exit 0 "__counters prints this kernel's counters" -- "$RXERUN" __counters
contains "$(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(all(isinstance(v, int) for v in j.values()), "lo.rx_packets" in j)' "$out")" \
  "True True" "... one JSON object of counts, lo's among them"
expect_exit 1 "__counters of a namespace that does not exist" -- "$RXERUN" __counters --netns rxerun-no-such-ns
contains "$err" "network namespace 'rxerun-no-such-ns' does not exist" "... says which"
finish
