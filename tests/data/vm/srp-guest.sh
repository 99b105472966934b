#!/bin/bash
# The guest half of tests/vm/srp.sh, run in the lab VM by `rxerun vm exec`
# (root, a throwaway kernel state): runs the SRP lab with --host and looks
# at the kernel afterwards. Prints "ok: ..." and "FAIL: ..." lines.
# Usage: srp-guest.sh RXERUN WHAT...   (WHAT: lab, netns, kill; in that order)
RXERUN=$1
shift
source "$(dirname "$0")/guest-lib.sh"

# Nothing of SRP left: no SRP login (SCSI host, remote port, disk), no LIO
# entry in configfs (or configfs not mounted), none of the modules loaded,
# no backing file.
residue() {  # LABEL
  local hosts mods
  hosts=$(ls /sys/class/srp_remote_ports 2>/dev/null)
  [ -z "$hosts" ] && pass "$1: no SRP remote port" || fail "$1: remote ports left: $hosts"
  ls /sys/class/scsi_disk 2>/dev/null | grep -q . && fail "$1: a SCSI disk is left: $(ls /sys/class/scsi_disk)" || pass "$1: no SCSI disk"
  if grep -q ' /sys/kernel/config configfs' /proc/mounts; then
    local left
    left=$(ls -d /sys/kernel/config/target/srpt /sys/kernel/config/target/core/*_[0-9]* /sys/kernel/config/nullb/rxerun* 2>/dev/null)
    [ -z "$left" ] && pass "$1: no LIO, srpt or null_blk entry in configfs" || fail "$1: configfs entries left: $left"
    fail "$1: configfs is still mounted (rxerun mounted it)"
  else
    pass "$1: configfs unmounted again"
  fi
  mods=$(lsmod | awk '{print $1}' | grep -E '^(ib_srpt|ib_srp|scsi_transport_srp|target_core_[a-z]+|uio|sd_mod|null_blk|rdma_rxe)$' | tr '\n' ' ')
  [ -z "$mods" ] && pass "$1: the modules this run loaded are unloaded" || fail "$1: modules left: $mods"
  ls /run/rxerun-srp-*.img >/dev/null 2>&1 && fail "$1: a backing file is left: $(ls /run/rxerun-srp-*.img)" || pass "$1: no backing file left"
}

for WHAT in "$@"; do
case $WHAT in
  lab)
    run_lab scenarios/srp-rdma.yaml "scenarios/srp-rdma.yaml passed" --report json:/tmp/srp-rdma.json
    python3 - /tmp/srp-rdma.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = {x["name"]: x for x in r["steps"]}
n = s["nobody-there"]
hints = "\n".join(n.get("hints", []))
print(("ok" if n["outcome"] == "fail" and n["facts"].get("errno") == "ECONNRESET" else "FAIL") + ": a port nobody listens on: %s" % n.get("message"))
print(("ok" if "kernel: " in hints else "FAIL") + ": the kernel's reason is in the hints: %s" % hints.splitlines()[:1])
i = s["initiator"]["facts"]
print(("ok" if i.get("disk", "").startswith("/dev/sd") and i.get("size") == 64 << 20 else "FAIL") + ": the initiator's disk: %s, %s bytes" % (i.get("disk"), i.get("size")))
f = s["fio"]["facts"]
ok = f.get("rxe1.sent_pkts", 0) > 100 and f.get("rxe0.sent_pkts", 0) > 100 and f.get("vA.rx_packets", 0) > 100
print(("ok" if ok else "FAIL") + ": rxe0, rxe1 and the veth carried fio's I/O (rxe1 sent %s, rxe0 sent %s)" % (f.get("rxe1.sent_pkts"), f.get("rxe0.sent_pkts")))
PY
    residue "after scenarios/srp-rdma.yaml"
    ;;
  netns)
    run_lab tests/data/vm/srp-netns.yaml "the initiator in a namespace of its own logs in, and fio verifies"
    ip netns list | grep -q rxn-srp && fail "the namespace rxn-srp is left" || pass "the namespace is gone"
    residue "after the namespaced login"
    ;;
  kill)
    lab_up() {
      local disks
      disks=$(ls /sys/class/scsi_disk 2>/dev/null)
      [ -d /sys/kernel/config/target/srpt ] && pass "srpt is in configfs" || fail "no srpt in configfs"
      [ -n "$disks" ] && pass "the lab is up (SCSI disk $disks)" || { fail "the lab did not come up"; return 1; }
    }
    left_behind() {
      ls /sys/class/srp_remote_ports | grep -q . && pass "SIGKILL left the login behind" || fail "the login went without cleanup?"
    }
    kill_then_cleanup tests/data/vm/srp-hang.yaml ' logged-in '
    ;;
esac
done
