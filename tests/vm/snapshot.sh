# The lab VM starts from a snapshot: the first start of a kernel boots it
# and saves it where /init waits for the host; later starts restore that,
# with the host's clock and fresh random state; --cold-boot boots; every
# change of what a snapshot is made from makes it anew; a damaged one falls
# back to a boot and is replaced; two first uses at once make one; Ctrl-C
# during a restore leaves no qemu. In a cache of this test's own (its
# kernel records point at the prepared kernels' files), so that the shared
# cache's snapshots are neither used nor replaced.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
export RXERUN_VM_ACCEL=tcg  # this cache has no KVM verdict of its own: no probe boot

# own_cache: kernel records whose dir (and so snapshots/) is under $WORK,
# the initramfs a copy (to be touched), the rest the prepared kernel's.
shared=$("$RXERUN" vm status --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["cache"])')
export RXERUN_CACHE_DIR="$WORK/cache"
for k in $KERNELS; do
  mkdir -p "$WORK/cache/kernels/$k"
  cp "$shared/kernels/$k/initramfs.cpio.gz" "$WORK/cache/kernels/$k/initramfs.cpio.gz"
  cp "$shared/kernels/$k/siw.json" "$WORK/cache/kernels/$k/"  # so that `vm setup` finds the kernel ready
  $PY - "$shared/kernels/$k/kernel.json" "$WORK/cache/kernels/$k" >"$WORK/cache/kernels/$k/kernel.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["dir"] = sys.argv[2]
r["initramfs"] = sys.argv[2] + "/initramfs.cpio.gz"
print(json.dumps(r))
PYEOF
done
snaps() { ls "$WORK/cache/kernels/$1/snapshots/"*.snap 2>/dev/null; }
# guest_facts K: the boot line, the guest's boot id and a random uuid, then
# "clock GUEST HOST": the guest's clock and the host's when the line came
# (vm exec relays the guest's output as it comes).
guest_facts() {
  "$RXERUN" vm exec --kernel "$1" -- /bin/sh -c \
    'cat /proc/sys/kernel/random/boot_id /proc/sys/kernel/random/uuid; echo clock $(date +%s.%N)' |
    $PY -u -c 'import sys, time
for line in sys.stdin:
    line = line.rstrip("\n")
    print(f"{line} {time.time():.3f}" if line.startswith("clock ") else line, flush=True)'
  return "${PIPESTATUS[0]}"
}

for k in $KERNELS; do
  expect_exit 0 "kernel $k: the first start boots" -- guest_facts "$k"
  lacks "$out" "from its snapshot" "kernel $k: booted, not restored"
  same "$(snaps "$k" | wc -l)" 1 "kernel $k: and made its snapshot"
  expect_exit 0 "kernel $k: the second start" -- guest_facts "$k"
  contains "$out" "lab VM: kernel $k (" "kernel $k: up"
  contains "$out" "from its snapshot" "kernel $k: restored from the snapshot"
  first="$out"
  expect_exit 0 "kernel $k: the third start" -- guest_facts "$k"
  contains "$out" "from its snapshot" "kernel $k: restored again"
  boot1=$(sed -n 2p <<<"$first"); boot2=$(sed -n 2p <<<"$out")
  uuid1=$(sed -n 3p <<<"$first"); uuid2=$(sed -n 3p <<<"$out")
  [ -n "$boot1" ] && [ "$boot1" != "$boot2" ] && pass "kernel $k: two restored guests have two boot ids" ||
    fail "kernel $k: boot ids '$boot1' and '$boot2'"
  [ -n "$uuid1" ] && [ "$uuid1" != "$uuid2" ] && pass "kernel $k: and draw other random numbers" ||
    fail "kernel $k: uuids '$uuid1' and '$uuid2'"
  read -r _ guest host < <(grep '^clock ' <<<"$out")
  $PY -c 'import sys; sys.exit(0 if abs(float(sys.argv[2]) - float(sys.argv[1])) < 1 else 1)' "$guest" "$host" &&
    pass "kernel $k: the restored guest's clock is the host's (guest $guest, host $host)" ||
    fail "kernel $k: the guest's clock $guest, the host's $host"
done

# A kernel matrix with -j 2: both lab VMs from their snapshots at once.
if [ "$(wc -w <<<"$KERNELS")" -ge 2 ]; then
  two=$(tr ' ' ',' <<<"$KERNELS" | sed 's/,$//')
  expect_exit 0 "-j 2 over $two" -- "$RXERUN" run tests/data/vm/pass.yaml --kernel "$two" -j 2 --report json:"$WORK/j2.json"
  same "$(json_field "$WORK/j2.json" '",".join(sorted(set(x["vm"]["start"] for x in r["runs"])))')" snapshot \
    "  ... each run's VM started from its snapshot"
fi

# A run's reports say how the VM started; --cold-boot boots.
expect_exit 0 "a run from the snapshot" -- "$RXERUN" run --vm --kernel "$NEWEST" tests/data/vm/pass.yaml \
  --report json:"$WORK/snap.json" --report junit:"$WORK/snap.xml"
same "$(json_field "$WORK/snap.json" 'r["vm"]["start"]')" snapshot "the JSON report: vm.start is snapshot"
positive "$(json_field "$WORK/snap.json" 'r["vm"]["boot_s"]')" "  ... next to boot_s"
grep -q '<property name="vm.start" value="snapshot"/>' "$WORK/snap.xml" && pass "the JUnit report says so too" ||
  fail "no vm.start in $(grep property "$WORK/snap.xml")"
expect_exit 0 "--cold-boot" -- "$RXERUN" run --vm --cold-boot --kernel "$NEWEST" tests/data/vm/pass.yaml \
  --report json:"$WORK/cold.json"
lacks "$out" "from its snapshot" "--cold-boot boots"
same "$(json_field "$WORK/cold.json" 'r["vm"]["start"]')" boot "  ... and the report says boot"

# vm status lists them, with their sizes.
expect_exit 0 "vm status" -- "$RXERUN" vm status
contains "$out" "snapshots (the lab VM starts from them" "vm status has a snapshots part"
contains "$out" "$(basename "$(snaps "$NEWEST")")" "  ... naming the file"
expect_exit 0 "vm status --json" -- "$RXERUN" vm status --json
$PY -c 'import json,sys; j=json.loads(sys.argv[1]); s=[k for k in j["kernels"] if k["label"]==sys.argv[2]][0]["snapshots"]; sys.exit(0 if len(s)==1 and s[0]["bytes"] > 10**6 else 1)' "$out" "$NEWEST" &&
  pass "vm status --json: the snapshot and its size" || fail "vm status --json: $out"

# A damaged snapshot: a boot instead, with one line, and a new snapshot.
snap=$(snaps "$NEWEST")
truncate -s 100000 "$snap"
expect_exit 0 "a truncated snapshot" -- "$RXERUN" vm exec --kernel "$NEWEST" -- true
contains "$err" "the snapshot of kernel $NEWEST did not restore" "it says the snapshot did not restore"
[ "$(grep -c . <<<"$err")" = 1 ] && pass "  ... in one line" || fail "more than one line: $err"
lacks "$out" "from its snapshot" "  ... and booted"
size=$(stat -c %s "$(snaps "$NEWEST")")
[ "$size" -gt 1000000 ] && pass "the snapshot was made anew ($size bytes)" || fail "snapshot of $size bytes"
expect_exit 0 "the new snapshot" -- "$RXERUN" vm exec --kernel "$NEWEST" -- true
contains "$out" "from its snapshot" "  ... restores"

# What a snapshot is made from changes: it is made anew, and the stale one goes.
remade() {  # DESCRIPTION COMMAND...: the start boots, says why, and leaves one new snapshot
  local before
  before=$(snaps "$NEWEST")
  expect_exit 0 "$1" -- "${@:2}"
  contains "$err" "making the snapshot of kernel $NEWEST again" "$1: said in one line"
  lacks "$out" "from its snapshot" "$1: booted"
  [ "$(snaps "$NEWEST" | wc -l)" = 1 ] && [ "$(snaps "$NEWEST")" != "$before" ] &&
    pass "$1: one snapshot, a new one" || fail "$1: snapshots $(snaps "$NEWEST" | tr '\n' ' ') (before: $before)"
}
touch "$WORK/cache/kernels/$NEWEST/initramfs.cpio.gz"
remade "a changed initramfs" "$RXERUN" vm exec --kernel "$NEWEST" -- true
remade "another machine (kernel parameters)" env RXERUN_VM_APPEND=rxerun.test=1 "$RXERUN" vm exec --kernel "$NEWEST" -- true
mkdir -p "$WORK/qemu"
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v qemu-system-x86_64)" >"$WORK/qemu/qemu-system-x86_64"
chmod +x "$WORK/qemu/qemu-system-x86_64"
remade "another qemu" env PATH="$WORK/qemu:$PATH" "$RXERUN" vm exec --kernel "$NEWEST" -- true
$PY - "$WORK/cache/kernels/$NEWEST/kernel.json" "$WORK/vmlinux" <<'PYEOF'
import json, shutil, sys
r = json.load(open(sys.argv[1]))
shutil.copy(r["vmlinux"], sys.argv[2])
r["vmlinux"] = sys.argv[2]
json.dump(r, open(sys.argv[1], "w"))
PYEOF
remade "another kernel image" "$RXERUN" vm exec --kernel "$NEWEST" -- true
# The guest runs a copy of rxerun loaded before the snapshot: another
# binary (here a copy elsewhere) is another snapshot.
cp "$RXERUN" "$WORK/rxerun-copy"
remade "another rxerun binary" "$WORK/rxerun-copy" vm exec --kernel "$NEWEST" -- true

# Two first uses at once: both run, one snapshot is made.
rm -f "$WORK/cache/kernels/$NEWEST/snapshots/"*.snap
"$RXERUN" vm exec -q --kernel "$NEWEST" -- true >"$WORK/c1" 2>&1 &
c1=$!
"$RXERUN" vm exec -q --kernel "$NEWEST" -- true >"$WORK/c2" 2>&1
r2=$?
wait "$c1"
r1=$?
[ "$r1" = 0 ] && [ "$r2" = 0 ] && pass "two first uses at once both run" || fail "exits $r1 $r2: $(cat "$WORK/c1" "$WORK/c2")"
same "$(snaps "$NEWEST" | wc -l)" 1 "  ... and make one snapshot"
ls "$WORK/cache/kernels/$NEWEST/snapshots/" | grep -q '\.tmp$' && fail "a temporary file is left" || pass "  ... and leave no temporary file"
no_qemu_left "after two at once"

# Ctrl-C while the guest is being restored.
"$RXERUN" vm exec --kernel "$NEWEST" -- sleep 30 >"$WORK/int.out" 2>&1 &
pid=$!
for _ in $(seq 500); do pgrep -f "^qemu-system-x86_64 .*-incoming fd:" >/dev/null && break; sleep 0.02; done
kill -INT "$pid"
wait "$pid"
same "$?" 130 "Ctrl-C during a restore: exit 130"
no_qemu_left "after Ctrl-C during a restore"

# Two nodes on one kernel: the first run makes the snapshot of a machine
# with a wire, the next restores it in both nodes, and each wire NIC has the
# lab's MAC address, not the one the snapshot's NIC had.
two_nodes() {  # MAC: a two-node lab whose node a has that MAC on its wire NIC
  sed "s/MAC/$1/g; s/KERNEL/$NEWEST/g" >"$WORK/two-nodes.yaml" <<'YAML'
name: two-node-snapshot
nodes:
  a: {kernel: "KERNEL"}
  b: {kernel: "KERNEL"}
wires:
  - {a: {nic: eth1, mac: "MAC"}, b: eth1}
steps:
  - address: {dev: eth1, cidr: 10.71.0.1/24}
    node: a
  - link: {dev: eth1, up: true}
    node: a
  - address: {dev: eth1, cidr: 10.71.0.2/24}
    node: b
  - link: {dev: eth1, up: true}
    node: b
  - name: mac-a
    exec: {argv: [cat, /sys/class/net/eth1/address]}
    node: a
    expect: {stdout: "~ MAC"}
  - name: mac-b
    exec: {argv: [cat, /sys/class/net/eth1/address]}
    node: b
    expect: {stdout: "~ 52:54:00:0a:01:02"}
  - ping: {to: 10.71.0.2, count: 2}
    node: a
    retries: 3
YAML
  echo "$WORK/two-nodes.yaml"
}
expect_exit 0 "two nodes: the first run" -- "$RXERUN" run "$(two_nodes 02:00:00:00:00:0a)"
ls "$WORK/cache/kernels/$NEWEST/snapshots/" | grep -q '^tcg-control-1wire-[0-9a-f]*\.snap$' &&
  pass "  ... made the snapshot of a machine with a control port and a wire" ||
  fail "no such snapshot: $(ls "$WORK/cache/kernels/$NEWEST/snapshots/")"
expect_exit 0 "two nodes, another MAC address: the second run" -- "$RXERUN" run "$(two_nodes 02:00:00:00:00:0b)" \
  --report json:"$WORK/nodes.json"
same "$(json_field "$WORK/nodes.json" '",".join(r["vm"]["nodes"][n]["start"] for n in ("a", "b"))')" snapshot,snapshot \
  "  ... both nodes started from the one snapshot"
same "$(step_field "$WORK/nodes.json" mac-a status)" passed "  ... node a's NIC has the lab's new MAC address"
same "$(step_field "$WORK/nodes.json" ping-7 status)" passed "  ... and the wire carries frames"
no_qemu_left "after two nodes"

# `vm setup --remove-snapshots` removes them all.
expect_exit 0 "vm setup --remove-snapshots" -- "$RXERUN" vm setup --remove-snapshots
contains "$out" "removed " "it says what it removed"
same "$(ls "$WORK"/cache/kernels/*/snapshots/*.snap 2>/dev/null | wc -l)" 0 "no snapshot is left"

# `vm setup` makes a ready kernel's snapshot when it has none.
expect_exit 0 "vm setup of a ready kernel without a snapshot" -- "$RXERUN" vm setup --kernel "$NEWEST"
contains "$out" "kernel $NEWEST: made the lab VM's snapshot (" "it makes the snapshot"
same "$(snaps "$NEWEST" | wc -l)" 1 "  ... one"
expect_exit 0 "vm setup again" -- "$RXERUN" vm setup --kernel "$NEWEST"
lacks "$out" "snapshot" "a kernel with its snapshot gets none more"
no_qemu_left "after vm setup"
finish
