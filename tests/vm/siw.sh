# siw for real, on the kernels `vm setup` built it for (Debian's kernels have
# none): what does not work on iWARP says so clearly. The lab that works
# (scenarios/siw-pair.yaml) runs with the other labs in tests/vm/labs.sh.
source "$(dirname "$0")/lib.sh"
expect_exit 0 "rxerun vm status" -- "$RXERUN" vm status
with=$(awk '/^siw /{on=1; next} on && $2 == "built" {print $1}' <<<"$out")
case " $with " in
  *" 6.1 "*) ;;
  *) fail "kernel 6.1 has no siw (rxerun vm setup builds it): $out"; finish ;;
esac

expect_exit 3 "verbs on siw is refused" -- "$RXERUN" run --vm tests/data/vm/siw-verbs.yaml
contains "$out" "siw1 is an iWARP device (siw): the verbs check sends with immediate data, which iWARP does not carry" "the message says why"
contains "$out" "siw1 is a siw device: soft-iWARP keeps no counters" "counters says siw has none"
contains "$out" "nothing left" "cleanup left nothing"

expect_exit 3 "perftest on siw without rdma_cm is refused" -- "$RXERUN" run --vm tests/data/vm/siw-perftest.yaml
contains "$out" "siw0 is a siw device: iWARP connects only through rdma_cm; set rdma_cm: true" "the message says what to set"
contains "$out" "nothing left" "cleanup left nothing"
expect_exit 1 "perftest with rdma_cm between two siw devices fails" -- "$RXERUN" run --vm tests/data/vm/siw-perftest-cm.yaml
contains "$out" "siw refuses that beside another siw device" "the hint names the cause"
contains "$out" "nothing left" "cleanup left nothing"
no_qemu_left "after the siw runs"
finish
