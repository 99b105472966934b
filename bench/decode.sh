#!/usr/bin/env bash
# How fast `rxerun decode` reads a capture against Wireshark's dissector:
# generates a pcap of PACKETS frames (tests/tools/roce_pcap.py: RC writes
# cut at MTU 1024, sends, reads, ACKs with some NAKs, UD, 10% of the
# conversations over IPv6, 2% other traffic) into a temporary directory,
# then times, alternating, `rxerun decode --json F >/dev/null` and
# `rxerun decode F >/dev/null` REPEATS times and tshark printing the same
# fields (-T fields: frame, addresses, opcode, QP, PSN, AckReq, RETH, AETH)
# TSHARK_REPEATS times. Prints each median (and range) in seconds and in
# frames per second, and the ratio rxerun --json / tshark (target >= 20).
# The file is read once before timing, so every run reads from the page cache.
#
# Usage: bench/decode.sh [RXERUN] [PACKETS] [REPEATS] [TSHARK_REPEATS]
#   defaults: build/rxerun, 1000000 frames, 5 repeats, 3 for tshark
# No root needed; needs python3 and tshark.
set -euo pipefail
cd "$(dirname "$0")/.."
RXERUN=$(realpath "${1:-build/rxerun}")
PACKETS=${2:-1000000}
REPEATS=${3:-5}
TSHARK_REPEATS=${4:-3}
command -v tshark >/dev/null || { echo "decode bench: tshark not installed"; exit 77; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
F=$WORK/bench.pcap

start=$(date +%s.%N)
python3 tests/tools/roce_pcap.py "$F" --packets "$PACKETS" --seed 1 --ipv6 0.1 --other 0.02
gen_s=$(echo "$(date +%s.%N) - $start" | bc)
summary=$("$RXERUN" decode --json --summary "$F" | tail -n 1)
cat "$F" >/dev/null

# seconds COMMAND...: the wall time of one run, output discarded.
seconds() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo "scale=4; ($t1 - $t0) / 1000000000" | bc
}
FIELDS=(-e frame.number -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst -e infiniband.bth.opcode
  -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.a -e infiniband.reth.va
  -e infiniband.reth.r_key -e infiniband.reth.dmalen -e infiniband.aeth.syndrome -e infiniband.aeth.msn)
json=() text=() tshark=()
for ((i = 0; i < REPEATS || i < TSHARK_REPEATS; i++)); do
  if ((i < REPEATS)); then
    json+=("$(seconds "$RXERUN" decode --json "$F")")
    text+=("$(seconds "$RXERUN" decode "$F")")
  fi
  if ((i < TSHARK_REPEATS)); then
    tshark+=("$(LC_ALL=C seconds tshark -n -r "$F" -d udp.port==4791,infiniband -T fields "${FIELDS[@]}")")
  fi
done

python3 - "$PACKETS" "$(stat -c %s "$F")" "$summary" "$gen_s" "${json[*]}" "${text[*]}" "${tshark[*]}" \
  "$REPEATS" "$TSHARK_REPEATS" <<'PY'
import json, statistics, sys
frames, size, summary, gen_s = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])["summary"], float(sys.argv[4])
js, tx, ts = ([float(x) for x in a.split()] for a in sys.argv[5:8])
repeats, tshark_repeats = sys.argv[8], sys.argv[9]
print(f"{frames} frames ({summary['packets']} RoCEv2 packets, {summary['other']} other), {size / 1e6:.0f} MB, "
      f"generated in {gen_s:.1f} s; medians of {repeats} runs (tshark: {tshark_repeats})")
def show(name, v):
    m = statistics.median(v)
    print(f"  {name:<22} s median {m:8.3f}  ({min(v):.3f}-{max(v):.3f})  frames/s {frames / m:12,.0f}")
show("rxerun decode --json", js)
show("rxerun decode (text)", tx)
show("tshark -T fields", ts)
ratio = statistics.median(ts) / statistics.median(js)
print(f"  ratio rxerun --json / tshark: {ratio:.1f} (target >= 20: {'met' if ratio >= 20 else 'missed'})")
PY
