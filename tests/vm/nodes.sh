# Two-node labs (docs/nodes.md): two lab VMs booted at once, joined by a
# wire, each step run by the agent of its node, facts flowing between them;
# the five shipped two-node labs; SRP over rxe and NFS over siw across two
# nodes; a node killed during a step; Ctrl-C,
# SIGHUP, SIGKILL and a closed pipe. Every run leaves no qemu and no share
# directory behind.
source "$(dirname "$0")/lib.sh"

case " $KERNELS " in
  *" 6.1 "*) ;;
  *) echo "skip: the two-node lab needs lab kernel 6.1 (rxerun vm setup --kernel 6.1)"; exit 77 ;;
esac
case " $KERNELS " in
  *" 7.3 "*) ;;
  *) echo "skip: the two-node lab needs lab kernel 7.3 (rxerun vm setup --kernel 7.3)"; exit 77 ;;
esac

# 6.1 on node a, 7.3 on node b: rping across the wire, a fact of a read on b.
expect_exit 0 "two nodes (6.1 and 7.3), rping across the wire" -- "$RXERUN" run tests/vm/nodes/two-node-exec.yaml \
  --report json:"$WORK/exec.json" --report junit:"$WORK/exec.xml"
echo "$out" | grep -E '^\[a\] lab VM|^\[b\] lab VM|PASS|FAIL|ERROR'
contains "$out" "[a] lab VM: kernel 6.1" "node a boots 6.1"
contains "$out" "[b] lab VM: kernel 7.3" "node b boots 7.3"
same "$(step_field "$WORK/exec.json" server node)" a "the rping server ran on node a"
same "$(step_field "$WORK/exec.json" client node)" b "the rping client ran on node b"
same "$(step_field "$WORK/exec.json" facts-from-a status)" passed "node b read a fact of a step on node a"
positive "$(step_fact "$WORK/exec.json" counters-b rxe0.rcvd_pkts)" "node b's rxe0 received packets over the wire"
same "$(step_field "$WORK/exec.json" bw-across node)" "a+b" "ib_write_bw ran its ends on both nodes"
positive "$(step_fact "$WORK/exec.json" bw-across bw_avg_mib_s)" "ib_write_bw measured a bandwidth across the wire"
same "$(step_field "$WORK/exec.json" verbs-across node)" "a+b" "verbs ran its server on a, its client on b"
same "$(step_fact "$WORK/exec.json" verbs-across bytes_verified)" 12288 "verbs verified the bytes of both ends"
same "$(step_field "$WORK/exec.json" verbs-blocked outcome)" timeout "verbs with RoCE blocked on a ran out of time"
same "$(step_fact "$WORK/exec.json" verbs-blocked stage)" connect "... while connecting"
same "$(step_fact "$WORK/exec.json" verbs-again bytes_verified)" 4096 "the stopped server left nothing in the way"
same "$(json_field "$WORK/exec.json" "sorted(r['vm']['nodes'])")" "['a', 'b']" "the report has both nodes' lab VMs"
same "$(json_field "$WORK/exec.json" "r['vm']['nodes']['a']['kernel']")" 6.1 "the report names node a's kernel"
expect_exit 0 "JUnit: one passing testsuite" -- /usr/bin/python3 tests/tools/junit_check.py "$WORK/exec.xml" \
  --expect-suites 1 --expect-failures 0 --expect-errors 0
contains "$(cat "$WORK/exec.xml")" "node: b" "JUnit says which node ran a step"
no_qemu_left "two nodes"
[ -z "$(ls "$TMPDIR")" ] && pass "two nodes: share dirs removed" || fail "two nodes: left $(ls "$TMPDIR")"

# The shipped interop lab: rping and verbs both ways with each end on its
# own kernel (the server started on the other node), a capture on a's NIC
# that comes back to the host with every ICRC right.
expect_exit 0 "scenarios/two-node-interop.yaml" -- "$RXERUN" run scenarios/two-node-interop.yaml \
  --report json:"$WORK/interop.json" --report html:"$WORK/interop.html" --output-dir "$WORK/pcaps"
echo "$out" | grep -E 'rping|verbs|revert|PASS|FAIL|ERROR'
same "$(step_field "$WORK/interop.json" a-serves node)" "a+b" "a-serves ran on both nodes, server on a"
same "$(step_field "$WORK/interop.json" b-serves node)" "b+a" "b-serves ran on both nodes, server on b"
same "$(step_fact "$WORK/interop.json" a-serves server_iterations)" 10 "the server on 6.1 saw all 10 round trips"
same "$(step_fact "$WORK/interop.json" b-serves server_iterations)" 10 "the server on 7.3 saw all 10 round trips"
positive "$(step_fact "$WORK/interop.json" a-serves a.rxe0.rcvd_pkts)" "a-serves: the server node's rxe0 received, read on a"
positive "$(step_fact "$WORK/interop.json" a-serves b.rxe0.sent_pkts)" "a-serves: the client node's rxe0 sent"
same "$(step_fact "$WORK/interop.json" a-serves rxe0.sent_pkts)" None "a-serves: no counter without its node"
for v in a-serves-verbs b-serves-verbs; do
  same "$(step_fact "$WORK/interop.json" $v ops_done)" "send,write,read" "$v: every operation verified"
  same "$(step_fact "$WORK/interop.json" $v bytes_verified)" 209088 "$v: every byte of 3 x (64 + 4096 + 65536)"
done
same "$(step_field "$WORK/interop.json" b-serves-verbs node)" "b+a" "b-serves-verbs ran its server on b"
positive "$(step_fact "$WORK/interop.json" revert-15 icrc_good)" "the capture on a's NIC saw RoCE packets with a good ICRC"
same "$(step_fact "$WORK/interop.json" revert-15 icrc_bad)" 0 "no bad ICRC"
[ -s "$WORK/pcaps/two-node-interop-wire-a.pcap" ] && pass "the capture came back to the host" \
  || fail "no pcap under --output-dir: $(ls "$WORK/pcaps" 2>&1)"
expect_exit 0 "rxerun decode reads the capture" -- "$RXERUN" decode "$WORK/pcaps/two-node-interop-wire-a.pcap"
contains "$out" "ICRC good" "decode counts the ICRCs"
# Its report page in a real browser: both nodes' steps, the capture's ladder.
if command -v chromium >/dev/null; then
  mkdir -p "$(dirname "$RXERUN")/screenshots"
  expect_exit 0 "the two-node lab's page as Chromium shows it" -- /usr/bin/python3 tests/tools/page_check.py \
    "$WORK/interop.html" "$WORK/interop.json" --capture-dir "$WORK/pcaps" \
    --screenshot "$(dirname "$RXERUN")/screenshots/nodes-interop.png" --expect-open
  echo "$out" | sed 's/^/    /'
  contains "$out" "data-packet per frame of two-node-interop-wire-a.pcap" "the capture's ladder has every frame"
  contains "$(cat "$WORK/interop.html")" " on node a" "each step names its node"
  contains "$(cat "$WORK/interop.html")" 'data-run="two-node-interop@6.1+7.3"' "the run is named by its nodes' kernels"
else
  fail "chromium is not installed (scripts/setup installs it): the two-node page is not checked"
fi
no_qemu_left "interop"

# The shipped loss lab: 5 % loss on a's NIC, every rping round trip still
# completes, verbs still verifies every byte, netem's drops and a's retries
# counted.
expect_exit 0 "scenarios/two-node-loss.yaml" -- "$RXERUN" run scenarios/two-node-loss.yaml --report json:"$WORK/loss.json"
echo "$out" | grep -E 'rping|verbs|lift|after|PASS|FAIL|ERROR'
positive "$(step_fact "$WORK/loss.json" lift drops)" "netem dropped packets on the wire"
positive "$(step_fact "$WORK/loss.json" after-a rxe0.completer_retry_err)" "node a's rxe retried what was lost"
same "$(step_fact "$WORK/loss.json" through-loss iterations)" 100 "every round trip completed"
same "$(step_fact "$WORK/loss.json" verified-through-loss bytes_verified)" 995328 "verbs verified every byte through the loss"
no_qemu_left "loss"

# The shipped NVMe lab: the target on 6.1, the host on 7.3, fio's blocks
# verified across the wire.
expect_exit 0 "scenarios/two-node-nvme.yaml" -- "$RXERUN" run scenarios/two-node-nvme.yaml --report json:"$WORK/nvme.json"
echo "$out" | grep -E 'nvmet|nvme_connect|fio|PASS|FAIL|ERROR'
same "$(step_field "$WORK/nvme.json" target node)" a "the target is on node a"
same "$(step_fact "$WORK/nvme.json" fio jobs.0.read.io_bytes)" 4194304 "fio on node b read back all it wrote"
no_qemu_left "nvme"

# The shipped NFS lab: nfsd on 6.1 serving 7.3's mount over RDMA, fio's
# file written on b and verified block by block in a's directory.
expect_exit 0 "scenarios/two-node-nfs.yaml" -- "$RXERUN" run scenarios/two-node-nfs.yaml --report json:"$WORK/nfs.json"
echo "$out" | grep -E 'nfsd|nfs_mount|exec|PASS|FAIL|ERROR'
same "$(step_field "$WORK/nfs.json" server node)" a "nfsd runs on node a"
same "$(step_field "$WORK/nfs.json" client node)" b "the mount is on node b"
same "$(step_fact "$WORK/nfs.json" client transport)" rdma "node b's mountinfo says proto=rdma"
same "$(step_fact "$WORK/nfs.json" client clientaddr)" 10.73.0.2 "the client's address is b's"
same "$(step_fact "$WORK/nfs.json" write jobs.0.write.io_bytes)" 4194304 "fio on b wrote 4 MiB through the mount"
same "$(step_fact "$WORK/nfs.json" on-server jobs.0.read.io_bytes)" 4194304 "fio on a verified all 4 MiB in the server's directory"
positive "$(step_fact "$WORK/nfs.json" after-a rxe0.rcvd_pkts)" "node a's rxe0 received the writes"
same "$(json_field "$WORK/nfs.json" "r['cleanup']['clean']")" True "cleanup left nothing on either node"
no_qemu_left "nfs"

# The shipped SRP-over-siw lab (both nodes 6.1): the login over IPv6 taken
# (its ACL in ib_srpt's full form), fio verified through the disk, the
# IPv4 login turned away.
if awk '/^siw /{on=1; next} on && $2 == "built" {print $1}' <<<"$("$RXERUN" vm status)" | grep -qx 6.1; then
  expect_exit 0 "scenarios/two-node-srp-siw.yaml" -- "$RXERUN" run scenarios/two-node-srp-siw.yaml \
    --report json:"$WORK/srp.json"
  echo "$out" | grep -E 'srpt|srp_login|fio|PASS|FAIL|ERROR'
  same "$(step_fact "$WORK/srp.json" target acls)" "['10.74.0.1', 'fd00:0074:0000:0000:0000:0000:0000:0001']" \
    "the target's ACLs: a's addresses, the IPv6 one in full"
  same "$(step_fact "$WORK/srp.json" initiator size)" 33554432 "node b's SCSI disk is the 32 MiB LUN"
  same "$(step_fact "$WORK/srp.json" fio jobs.0.read.io_bytes)" 2097152 "fio on b read back all it wrote"
  same "$(step_fact "$WORK/srp.json" over-ipv4 errno)" ECONNRESET "the IPv4 login is turned away"
  same "$(json_field "$WORK/srp.json" "r['cleanup']['clean']")" True "cleanup left nothing on either node"
  no_qemu_left "srp over siw"
  # NFS over siw across two machines (the shipped siw lab is one namespace).
  expect_exit 0 "NFS over siw, two nodes" -- "$RXERUN" run tests/vm/nodes/two-node-nfs-siw.yaml \
    --report json:"$WORK/nfs-siw.json"
  same "$(step_fact "$WORK/nfs-siw.json" client transport)" rdma "NFS over siw: node b's mount is over RDMA"
  same "$(step_fact "$WORK/nfs-siw.json" on-server jobs.0.read.io_bytes)" 2097152 "NFS over siw: a verified all of b's file"
  no_qemu_left "nfs over siw"
else
  fail "kernel 6.1 with siw is not prepared: the siw labs across two nodes are not run"
fi

# SRP over rxe across two machines (target on 6.1, login from 7.3).
expect_exit 0 "SRP over rxe, two nodes" -- "$RXERUN" run tests/vm/nodes/two-node-srp-rxe.yaml \
  --report json:"$WORK/srp-rxe.json"
same "$(step_field "$WORK/srp-rxe.json" initiator node)" b "SRP over rxe: the login is on node b"
same "$(step_fact "$WORK/srp-rxe.json" fio jobs.0.read.io_bytes)" 2097152 "SRP over rxe: fio on b read back all it wrote"
positive "$(step_fact "$WORK/srp-rxe.json" fio rxe0.rcvd_pkts)" "SRP over rxe: b's rxe0 received the target's data"
no_qemu_left "srp over rxe"

# The qemu of node NODE among this run's lab VMs: its share holds the
# agent's request, which names the node.
node_qemu() {
  local pid share
  for pid in $(lab_qemus); do
    share=$(tr '\0' '\n' </proc/"$pid"/cmdline | sed -n 's/^local,id=share,path=\([^,]*\),.*/\1/p')
    grep -q "\"--node\",\"$1\"" "$share/request.json" 2>/dev/null && { echo "$pid"; return; }
  done
}

# Node b killed while its step sleeps: that step's error, with b's console;
# node a still cleans up (its namespace deleted).
"$RXERUN" run tests/vm/nodes/two-node-hang.yaml --report json:"$WORK/kill.json" >"$WORK/kill.out" 2>&1 &
pid=$!
for _ in $(seq 3000); do grep -q "nodes-a\|netns-1" "$WORK/kill.out" && break; sleep 0.1; done
sleep 2
victim=$(node_qemu b)
[ -n "$victim" ] && pass "node b's qemu found" || fail "node b's qemu not found"
[ -n "$victim" ] && kill -KILL "$victim"
wait $pid
code=$?
same "$code" 3 "a node that dies: exit 3"
same "$(step_field "$WORK/kill.json" sleeper status)" error "the step running on the dead node is an error"
contains "$(step_field "$WORK/kill.json" sleeper message)" "node b died during the step" "its message names the node"
same "$(step_field "$WORK/kill.json" after status)" not-run "later steps are not run"
contains "$(json_field "$WORK/kill.json" "[u['summary'] for u in r['cleanup']['undos']]")" "[a] delete network namespace" \
  "node a cleaned up its namespace"
no_qemu_left "a node killed"
[ -z "$(ls "$TMPDIR")" ] && pass "a node killed: share dirs removed" || fail "a node killed: left $(ls "$TMPDIR")"

# Ctrl-C, SIGHUP and SIGKILL during the sleep: both VMs stop. After
# SIGKILL nothing ran to remove the share dirs: the next lab VM run does.
for how in INT HUP KILL; do
  "$RXERUN" run tests/vm/nodes/two-node-hang.yaml >"$WORK/sig.out" 2>&1 &
  pid=$!
  for _ in $(seq 3000); do grep -q "netns-1" "$WORK/sig.out" && break; sleep 0.1; done
  sleep 2
  [ "$(lab_qemus | wc -l)" = 2 ] && pass "SIG$how: two qemus run" || fail "SIG$how: qemus: $(lab_qemus | wc -l)"
  kill -$how $pid
  wait $pid
  code=$?
  want=130; [ "$how" = KILL ] && want=137
  same "$code" "$want" "SIG$how: exit $want"
  no_qemu_left "SIG$how"
  if [ "$how" = KILL ]; then
    [ -n "$(ls "$TMPDIR")" ] && pass "SIGKILL: the share dirs stay (nothing ran to remove them)" || fail "SIGKILL: no share dir?"
    expect_exit 0 "the next lab VM run" -- "$RXERUN" vm exec -q -- true
  fi
  [ -z "$(ls "$TMPDIR")" ] && pass "SIG$how: share dirs removed" || { fail "SIG$how: left $(ls "$TMPDIR")"; cat "$WORK/sig.out"; }
done

# The reader of the output leaves after two lines: the run goes on to its
# end, cleans up and writes its report; nothing is left.
"$RXERUN" run tests/vm/nodes/two-node-exec.yaml --report json:"$WORK/pipe.json" 2>&1 | head -n 2 >/dev/null
same "${PIPESTATUS[0]}" 0 "a closed pipe: the run still passes"
same "$(json_field "$WORK/pipe.json" "r['cleanup']['clean']")" True "a closed pipe: cleanup left nothing"
no_qemu_left "a closed pipe"
[ -z "$(ls "$TMPDIR")" ] && pass "a closed pipe: share dirs removed" || fail "a closed pipe: left $(ls "$TMPDIR")"
finish
