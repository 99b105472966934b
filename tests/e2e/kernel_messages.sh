# A failed run whose scenario uses rdma_rxe ends with the kernel's side: its
# release and what the RDMA stack logged during the run (here: nothing, this
# kernel has no RDMA; the lab VM's tests show real lines), also in the JSON
# report as host.kernel_messages. A run without RDMA steps prints no such
# line. Everything happens in a throwaway network namespace (unshare -n).
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN); CI runs it as root"; exit 77; }
if [ -e /sys/module/rdma_rxe ] || modinfo rdma_rxe >/dev/null 2>&1; then
  echo "SKIPPED: this kernel has rdma_rxe, so the rxe step would pass; tests/vm covers the lines"; exit 77
fi

cat >"$WORK/rxe.yaml" <<'YEOF'
name: e2e-kernel-messages
steps:
  - veth: {name: km0, peer: km1}
  - rxe: {name: rxekm0, netdev: km0}
YEOF
cat >"$WORK/net.yaml" <<'YEOF'
name: e2e-kernel-messages-net
steps:
  - veth: {name: km0, peer: km1}
    expect: {mtu: 9000}
YEOF
expect_exit 3 "an rxe step on a kernel without rdma_rxe" -- unshare -n "$RXERUN" run --host "$WORK/rxe.yaml" --report json:"$WORK/r.json"
contains "$out" "kernel $(uname -r): the RDMA stack logged nothing during the run" "the kernel's release and its (empty) log"
km=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["host"].get("kernel_messages"))' "$WORK/r.json")
[ "$km" = "[]" ] && pass "JSON report: host.kernel_messages" || fail "JSON report: host.kernel_messages is $km"
expect_exit 1 "a failed run without RDMA steps" -- unshare -n "$RXERUN" run --host "$WORK/net.yaml"
lacks "$out" "the RDMA stack" "no kernel lines for a network-only scenario"
finish
