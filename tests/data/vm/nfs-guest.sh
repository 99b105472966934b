#!/bin/bash
# The guest half of tests/vm/nfs.sh, run in the lab VM by `rxerun vm exec`
# (root, a throwaway kernel state): runs the NFS labs with --host and looks
# at the kernel afterwards. Prints "ok: ..." and "FAIL: ..." lines.
# Usage: nfs-guest.sh RXERUN WHAT...   (WHAT: lab, idle, netns, stall, kill; in that order)
RXERUN=$1
shift
source "$(dirname "$0")/guest-lib.sh"

# Nothing of NFS left: no NFS mount and no mount or directory of rxerun's
# under /run, nfsd's modules (and with them every nfsd and export cache)
# unloaded, and so is everything else the run loaded.
residue() {  # LABEL
  local left mods
  left=$(grep -E ' nfs4? |/run/rxerun-nfs' /proc/mounts)
  [ -z "$left" ] && pass "$1: no NFS mount, no mount of rxerun's" || fail "$1: mounts left: $left"
  left=$(ls -d /run/rxerun-nfs* 2>/dev/null)
  [ -z "$left" ] && pass "$1: no directory of rxerun's under /run" || fail "$1: directories left: $left"
  mods=$(lsmod | awk '{print $1}' | grep -E '^(nfsd|nfsv4|nfs|rpcrdma|sunrpc|lockd|grace|auth_rpcgss|rpcsec_gss_krb5|nfs_acl|rdma_rxe)$' | tr '\n' ' ')
  [ -z "$mods" ] && pass "$1: the modules this run loaded are unloaded" || fail "$1: modules left: $mods"
}

for WHAT in "$@"; do
case $WHAT in
  lab)
    run_lab scenarios/nfs-rdma.yaml "scenarios/nfs-rdma.yaml passed" --report json:/tmp/nfs-rdma.json
    python3 - /tmp/nfs-rdma.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = {x["name"]: x for x in r["steps"]}
def say(ok, what): print(("ok" if ok else "FAIL") + ": " + what)
n = s["nobody-there"]
say(n["outcome"] == "fail" and n["facts"].get("errno") == "ECONNREFUSED", "a port nobody serves: %s" % n.get("message"))
srv = s["server"]["facts"]
say(srv.get("listeners") == ["rdma 20049", "rdma 20049"] and "fsid=0" in srv.get("options", ""),
    "nfsd listens for RDMA and exports its tmpfs: %s, %s" % (srv.get("listeners"), srv.get("options")))
c = s["client"]["facts"]
say(c.get("transport") == "rdma" and "proto=rdma" in c.get("options", ""), "mountinfo says the mount runs over RDMA: %s" % c.get("options"))
w = s["write"]["facts"]
say(w.get("rxe1.sent_pkts", 0) > 100 and w.get("rxe0.rcvd_pkts", 0) > 100 and w.get("vA.rx_packets", 0) > 100,
    "rxe1, rxe0 and the veth carried the writes (rxe1 sent %s, rxe0 received %s)" % (w.get("rxe1.sent_pkts"), w.get("rxe0.rcvd_pkts")))
say(s["write"]["duration_s"] < 60, "no 90-second wait for the grace period: fio wrote in %.1f s (grace_ended=%s)" % (s["write"]["duration_s"], srv.get("grace_ended")))
say(s["on-server"]["facts"].get("jobs.0.read.io_bytes") == 4 << 20, "fio verified 4 MiB in the server's directory")
PY
    residue "after scenarios/nfs-rdma.yaml"
    ;;
  idle)
    run_lab tests/data/vm/nfs-idle.yaml "an export of the lab's own directory, read-only, that nobody mounts"
    [ -e /run/nfs-idle-export ] && fail "the lab's directory is left" || pass "the lab's directory went with its exec step"
    residue "after the export nobody mounted"
    ;;
  netns)
    run_lab tests/data/vm/nfs-netns.yaml "the server in a namespace of its own serves the mount; the file is the server's"
    ip netns list | grep -q rxn-nfs && fail "the namespace rxn-nfs is left" || pass "the namespace is gone"
    residue "after the namespaced server"
    ;;
  stall)
    run_lab tests/data/vm/nfs-stall.yaml "a server gone silent: the revert shut the mount's NFS client down and unmounted"
    residue "after the server went silent"
    ;;
  kill)
    lab_up() {
      grep -q ' nfs4 ' /proc/mounts && pass "the lab is up (an NFS mount)" || { fail "the lab did not come up"; return 1; }
    }
    left_behind() {
      grep -q ' nfs4 ' /proc/mounts && pass "SIGKILL left the mount behind" || fail "the mount went without cleanup?"
    }
    kill_then_cleanup tests/data/vm/nfs-hang.yaml ' written '
    ;;
esac
done
