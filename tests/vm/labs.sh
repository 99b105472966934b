# The shipped labs (scenarios/*.yaml that name a lab kernel) in the lab VM,
# as a CI job runs them: one suite invocation over both kernels, every lab
# of a kernel in one boot. Each must pass (its expectations are the proof:
# counters that show where the packets went, a fault's rule counter, bytes
# verified), clean up to nothing, and leave no qemu behind. The JUnit file
# is read back by a real parser: one testsuite per lab and kernel. The
# assertions live in the scenarios; this script checks a few facts in the
# JSON report that matter most: the honest loopback of veth-pair, the wire
# of the others; and the suite's report page, in headless Chromium.
source "$(dirname "$0")/lib.sh"

# The labs by the kernel they name.
declare -A by_kernel
for file in scenarios/*.yaml; do
  grep -q '^vm:' "$file" || continue
  kernel=$(/usr/bin/python3 -c 'import sys,yaml; print(((yaml.safe_load(open(sys.argv[1])) or {}).get("vm") or {}).get("kernel", ""))' "$file")
  case " $KERNELS " in
    *" $kernel "*) by_kernel[$kernel]+="$file " ;;
    *) fail "$(basename "$file" .yaml): its kernel '$kernel' is not prepared" ;;
  esac
done

# One suite over every lab, as CI runs them: one boot per kernel (one VM at
# a time), one report of runs on both kernels, one page.
files=()
suites=()
for kernel in "${!by_kernel[@]}"; do
  # shellcheck disable=SC2206 # the file names have no blanks
  files+=(${by_kernel[$kernel]})
  for f in ${by_kernel[$kernel]}; do suites+=(--expect-suite "$(basename "$f" .yaml)@$kernel"); done
done
expect_exit 0 "the ${#files[@]} labs as one suite over ${#by_kernel[@]} kernels" -- "$RXERUN" run --vm "${files[@]}" \
  --report json:"$WORK/suite.json" --report junit:"$WORK/suite.xml" --report html:"$WORK/suite.html" \
  --output-dir "$WORK"
echo "$out" | grep -E '^lab VM:|^PASS|^FAIL|^cleanup|^suite:'
for kernel in "${!by_kernel[@]}"; do
  [ "$(grep -c "^lab VM: kernel $kernel " <<<"$out")" = 1 ] && pass "kernel $kernel: one boot for all its labs" \
    || fail "kernel $kernel: boots: $(grep '^lab VM' <<<"$out")"
done
lacks "$out" "left behind" "cleanup left nothing"
expect_exit 0 "JUnit has one passing testsuite per lab and kernel" -- /usr/bin/python3 \
  tests/tools/junit_check.py "$WORK/suite.xml" --expect-suites "${#files[@]}" "${suites[@]}" \
  --expect-failures 0 --expect-errors 0
# Each lab's run, as its own report, for the checks below.
/usr/bin/python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["runs"]:
    json.dump(r, open(sys.argv[2] + "/" + r["scenario"] + ".json", "w"))
' "$WORK/suite.json" "$WORK"

# The suite's page in a real browser, against the JSON report: one hook per
# run, step and expectation with its verdict, capture-write's ladder with
# one arrow per frame of its pcap, no script error, nothing fetched.
if command -v chromium >/dev/null; then
  SHOTS="$(dirname "$RXERUN")/screenshots"
  mkdir -p "$SHOTS"
  expect_exit 0 "the suite's page as Chromium shows it" -- /usr/bin/python3 tests/tools/page_check.py \
    "$WORK/suite.html" "$WORK/suite.json" --capture-dir "$WORK" --screenshot "$SHOTS/labs-suite.png" --expect-open
  echo "$out" | sed 's/^/    /'
  contains "$out" "data-packet per frame of capture-write-wire.pcap" "capture-write's ladder has every frame"
else
  fail "chromium is not installed (scripts/setup installs it): the suite's page is not checked"
fi

fact() {  # NAME STEP FACT
  json_field "$WORK/$1.json" "[s['facts'].get('$3') for s in r['steps'] if s['name'] == '$2'][0]"
}

# The first recipe runs on rxe0 alone: nothing on rxe1 or the veth.
if [ -f "$WORK/veth-pair.json" ]; then
  [ "$(fact veth-pair rping rxe1.sent_pkts)" = "0" ] && [ "$(fact veth-pair rping rxe1.rcvd_pkts)" = "0" ] \
  && [ "$(fact veth-pair rping rxe0.sent_pkts)" != "0" ] \
    && pass "veth-pair: rping stayed inside rxe0" || fail "veth-pair: rping's counters do not show the loopback"
fi
# With the forced wire, both devices and the veth carried it.
if [ -f "$WORK/veth-pair-wire.json" ]; then
  [ "$(fact veth-pair-wire rping rxe1.sent_pkts)" != "0" ] && [ "$(fact veth-pair-wire rping vB.tx_packets)" != "0" ] \
    && pass "veth-pair-wire: rping crossed the veth" || fail "veth-pair-wire: no traffic on rxe1/vB"
fi
# NVMe over Fabrics: fio's writes and reads crossed the veth between rxe1 and
# rxe0, and a connect to a port nobody listens on was refused with ECONNRESET.
if [ -f "$WORK/nvme-rdma.json" ]; then
  positive "$(fact nvme-rdma fio rxe1.sent_pkts)" "nvme-rdma: rxe1 sent fio's I/O"
  positive "$(fact nvme-rdma fio vA.rx_packets)" "nvme-rdma: and it crossed the veth"
  same "$(fact nvme-rdma fio jobs.0.error)" 0 "nvme-rdma: fio verified every block"
  same "$(fact nvme-rdma nobody-there errno)" ECONNRESET "nvme-rdma: nobody listening is ECONNRESET"
fi
# The same over siw: iWARP's TCP crossed the veth (siw counts nothing itself).
if [ -f "$WORK/nvme-siw.json" ]; then
  positive "$(fact nvme-siw fio vB.tx_packets)" "nvme-siw: fio's I/O crossed the veth"
  same "$(fact nvme-siw fio jobs.0.error)" 0 "nvme-siw: fio verified every block"
  same "$(fact nvme-siw nobody-there errno)" ECONNREFUSED "nvme-siw: nobody listening is ECONNREFUSED over iWARP"
fi
# SRP over siw, on the IPv6 forced wire: fio's I/O crossed the veth and
# not lo, and a login nobody serves was refused by TCP.
if [ -f "$WORK/srp-siw.json" ]; then
  positive "$(fact srp-siw wire vB.tx_packets)" "srp-siw: fio's I/O crossed the veth"
  same "$(fact srp-siw wire lo.tx_packets)" 0 "srp-siw: and nothing went through lo"
  same "$(fact srp-siw fio jobs.0.error)" 0 "srp-siw: fio verified every block"
  same "$(fact srp-siw nobody-there errno)" ECONNREFUSED "srp-siw: a login nobody serves is ECONNREFUSED over iWARP"
fi
# NFS over RDMA: the mount runs over RDMA by the kernel's own word, the
# writes crossed the veth, and the server's directory holds every block.
for lab in nfs-rdma nfs-siw; do
  [ -f "$WORK/$lab.json" ] || continue
  same "$(fact $lab client transport)" rdma "$lab: mountinfo says proto=rdma"
  positive "$(fact $lab write vB.tx_packets)" "$lab: fio's writes crossed the veth"
  same "$(fact $lab on-server jobs.0.error)" 0 "$lab: fio verified every block in the server's directory"
  same "$(fact $lab nobody-there errno)" ECONNREFUSED "$lab: a mount nobody serves is ECONNREFUSED"
done
# The capture came back from the lab VM, and an independent dissector
# (Wireshark's, via tshark) agrees with `rxerun decode` on every packet of
# it: opcode, QP, PSN, AckReq, RETH and AETH; decode counts what the step
# counted.
if [ -f "$WORK/capture-write.json" ]; then
  # A suite over two kernels brings each kernel's files back to a directory of its own.
  pcap=$WORK/$(json_field "$WORK/capture-write.json" 'r["kernel"]')/capture-write-wire.pcap
  [ -s "$pcap" ] && pass "capture-write: the pcap came back to the host" || fail "capture-write: no $pcap"
  expect_exit 0 "capture-write: rxerun decode --json agrees with tshark on every packet" -- \
    /usr/bin/python3 tests/tools/crosscheck_tshark.py "$pcap" "$RXERUN"
  echo "$out" | tail -2
  decoded=$("$RXERUN" decode --json "$pcap" | grep -c '"opcode"')
  same "$decoded" "$(step_fact "$WORK/capture-write.json" seen packets)" "capture-write: decode finds the packets the step counted"
  positive "$(step_fact "$WORK/capture-write.json" seen RC_RDMA_WRITE_MIDDLE)" "capture-write: a 64 KiB write went as FIRST/MIDDLE/LAST"
fi
no_qemu_left "after the labs"
finish
