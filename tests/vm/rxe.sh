# For each prepared kernel: load rdma_rxe, add an rxe device over a veth
# pair, check that its port is ACTIVE, clean up (device deleted, modules the
# run loaded unloaded). rxe inside a namespace: 7.3 only; 6.1 says so.
# Then the gid and counters kinds on a real device.
source "$(dirname "$0")/lib.sh"
for k in $KERNELS; do
  expect_exit 0 "kernel $k: rxe over a veth, port ACTIVE" -- "$RXERUN" run --vm --kernel "$k" tests/data/vm/rxe.yaml --report json:"$WORK/rxe-$k.json"
  echo "$out" | grep -E '^lab VM:|^cleanup'
  contains "$out" "cleanup:" "kernel $k: cleanup ran"
  lacks "$out" "left behind" "kernel $k: cleanup left nothing"
  [ "$(json_field "$WORK/rxe-$k.json" '[s["facts"].get("state") for s in r["steps"] if s["name"] == "active"][0]')" = "ACTIVE" ] \
    && pass "kernel $k: the report has the port state" || fail "kernel $k: port state missing from the report"
  [ "$(json_field "$WORK/rxe-$k.json" 'any("rdma_rxe" in l for l in r["vm"]["dmesg"])')" = "True" ] \
    && pass "kernel $k: rdma_rxe's kernel messages are in the report" || fail "kernel $k: no rdma_rxe dmesg in the report"
done
case " $KERNELS " in
  *" 7.3 "*) expect_exit 0 "kernel 7.3: rxe inside a namespace" -- "$RXERUN" run --vm --kernel 7.3 tests/data/vm/rxe-netns.yaml ;;
esac
case " $KERNELS " in
  *" 6.1 "*)
    # Refused before anything boots: the lab check knows 6.1 (a matrix that
    # has 6.1 runs it there, and the rxe step refuses: tests/vm/suite.sh).
    expect_exit 2 "kernel 6.1: rxe inside a namespace is refused" -- "$RXERUN" run --vm --kernel 6.1 tests/data/vm/rxe-netns.yaml
    contains "$out$err" "cannot talk on kernel 6.1" "the lab check says why"
    contains "$out$err" "7.3" "the message names a kernel that has it"
    lacks "$out$err" "lab VM:" "no lab VM was booted" ;;
esac
# The GID table of a real device (the IPv4-mapped entry found, not assumed)
# and counters of real devices around a ping (tests/data/vm/gid-counters.yaml).
expect_exit 0 "kernel $NEWEST: GID table and counters" -- "$RXERUN" run --vm --kernel "$NEWEST" tests/data/vm/gid-counters.yaml
no_qemu_left "after the rxe runs"
finish
