# The verbs kind for real, in two lab VM boots:
# - kernel 7.3, two namespaces (tests/data/vm/verbs-netns.yaml): rdma_cm
#   between them with every byte verified and traffic on both rxe devices and
#   both veth ends; a connect where nothing listens and one to an address
#   nobody has fail (not error) with the CM event; a dropped UDP 4791 ends in
#   `timeout` at the step's 6s; two addresses in one namespace land on one
#   device (warned); self mode inside a namespace.
# - kernel 6.1, the shipped scenarios/loopback-write.yaml: self mode's RDMA
#   WRITE between two queue pairs of rxe0, nothing on the veth.
# After each, cleanup deletes the rxe devices and unloads rdma_rxe: a verbs
# resource left held would make the delete block and the run never end.
source "$(dirname "$0")/lib.sh"

case " $KERNELS " in
  *" 7.3 "*)
    r="$WORK/verbs-73.json"
    expect_exit 0 "kernel 7.3: verbs across two namespaces" -- "$RXERUN" run --vm --kernel 7.3 tests/data/vm/verbs-netns.yaml --report json:"$r"
    echo "$out" | grep -E '^lab VM:|verbs|^cleanup|^PASS|^FAIL'
    same "$(step_fact "$r" across ops_done)" "send,write,read" "every op verified"
    same "$(step_fact "$r" across bytes_verified)" "209088" "every byte of 3 ops x 3 sizes verified"
    same "$(step_fact "$r" across server_device)/$(step_fact "$r" across client_device)" "rxe0/rxe1" "each end on its own device"
    [ "$(step_fact "$r" across rxe0.sent_pkts)" -gt 0 ] && [ "$(step_fact "$r" across rxe1.sent_pkts)" -gt 0 ] \
      && pass "both rxe devices' counters moved" || fail "rxe counters did not move on both devices"
    same "$(step_field "$r" refused outcome)" "fail" "a connect where nothing listens fails"
    contains "$(step_field "$r" refused message)" "RDMA_CM_EVENT_REJECTED" "the failure names the CM event"
    same "$(step_fact "$r" nobody-there cause)" "RDMA_CM_EVENT_ADDR_ERROR" "an address nobody has: ADDR_ERROR"
    same "$(step_field "$r" dropped outcome)" "timeout" "a dropped UDP 4791 is a timeout"
    same "$(step_fact "$r" one-namespace client_device)" "rxe1" "one namespace: both ends on rxe1"
    contains "$out" "both ends ran on rxe1" "the loopback is warned about"
    same "$(json_field "$r" 'r["cleanup"]["clean"]')" "True" "cleanup left nothing"
    lacks "$out" "left behind" "no rxe device or module left"
    ;;
  *) echo "note: kernel 7.3 is not prepared: the two-namespace checks are left out" ;;
esac

case " $KERNELS " in
  *" 6.1 "*)
    r="$WORK/verbs-61.json"
    expect_exit 0 "kernel 6.1: scenarios/loopback-write.yaml" -- "$RXERUN" run --vm --kernel 6.1 scenarios/loopback-write.yaml --report json:"$r"
    echo "$out" | grep -E '^lab VM:|verbs|^cleanup|^PASS|^FAIL'
    same "$(step_fact "$r" loopback-write ops_done)" "write" "self mode: RDMA WRITE verified"
    same "$(step_fact "$r" loopback-write gid_index)" "$(step_fact "$r" gid index)" "the GID index is the gid step's"
    same "$(step_fact "$r" loopback-write vA.tx_packets)" "0" "nothing crossed the veth"
    same "$(json_field "$r" 'r["cleanup"]["clean"]')" "True" "cleanup left nothing"
    ;;
  *) echo "note: kernel 6.1 is not prepared: loopback-write is left out" ;;
esac
no_qemu_left "after the verbs runs"
finish
