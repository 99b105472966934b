# The capture step for real (root), on this host's kernel: ICMP captured on a
# veth in a namespace while ping crosses, the pcap readable by tshark with
# the frames the revert counted; a capture no step reverts is stopped by
# cleanup with its file complete; Ctrl-C too; nothing left behind.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN); CI runs it as root"; exit 77; }
command -v tshark >/dev/null || { fail "tshark is missing (scripts/setup installs it)"; finish; }

SCENARIO=$SRC/tests/data/e2e/capture-ping.yaml
residue() { ip netns list 2>/dev/null | grep -E '^rxcap-'; }
[ -z "$(residue)" ] || { fail "leftovers before the run: $(residue)"; finish; }

frames() { tshark -r "$1" 2>/dev/null | wc -l; }

expect_exit 0 "a run with two captures passes" -- \
  "$RXERUN" run "$SCENARIO" --var hold=10ms --output-dir "$WORK" --report json:"$WORK/r.json"
[ -s "$WORK/icmp.pcap" ] && pass "the named file is under --output-dir" || fail "no $WORK/icmp.pcap"
[ -s "$WORK/e2e-capture-ping-roce.pcap" ] && pass "the default name is SCENARIO-STEP.pcap" \
  || fail "no $WORK/e2e-capture-ping-roce.pcap: $(ls "$WORK")"
counted=$(/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print([s["facts"]["frames"] for s in r["steps"] if s["name"] == "seen"][0])' "$WORK/r.json")
in_file=$(frames "$WORK/icmp.pcap")
[ "$counted" -ge 6 ] && [ "$counted" = "$in_file" ] && pass "tshark reads the $counted frames the revert counted" \
  || fail "the revert counted $counted frames, tshark read $in_file"
icmp_in_file=$(tshark -r "$WORK/icmp.pcap" -Y icmp 2>/dev/null | wc -l)
[ "$icmp_in_file" = "$in_file" ] && pass "every frame in the file is ICMP (the filter)" \
  || fail "$icmp_in_file of $in_file frames are ICMP"
# The second capture saw no UDP 4791 and cleanup stopped it: an empty but
# complete pcap (a header tshark reads).
expect_exit 0 "tshark reads the capture cleanup stopped" -- tshark -r "$WORK/e2e-capture-ping-roce.pcap"
[ -z "$(residue)" ] && pass "nothing left behind" || fail "left behind: $(residue)"

# A relative file without --output-dir goes to the current directory.
mkdir -p "$WORK/cwd"
rxerun_abs=$(realpath "$RXERUN")
(cd "$WORK/cwd" && "$rxerun_abs" run "$SCENARIO" --var hold=10ms -q >/dev/null 2>&1)
[ -s "$WORK/cwd/icmp.pcap" ] && pass "without --output-dir: the current directory" || fail "no icmp.pcap in the cwd"

# Ctrl-C while the capture runs: the file is closed (tshark reads what was
# captured) and nothing is left.
rm -f "$WORK/e2e-capture-ping-roce.pcap"
"$RXERUN" run "$SCENARIO" --var hold=30s --output-dir "$WORK" >"$WORK/int.out" 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q "hold" "$WORK/int.out" && break; sleep 0.05; done
kill -INT $pid
wait $pid
code=$?
[ "$code" -eq 130 ] && pass "Ctrl-C exits 130" || { fail "Ctrl-C: exit $code"; cat "$WORK/int.out"; }
expect_exit 0 "tshark reads the capture Ctrl-C stopped" -- tshark -r "$WORK/e2e-capture-ping-roce.pcap"
[ -z "$(residue)" ] && pass "nothing left behind after Ctrl-C" || fail "left behind after Ctrl-C: $(residue)"

# Bad input: a filter that does not compile is an error at the step, with
# FILE:LINE:COL, and nothing is left.
sed 's/filter: icmp/filter: "icmp and"/' "$SCENARIO" >"$WORK/bad-filter.yaml"
expect_exit 3 "a bad filter is a step error" -- "$RXERUN" run "$WORK/bad-filter.yaml" --var hold=10ms --output-dir "$WORK"
contains "$out" "bad-filter.yaml:24:" "it points at the filter"
contains "$out" "icmp and" "it quotes the filter"
[ -z "$(residue)" ] && pass "nothing left behind after the error" || fail "left behind: $(residue)"
# An output directory that is a file: the capture cannot start, and its
# undo finds nothing to keep (the file could never be made there).
echo "not a directory" >"$WORK/plain"
expect_exit 3 "a capture under a file is a step error" -- "$RXERUN" run "$SCENARIO" --var hold=10ms \
  --output-dir "$WORK/plain"
contains "$out" "Not a directory" "it says why"
lacks "$out" "left behind" "its undo is not a residue"
[ -z "$(residue)" ] && pass "nothing left behind after the error" || fail "left behind: $(residue)"
finish
