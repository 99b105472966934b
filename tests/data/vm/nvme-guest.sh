#!/bin/bash
# The guest half of tests/vm/nvme.sh, run in the lab VM by `rxerun vm exec`
# (root, a throwaway kernel state): runs the NVMe scenarios with --host and
# looks at the kernel afterwards. Prints "ok: ..." and "FAIL: ..." lines.
# Usage: nvme-guest.sh RXERUN WHAT   (WHAT: lab, kill)
RXERUN=$1
WHAT=$2
source "$(dirname "$0")/guest-lib.sh"

# Nothing of NVMe-oF left: no controller, no nvmet or null_blk entry in
# configfs (or configfs not mounted), none of the modules loaded, no file.
residue() {  # LABEL
  local ctrls mods
  ctrls=$(ls /sys/class/nvme 2>/dev/null)
  [ -z "$ctrls" ] && pass "$1: no NVMe controller" || fail "$1: controllers left: $ctrls"
  if grep -q ' /sys/kernel/config configfs' /proc/mounts; then
    local left
    left=$(ls /sys/kernel/config/nvmet/subsystems /sys/kernel/config/nvmet/ports /sys/kernel/config/nullb 2>/dev/null | grep -v ':$' | grep -v '^features$' | grep -v '^$')
    [ -z "$left" ] && pass "$1: no configfs entry under nvmet or nullb" || fail "$1: configfs entries left: $left"
    fail "$1: configfs is still mounted (rxerun mounted it)"
  else
    pass "$1: configfs unmounted again"
  fi
  mods=$(lsmod | awk '{print $1}' | grep -E '^(nvmet|nvmet_rdma|nvme_rdma|nvme_fabrics|null_blk|rdma_rxe)$' | tr '\n' ' ')
  [ -z "$mods" ] && pass "$1: the modules this run loaded are unloaded" || fail "$1: modules left: $mods"
  [ ! -e /run/rxerun-nvme-vm.img ] && pass "$1: the backing file is gone" || fail "$1: /run/rxerun-nvme-vm.img left"
  ls /dev | grep -q '^rxerun-nullb' && fail "$1: a null_blk disk is left" || pass "$1: no null_blk disk left"
}

case $WHAT in
  lab)
    run_lab tests/data/vm/nvme.yaml "the scenario passed" --report json:/tmp/nvme-vm.json
    # The stranger was refused by the kernel, and the step says why.
    python3 - /tmp/nvme-vm.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = {x["name"]: x for x in r["steps"]}
st = s["stranger"]
print(("ok" if st["outcome"] == "fail" and st["facts"].get("errno") else "FAIL") + ": the stranger's connect is refused with an errno: %s" % st["facts"].get("errno"))
print(("ok" if s["host"]["facts"].get("controller", "").startswith("nvme") else "FAIL") + ": the host has a controller")
f = s["fio"]["facts"]
ok = f.get("rxe1.sent_pkts", 0) > 1000 and f.get("rxe0.sent_pkts", 0) > 1000 and f.get("vA.rx_packets", 0) > 1000
print(("ok" if ok else "FAIL") + ": rxe0, rxe1 and the veth carried fio's I/O (rxe1 sent %s, rxe0 sent %s)" % (f.get("rxe1.sent_pkts"), f.get("rxe0.sent_pkts")))
PY
    residue "after the lab"
    # The shipped lab, its refused connect with the kernel's own reason.
    run_lab scenarios/nvme-rdma.yaml "scenarios/nvme-rdma.yaml passed" --report json:/tmp/nvme-rdma.json
    python3 - /tmp/nvme-rdma.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = [x for x in r["steps"] if x["name"] == "nobody-there"][0]
hints = "\n".join(s.get("hints", []))
print(("ok" if s["facts"].get("errno") == "ECONNRESET" else "FAIL") + ": a port nobody listens on: %s" % s.get("message"))
print(("ok" if "Connect rejected" in hints else "FAIL") + ": the kernel's reason is in the hints: %s" % hints.splitlines()[:1])
PY
    residue "after scenarios/nvme-rdma.yaml"
    ;;
  kill)
    lab_up() {
      local state
      state=$(cat /sys/class/nvme/nvme0/state 2>/dev/null)
      [ -d /sys/kernel/config/nvmet/subsystems/nqn.2026-01.io.rxerun:hang ] && pass "the subsystem is in configfs" \
        || fail "no subsystem in configfs"
      [ "$state" = live ] && pass "the lab is up (nvme0 $state)" || { fail "the lab did not come up: '$state'"; return 1; }
    }
    left_behind() {
      [ -e /sys/class/nvme/nvme0 ] && pass "SIGKILL left the controller behind" || fail "the controller went without cleanup?"
    }
    kill_then_cleanup tests/data/vm/nvme-hang.yaml nvme_connect
    ;;
esac
