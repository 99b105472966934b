# The rping kind for real (rdmacm-utils' rping), in two lab VM boots:
# - kernel 7.3, two namespaces (tests/data/vm/rping-netns.yaml): rping
#   between them passes with its round trips counted and traffic on both rxe
#   devices and both veth ends; the reverse direction; a server address
#   nobody has fails (fail, not error) with rping's own words; UDP 4791
#   dropped on the server's input hook ends in `timeout` at the step's 8s
#   with the rule's counter > 0; then rping passes again.
# - kernel 6.1, one namespace (tests/data/vm/rping-single.yaml): rping passes
#   but loops back inside rxe0; rxe1 counts nothing.
# Every path stops both tools before the step returns: the pids the steps
# report are checked gone by tests/sys/test_tools_real.cpp (fake programs on
# the host); here cleanup deleting the rxe devices without blocking shows
# that no rping held them.
source "$(dirname "$0")/lib.sh"

case " $KERNELS " in
  *" 7.3 "*)
    r="$WORK/rping-73.json"
    expect_exit 0 "kernel 7.3: rping across two namespaces" -- "$RXERUN" run --vm --kernel 7.3 tests/data/vm/rping-netns.yaml --report json:"$r"
    echo "$out" | grep -E '^lab VM:|rping|block|revert|^cleanup|^PASS|^FAIL'
    same "$(step_fact "$r" across iterations)" "10" "10 round trips counted"
    same "$(step_fact "$r" across server_exit)" "exit 0" "the server ended by itself after its client"
    same "$(step_fact "$r" across attempts)" "1" "the client started once rdma_cm listed the server listening"
    [ "$(step_fact "$r" across server_ready_s)" != "None" ] && pass "server_ready_s reported" || fail "no server_ready_s"
    [ "$(step_fact "$r" across rxe0.rcvd_pkts)" -gt 0 ] && [ "$(step_fact "$r" across rxe1.sent_pkts)" -gt 0 ] \
      && [ "$(step_fact "$r" across vB.tx_packets)" -gt 0 ] \
      && pass "both rxe devices and the veth carried it" || fail "the counters did not move on both devices and the veth"
    same "$(step_field "$r" wrong-address outcome)" "fail" "a server address nobody has: fail"
    contains "$(step_field "$r" wrong-address message)" "rdma_bind_addr" "the failure quotes rping's own words"
    same "$(step_field "$r" dropped outcome)" "timeout" "UDP 4791 dropped on the input hook: timeout"
    same "$(step_fact "$r" dropped client_exit)" "killed by SIGTERM" "the stalled client was stopped"
    same "$(step_fact "$r" dropped server_exit)" "killed by SIGTERM" "the waiting server was stopped"
    [ "$(step_fact "$r" lift packets)" -gt 0 ] && pass "the drop rule counted packets" || fail "the drop rule counted nothing"
    same "$(step_fact "$r" restored iterations)" "3" "rping passes again once the rule is gone"
    same "$(json_field "$r" 'r["cleanup"]["clean"]')" "True" "cleanup left nothing"
    ;;
  *) echo "note: kernel 7.3 is not prepared: the two-namespace checks are left out" ;;
esac

case " $KERNELS " in
  *" 6.1 "*)
    r="$WORK/rping-61.json"
    expect_exit 0 "kernel 6.1: rping in one namespace" -- "$RXERUN" run --vm --kernel 6.1 tests/data/vm/rping-single.yaml --report json:"$r"
    echo "$out" | grep -E '^lab VM:|rping|^cleanup|^PASS|^FAIL'
    same "$(step_fact "$r" looped iterations)" "5" "5 round trips"
    same "$(step_fact "$r" looped rxe1.sent_pkts)/$(step_fact "$r" looped rxe1.rcvd_pkts)" "0/0" "looped back inside rxe0: nothing on rxe1"
    same "$(json_field "$r" 'r["cleanup"]["clean"]')" "True" "cleanup left nothing"
    ;;
  *) echo "note: kernel 6.1 is not prepared: the one-namespace check is left out" ;;
esac
no_qemu_left "after the rping runs"
finish
