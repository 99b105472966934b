# `rxerun decode`: generated captures (tests/tools/roce_pcap.py, whose
# ground truth is independent of rxerun, ICRCs included) read back as text
# and as JSON Lines, the same capture as pcapng, every packet compared with
# tshark's dissector (tests/tools/crosscheck_tshark.py), and the error cases:
# a missing file, a file that is no capture, an empty one, one cut short, a
# link type decode does not read, usage errors.
source "$(dirname "$0")/lib.sh"

GEN="$SRC/tests/tools/roce_pcap.py"
CROSS="$SRC/tests/tools/crosscheck_tshark.py"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
# tshark is part of scripts/setup: its absence is a failure, not a skip.
command -v tshark >/dev/null || { echo "FAIL: tshark not installed (scripts/setup installs it)"; exit 1; }

# A small capture: RC writes, sends, reads, ACKs (some NAKs and RNR NAKs),
# UD, IPv6, other traffic, frame 5's ICRC broken, frame 9 cut at 50 bytes.
small=$WORK/small.pcap
expect_exit 0 "generate a small capture" -- \
  python3 "$GEN" "$small" --packets 80 --seed 3 --ipv6 0.25 --other 0.1 --bad-icrc 5 --truncate 9 \
  --truth "$WORK/small.truth"
[ "$(wc -l <"$WORK/small.truth")" = 80 ] && pass "ground truth has 80 frames" || fail "ground truth: $(wc -l <"$WORK/small.truth") lines"

# The text listing against the ground truth: one line per RoCEv2 packet with
# its opcode's display name, QP, PSN, flags, RETH/AETH, ICRC; malformed frames
# with the decoder's words; other frames left out; then the counts.
expect_exit 0 "decode the small capture (text)" -- "$RXERUN" decode "$small"
text=$out
printf '%s\n' "$text" >"$WORK/small.txt"
contains "$text" "RC RDMA Read Request" "a display name (RC RDMA Read Request)"
contains "$text" "ICRC BAD" "the broken ICRC shown as BAD"
contains "$text" "      9 " "the cut frame has a line"
contains "$(grep '^      9 ' <<<"$text")" "malformed: truncated" "frame 9 is malformed: truncated"
lacks "$(grep '^ *[0-9]' <<<"$text" | grep -v ' ICRC \(ok\|BAD\)$' | grep -v 'malformed: ')" "→" \
  "every packet line ends with its ICRC verdict"
python3 - "$WORK/small.truth" "$WORK/small.txt" >"$WORK/check" 2>&1 <<'EOF'
import json, re, sys
truth = [json.loads(l) for l in open(sys.argv[1])]
lines = open(sys.argv[2]).read().split("\n")
listing = {int(l.split()[0]): l for l in lines if re.match(r"^ *\d+ -?\d+\.\d{6} ", l)}
bad = []
def display(name):
    t, _, op = name.partition("_")
    return t + " " + " ".join(w if w == "RDMA" else w.capitalize() for w in op.split("_"))
roce = [r for r in truth if "opcode" in r]
first = truth[0]["time"]
for r in truth:
    f = r["frame"]
    line = listing.get(f)
    if "other" in r:
        if line is not None: bad.append(f"frame {f} ({r['other']}) listed: {line}")
        continue
    if line is None:
        bad.append(f"frame {f} missing"); continue
    if r.get("malformed"):
        if "malformed: truncated" not in line: bad.append(f"frame {f}: {line}")
        continue
    want = [f"{r['src']} → {r['dst']} {display(r['opcode_name'])} QP=0x{r['dest_qp']:06x} PSN={r['psn']}",
            "ICRC ok" if r["icrc_ok"] else "ICRC BAD", f"{r['time'] - first:.6f}"]
    if r["ack_req"]: want.append(" AckReq")
    if "reth" in r:
        e = r["reth"]; want.append(f"RETH(va=0x{e['va']:x} rkey=0x{e['rkey']:08x} len={e['length']})")
    if "aeth" in r:
        s, msn = r["aeth"]["syndrome"], r["aeth"]["msn"]
        kind = {0: f"ACK credits={s & 31}", 1: f"RNR NAK timer={s & 31}", 3: f"NAK code={s & 31}"}[s >> 5 & 3]
        want.append(f"AETH({kind}"); want.append(f"MSN={msn})")
    for w in want:
        if w not in line: bad.append(f"frame {f}: no '{w}' in: {line}")
    if not r["ack_req"] and "AckReq" in line: bad.append(f"frame {f}: AckReq shown: {line}")
# The summary.
text = "\n".join(lines)
n_roce = len(roce)
n_other = sum("other" in r for r in truth)
n_bad = sum(1 for r in roce if not r["icrc_ok"])
n_malformed = sum(1 for r in truth if r.get("malformed"))
def count(kind): return sum(1 for r in roce if "aeth" in r and r["opcode"] == 0x11 and r["aeth"]["syndrome"] >> 5 == kind)
nak = sum(1 for r in roce if "aeth" in r and r["aeth"]["syndrome"] >> 5 == 3)
rnr = sum(1 for r in roce if "aeth" in r and r["aeth"]["syndrome"] >> 5 == 1)
want = [f"{len(truth)} frames: {n_roce} RoCEv2 packets (", f"), {n_other} other, {n_malformed} malformed",
        f"ACKs {count(0)}, NAKs {nak}, RNR NAKs {rnr}", f"ICRC good {n_roce - n_bad}, bad {n_bad}"]
ops = {}
for r in roce: ops[r["opcode_name"]] = ops.get(r["opcode_name"], 0) + 1
want.append("opcodes: " + " ".join(f"{k} {v}" for k, v in sorted(ops.items())))
qps = sorted({r["dest_qp"] for r in roce})
want.append("QPs: " + " ".join(f"0x{q:06x}" for q in qps))
for w in want:
    if w not in text: bad.append(f"summary: no '{w}'")
print(f"{len(truth)} frames, {n_roce} packets, {n_other} other, {n_malformed} malformed, {n_bad} bad ICRC, "
      f"{nak} NAKs, {rnr} RNR NAKs, {len(ops)} opcodes")
for b in bad: print("MISMATCH", b)
sys.exit(1 if bad else 0)
EOF
if [ $? = 0 ]; then pass "text listing and summary match the ground truth: $(cat "$WORK/check")"; else
  fail "text listing against the ground truth:"; cat "$WORK/check"; fi
grep -q 'NAKs [1-9]' <<<"$text" && grep -q 'RNR NAKs [1-9]' <<<"$text" && pass "the capture holds NAKs and RNR NAKs" ||
  fail "the generated capture should hold NAKs and RNR NAKs: $(grep NAKs <<<"$text")"
grep -q 'fd00::' <<<"$text" && pass "IPv6 packets listed" || fail "no IPv6 packet listed"
contains "$text" "UD Send Only" "UD SEND ONLY listed"
contains "$text" "DETH(qkey=0x80010000" "its DETH shown"

# JSON Lines against the ground truth, key by key.
expect_exit 0 "decode --json" -- "$RXERUN" decode --json "$small"
printf '%s\n' "$out" >"$WORK/small.json"
python3 - "$WORK/small.truth" "$WORK/small.json" >"$WORK/check" 2>&1 <<'EOF'
import json, sys
truth = [json.loads(l) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]  # every line must parse
by_frame = {o["frame"]: o for o in got}
bad = []
if [o["frame"] for o in got] != sorted(by_frame): bad.append("frames not in file order or repeated")
want_frames = [r["frame"] for r in truth if "other" not in r]
if sorted(by_frame) != want_frames: bad.append(f"frames {sorted(by_frame)} != {want_frames}")
for r in truth:
    o = by_frame.get(r["frame"])
    if o is None or "other" in r: continue
    if r.get("malformed"):
        if not str(o.get("error", "")).startswith("truncated"): bad.append(f"frame {r['frame']}: {o}")
        continue
    for k, v in r.items():
        if k == "time":
            if not isinstance(o.get(k), float) or abs(o[k] - v) > 1e-6: bad.append(f"frame {r['frame']} time {o.get(k)} != {v}")
        elif o.get(k) != v or type(o.get(k)) != type(v):
            bad.append(f"frame {r['frame']} {k}: {o.get(k)!r} != {v!r}")
    for k in ("reth", "aeth"):
        if k in o and k not in r: bad.append(f"frame {r['frame']}: unexpected {k}")
print(f"{len(got)} lines")
for b in bad[:20]: print("MISMATCH", b)
sys.exit(1 if bad else 0)
EOF
if [ $? = 0 ]; then pass "every --json line parses and matches the ground truth ($(cat "$WORK/check"))"; else
  fail "--json against the ground truth:"; cat "$WORK/check"; fi
lacks "$out" "summary" "no summary line in --json without --summary"

expect_exit 0 "decode --json --summary" -- "$RXERUN" decode --json --summary "$small"
last=$(tail -n 1 <<<"$out")
python3 -c '
import json, sys
s = json.loads(sys.argv[1])["summary"]
sys.exit(0 if s["malformed"] == 1 and s["icrc_bad"] == 1 and s["other"] > 0 and s["packets"] > 50 and s["opcodes"] else 1)
' "$last" && pass "--summary ends with the counts: $last" || fail "--summary's last line: $last"
expect_exit 2 "--summary without --json is a usage error" -- "$RXERUN" decode --summary "$small"

# The same capture as pcapng decodes the same.
expect_exit 0 "convert to pcapng with tshark" -- tshark -F pcapng -r "$small" -w "$WORK/small.pcapng"
expect_exit 0 "decode the pcapng (text)" -- "$RXERUN" decode "$WORK/small.pcapng"
[ "$out" = "$text" ] && pass "pcapng: the same text" || { fail "pcapng text differs:"; diff <(echo "$text") <(echo "$out") | head; }
expect_exit 0 "decode the pcapng (json)" -- "$RXERUN" decode --json "$WORK/small.pcapng"
[ "$out" = "$(cat "$WORK/small.json")" ] && pass "pcapng: the same JSON" ||
  { fail "pcapng JSON differs:"; diff "$WORK/small.json" <(echo "$out") | head; }

# Nanosecond timestamps reach the JSON whole.
expect_exit 0 "generate a nanosecond pcap" -- python3 "$GEN" "$WORK/ns.pcap" --packets 5 --nanoseconds --truth "$WORK/ns.truth"
expect_exit 0 "decode it" -- "$RXERUN" decode --json "$WORK/ns.pcap"
ns_time=$(head -n 1 <<<"$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time"])')
want_time=$(head -n 1 "$WORK/ns.truth" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time"])')
[ "$ns_time" = "$want_time" ] && pass "nanosecond time $ns_time" || fail "time $ns_time, wanted $want_time"
grep -qE '"time":1764806400\.[0-9]{9},' <<<"$out" && pass "time printed with 9 decimals" || fail "time format: $(head -n 1 <<<"$out")"

# tshark's dissector agrees on every packet: the small capture, its pcapng,
# and a larger one with IPv6 and other traffic.
for f in "$small" "$WORK/small.pcapng"; do
  expect_exit 0 "tshark agrees on $(basename "$f")" -- python3 "$CROSS" "$f" "$RXERUN"
  contains "$out" " 0 differences" "crosscheck of $(basename "$f"): $(tail -n 1 <<<"$out")"
done
expect_exit 0 "generate 3000 frames" -- python3 "$GEN" "$WORK/large.pcap" --packets 3000 --seed 11 --ipv6 0.3 --other 0.05 \
  --bad-icrc 10,20,30 --truth "$WORK/large.truth"
expect_exit 0 "tshark agrees on 3000 frames" -- python3 "$CROSS" "$WORK/large.pcap" "$RXERUN"
echo "  $(tail -n 1 <<<"$out")"
# Every ICRC the generator computed is good to rxerun, except the 3 broken ones.
expect_exit 0 "decode --json --summary the 3000" -- "$RXERUN" decode --json --summary "$WORK/large.pcap"
python3 -c '
import json, sys
lines = sys.stdin.read().split("\n")
s = json.loads([l for l in lines if l][-1])["summary"]
bad = sorted(json.loads(l)["frame"] for l in lines if l and "icrc_ok" in l and not json.loads(l)["icrc_ok"])
truth = [json.loads(l) for l in open(sys.argv[1])]
print(s["icrc_good"], s["icrc_bad"], bad)
sys.exit(0 if bad == [10, 20, 30] and s["icrc_good"] == sum(1 for r in truth if r.get("icrc_ok")) else 1)
' "$WORK/large.truth" <<<"$out" >"$WORK/check" && pass "ICRC: all good but frames 10, 20, 30 ($(cat "$WORK/check"))" ||
  fail "ICRC verdicts: $(cat "$WORK/check")"

# Errors.
expect_exit 2 "a missing file" -- "$RXERUN" decode "$WORK/missing.pcap"
contains "$err" "rxerun: decode $WORK/missing.pcap: No such file or directory" "missing file: clear message"
echo "this is not a capture file" >"$WORK/notes.txt"
expect_exit 2 "a text file" -- "$RXERUN" decode "$WORK/notes.txt"
contains "$err" "rxerun: decode $WORK/notes.txt: " "not a capture: message names the file"
contains "$err" "format" "not a capture: libpcap's words ($err)"
: >"$WORK/empty.pcap"
expect_exit 2 "an empty file" -- "$RXERUN" decode "$WORK/empty.pcap"
contains "$err" "rxerun: decode $WORK/empty.pcap: " "empty file: message ($err)"
expect_exit 2 "a directory" -- "$RXERUN" decode "$WORK"
head -c 24 "$small" >"$WORK/header-only.pcap"
expect_exit 0 "a capture with no frame" -- "$RXERUN" decode "$WORK/header-only.pcap"
contains "$out" "0 frames: 0 RoCEv2 packets (0 bytes), 0 other, 0 malformed" "no frame: zero counts"
# Cut in the middle of the 4th frame: the three before are decoded, exit 1.
cut=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(); at = 24
for _ in range(3): at += 16 + struct.unpack("<I", d[at + 8:at + 12])[0]
print(at + 16 + 10)' "$small")
head -c "$cut" "$small" >"$WORK/cut.pcap"
expect_exit 1 "a capture cut in the middle of frame 4" -- "$RXERUN" decode "$WORK/cut.pcap"
contains "$err" "rxerun: decode $WORK/cut.pcap: after frame 3: truncated" "cut: says where ($err)"
contains "$out" "3 frames:" "cut: the 3 whole frames counted"
expect_exit 1 "--json of the cut capture" -- "$RXERUN" decode --json "$WORK/cut.pcap"
[ "$(grep -c '"frame"' <<<"$out")" -le 3 ] && [ "$(grep -c '"frame"' <<<"$out")" -ge 1 ] && pass "cut: JSON of the whole frames" ||
  fail "cut: JSON lines: $out"
# Link type 105 (802.11): not one decode reads.
python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 105))' >"$WORK/wifi.pcap"
expect_exit 2 "an 802.11 capture" -- "$RXERUN" decode "$WORK/wifi.pcap"
contains "$err" "link type 105 is not one decode reads" "unsupported link type: message"
expect_exit 2 "decode without a file" -- "$RXERUN" decode
# `decode` is a command, not a scenario of an implicit run.
expect_exit 2 "decode of a .yaml name is still decode" -- "$RXERUN" decode "$WORK/x.yaml"
contains "$err" "rxerun: decode $WORK/x.yaml" "not taken for rxerun run"
expect_exit 0 "decode --help" -- "$RXERUN" decode --help
contains "$out" "--json" "decode --help shows --json"
finish
