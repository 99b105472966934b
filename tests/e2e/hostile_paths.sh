# Hostile paths and sizes, with the real binary: reports never written
# through a symbolic link (the link's target unchanged, a clear message,
# exit 0/1 turned into 3), links planted at temporary-looking names ignored,
# `..` in a capture file and `*` in a block's dev refused at validation
# (exit 2, FILE:LINE:COL), variables that would expand without bound
# stopped at their caps with rxerun's memory staying small, and durations of
# a hundred years with retries handled. As root, a capture path that is a
# symbolic link, on lo in a throwaway namespace.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

precious() { printf 'precious\n' >"$1"; }
untouched() {
  if [ "$(cat "$1")" = precious ]; then pass "$2: the link's target is unchanged"; else
    fail "$2: the link's target was written: $(head -c 200 "$1")"
  fi
}

# --- Reports through a symbolic link -------------------------------------
precious "$WORK/target.json"
ln -s "$WORK/target.json" "$WORK/link.json"
expect_exit 3 "a passing run with a symlinked JSON report ends 3" -- \
  "$RXERUN" run scenarios/selftest.yaml --skip slow -q --report json:"$WORK/link.json"
contains "$err" "rxerun: report $WORK/link.json is a symbolic link (to $WORK/target.json): rxerun does not write through symbolic links; name the file itself, or remove the link" \
  "the message names the path, what it links to, and what to do"
untouched "$WORK/target.json" "json"
[ -L "$WORK/link.json" ] && pass "the link is still a link" || fail "the link was replaced"

precious "$WORK/target.xml"
ln -s "$WORK/target.xml" "$WORK/link.xml"
expect_exit 3 "a failing run with a symlinked JUnit report ends 3 (1 turned into 3)" -- \
  "$RXERUN" run tests/data/e2e/expect-fail.yaml -q --report junit:"$WORK/link.xml" --report json:"$WORK/ok.json"
contains "$err" "report $WORK/link.xml is a symbolic link" "the JUnit path is refused"
untouched "$WORK/target.xml" "junit"
[ -s "$WORK/ok.json" ] && pass "the other report is still written" || fail "no $WORK/ok.json"
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["exit_code"] == 1' "$WORK/ok.json" \
  && pass "the JSON report holds the run's own exit code (1)" || fail "the JSON report's exit_code"

# A dangling link would make rxerun create the file it points to.
ln -s "$WORK/nowhere.json" "$WORK/dangling.json"
expect_exit 3 "a dangling link is refused too" -- \
  "$RXERUN" run scenarios/selftest.yaml --skip slow -q --report json:"$WORK/dangling.json"
[ ! -e "$WORK/nowhere.json" ] && pass "nothing was created through the dangling link" \
  || fail "$WORK/nowhere.json was created"

# --- Links planted at temporary-looking names ------------------------------
mkdir "$WORK/rep"
precious "$WORK/planted-target"
for suffix in .tmp .new '~' .rxerun-; do ln -s "$WORK/planted-target" "$WORK/rep/r.json$suffix"; done
expect_exit 0 "links planted at r.json.tmp and friends do not matter" -- \
  "$RXERUN" run scenarios/selftest.yaml --skip slow -q --report json:"$WORK/rep/r.json"
untouched "$WORK/planted-target" "planted links"
$PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/rep/r.json" && pass "the report is whole JSON" \
  || fail "the report is not JSON"
left=$(find "$WORK/rep" -name 'r.json.rxerun-?*')
[ -z "$left" ] && pass "no temporary file is left" || fail "left: $left"
n=$(find "$WORK/rep" -type l | wc -l)
[ "$n" -eq 4 ] && pass "the planted links are left alone" || fail "$n of 4 planted links remain"

# --- `..` in a capture's file, `*` in a block's dev -------------------------
cat >"$WORK/climb.yaml" <<'EOF'
name: climb
steps:
  - capture: {dev: lo, file: "caps/../../escape.pcap"}
EOF
expect_exit 2 "a capture file climbing out of --output-dir is invalid" -- "$RXERUN" validate "$WORK/climb.yaml"
contains "$err$out" "climb.yaml:3:30: 'caps/../../escape.pcap' climbs out of --output-dir with '..'" \
  "FILE:LINE:COL and the reason"
expect_exit 2 "run refuses it before touching anything" -- "$RXERUN" run "$WORK/climb.yaml" --output-dir "$WORK/rep"
[ ! -e "$WORK/escape.pcap" ] && pass "no file outside --output-dir" || fail "$WORK/escape.pcap exists"

cat >"$WORK/wild.yaml" <<'EOF'
name: wild
steps:
  - block: {proto: udp, dev: "veth*"}
EOF
expect_exit 2 "a '*' in a block's dev is invalid" -- "$RXERUN" validate "$WORK/wild.yaml"
contains "$err$out" "wild.yaml:3:30: 'veth*' holds '*', which nftables reads as a wildcard" "FILE:LINE:COL and the reason"
expect_exit 2 "plan refuses it too" -- "$RXERUN" plan "$WORK/wild.yaml"

# --- Variables expanded without bound -------------------------------------
# maxrss_kb CMD...: runs it (stdout dropped, stderr passed on), prints
# "EXIT MAXRSS_KB".
maxrss_kb() {
  $PY - "$@" <<'PYEOF'
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
sys.stderr.buffer.write(r.stderr)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PYEOF
}
# A ~1 MB variable (the file limit is 1 MiB) used 2000 times through an alias.
$PY - "$WORK/huge.yaml" <<'PYEOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("name: huge\nvars:\n  big: " + "x" * 1_000_000 + "\n")
    f.write("steps:\n  - &s\n    sleep: {duration: \"{{big}}{{big}}\"}\n")
    for _ in range(2000):
        f.write("  - *s\n")
PYEOF
read -r code rss < <(maxrss_kb "$RXERUN" validate "$WORK/huge.yaml" 2>"$WORK/huge.err")
[ "$code" -eq 2 ] && pass "a 1 MB variable expanded 4000 times is invalid (exit 2)" || fail "exit $code"
contains "$(head -n 3 "$WORK/huge.err")" "huge.yaml:6:23: this value grows past 64 KiB when {{big}} is expanded" \
  "FILE:LINE:COL of the value that crossed the cap"
[ "$rss" -lt 200000 ] && pass "rxerun's memory stayed small (max RSS ${rss} KiB < 200 MiB)" \
  || fail "max RSS ${rss} KiB: the expansion was not bounded"

# 60 KiB (under the per-value cap) used 100 times: the scenario cap, once.
$PY - "$WORK/many.yaml" <<'PYEOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("name: many\nvars:\n  v: " + "y" * 60 * 1024 + "\nsteps:\n")
    for i in range(100):
        f.write(f"  - capture: {{dev: lo, filter: \"{{{{v}}}}\"}}\n")
PYEOF
expect_exit 2 "60 KiB expanded 100 times crosses the 4 MiB scenario cap" -- "$RXERUN" validate "$WORK/many.yaml"
contains "$err" "many.yaml:73:32: expanding {{v}} here takes the variables substituted in this scenario past 4 MiB" \
  "the value that crossed it (the 69th use) is named"
n=$(wc -l <<<"$err")
[ "$n" -eq 1 ] && pass "the scenario cap is reported once, and nothing else" || fail "$n lines: $err"

# --var is capped the same way (the kernel limits one argument to 128 KiB).
big=$(head -c 100000 /dev/zero | tr '\0' z)
read -r code rss < <(maxrss_kb "$RXERUN" validate scenarios/selftest.yaml --var "short=$big" 2>"$WORK/var.err")
[ "$code" -eq 2 ] && pass "a 100 KB --var is refused where it is used (exit 2)" || fail "exit $code"
contains "$(cat "$WORK/var.err")" "selftest.yaml:10:23: this value grows past 64 KiB when {{short}} is expanded" \
  "it points at the use of the variable"

# --- A hundred years, with retries ----------------------------------------
cat >"$WORK/century.yaml" <<'EOF'
name: century
vm: {timeout: 876000h}
steps:
  - name: long
    sleep: {duration: 10ms}
    timeout: 876000h
    retries: 3
    delay: 876000h
EOF
expect_exit 0 "timeout: 876000h with retries validates" -- "$RXERUN" validate "$WORK/century.yaml"
expect_exit 0 "and plans" -- "$RXERUN" plan "$WORK/century.yaml"
expect_exit 0 "and runs (the deadline saturates; the sleep ends)" -- "$RXERUN" run "$WORK/century.yaml" -q --host
sed 's/timeout: 876000h$/timeout: 99999999999999999999h/' "$WORK/century.yaml" >"$WORK/overflow.yaml"
expect_exit 2 "a duration past any clock is a clear error" -- "$RXERUN" validate "$WORK/overflow.yaml"
contains "$err$out" "overflow.yaml:6:14: 'timeout' is '99999999999999999999h', longer than 876000h (a hundred years)" \
  "it says what the limit is"

# --- A capture path that is a symbolic link (root: a real capture) ---------
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED part: the capture cases need root (CAP_NET_ADMIN); CI runs them as root"
  finish
fi
NS=rxhp-$$
residue() { ip netns list 2>/dev/null | grep -E "^$NS"; }
cat >"$WORK/cap.yaml" <<EOF
name: hostile-capture
steps:
  - netns: {name: $NS}
  - link: {dev: lo, up: true}
    netns: $NS
  - name: wire
    capture: {dev: lo, filter: icmp, file: "{{f}}"}
    netns: $NS
  - ping: {to: 127.0.0.1, count: 2, interval: 10ms}
    netns: $NS
  - name: seen
    revert: wire
    expect: {frames: ">= 2"}
EOF
mkdir "$WORK/caps"
precious "$WORK/cap-target"
ln -s "$WORK/cap-target" "$WORK/caps/link.pcap"
expect_exit 3 "a capture file that is a symbolic link is the step's error" -- \
  "$RXERUN" run "$WORK/cap.yaml" --var f=link.pcap --output-dir "$WORK/caps"
contains "$out" "capture $WORK/caps/link.pcap is a symbolic link (to $WORK/cap-target): rxerun does not write through symbolic links" \
  "the step says why"
untouched "$WORK/cap-target" "capture"
[ -z "$(residue)" ] && pass "nothing left behind" || fail "left behind: $(residue)"

for suffix in .tmp .rxerun-; do ln -s "$WORK/cap-target" "$WORK/caps/ok.pcap$suffix"; done
expect_exit 0 "a capture next to planted links passes" -- \
  "$RXERUN" run "$WORK/cap.yaml" --var f=ok.pcap --output-dir "$WORK/caps"
untouched "$WORK/cap-target" "capture next to planted links"
[ -f "$WORK/caps/ok.pcap" ] && [ ! -L "$WORK/caps/ok.pcap" ] && pass "the pcap is a regular file" \
  || fail "no regular $WORK/caps/ok.pcap"
left=$(find "$WORK/caps" -name '*.rxerun-?*')
[ -z "$left" ] && pass "no temporary file is left" || fail "left: $left"
[ -z "$(residue)" ] && pass "nothing left behind" || fail "left behind: $(residue)"

# Killed mid-capture: cleanup renames what was captured into place.
cat >"$WORK/hold.yaml" <<EOF
name: hostile-hold
steps:
  - netns: {name: $NS}
  - link: {dev: lo, up: true}
    netns: $NS
  - name: wire
    capture: {dev: lo, filter: icmp, file: held.pcap}
    netns: $NS
  - ping: {to: 127.0.0.1, count: 2, interval: 10ms}
    netns: $NS
  - name: hold
    sleep: {duration: 30s}
EOF
"$RXERUN" run "$WORK/hold.yaml" --output-dir "$WORK/caps" >"$WORK/hold.out" 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q "ping-4" "$WORK/hold.out" && break; sleep 0.05; done
kill -KILL $pid
wait $pid 2>/dev/null
[ -n "$(find "$WORK/caps" -name 'held.pcap.rxerun-*')" ] && pass "killed mid-capture: the temporary file is there" \
  || fail "no temporary capture file after SIGKILL: $(ls "$WORK/caps")"
expect_exit 0 "rxerun cleanup after SIGKILL" -- "$RXERUN" cleanup "$WORK/hold.yaml"
[ -f "$WORK/caps/held.pcap" ] && pass "cleanup renamed the capture into place" || fail "no held.pcap: $(ls "$WORK/caps")"
left=$(find "$WORK/caps" -name 'held.pcap.rxerun-*')
[ -z "$left" ] && pass "no temporary file is left after cleanup" || fail "left: $left"
[ -z "$(residue)" ] && pass "nothing left behind after cleanup" || fail "left behind: $(residue)"
ip netns del "$NS" 2>/dev/null
finish
