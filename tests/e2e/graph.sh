# rxerun graph: the SVG of shipped scenarios is well-formed XML, names every
# element of the lab (each namespace, interface, address, wire, RDMA device
# and fault, by its id and in its text), a real SVG renderer (librsvg's
# rsvg-convert) draws it, -o writes the same bytes atomically; a broken
# scenario is reported as FILE:LINE:COL with exit 2 and writes no file.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

if ! command -v rsvg-convert >/dev/null; then
  echo "rsvg-convert not installed (librsvg2-bin, scripts/setup): cannot check that the SVG renders"
  exit 77
fi

# svg_check SVG ID... -- TEXT...: well-formed XML; each ID is an element's
# id (and the <title> of a node or an edge: its name); each TEXT is in the
# drawn text.
cat >"$WORK/svg_check.py" <<'PYEOF'
import sys
import xml.etree.ElementTree as ET

path, rest = sys.argv[1], sys.argv[2:]
sep = rest.index("--")
ids, texts = rest[:sep], rest[sep + 1:]
try:
    root = ET.parse(path).getroot()
except ET.ParseError as e:
    print(f"not well-formed XML: {e}")
    sys.exit(1)
ns = "{http://www.w3.org/2000/svg}"
if root.tag != ns + "svg":
    print(f"root element is {root.tag}, not svg")
    sys.exit(1)
found_ids = {el.get("id") for el in root.iter() if el.get("id")}
titles = {el.text for el in root.iter(ns + "title") if el.text}
drawn = [el.text or "" for el in root.iter(ns + "text")]
bad = 0
for i in ids:
    if i not in found_ids:
        print(f"no element with id {i!r}")
        bad += 1
    elif "--" not in i and i not in titles and "cluster_" + i not in titles:
        print(f"no <title> {i!r}")
        bad += 1
for t in texts:
    if not any(t in d for d in drawn):
        print(f"no text {t!r}; texts: {drawn}")
        bad += 1
sys.exit(1 if bad else 0)
PYEOF

# png_size PNG: "WIDTH HEIGHT" from its IHDR.
png_size() {
  $PY -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n"; print(*struct.unpack(">II", d[16:24]))' "$1"
}

# graph_case NAME SCENARIO IDS... -- TEXTS...
graph_case() {
  local name=$1 scenario=$2
  shift 2
  expect_exit 0 "$name: rxerun graph" -- "$RXERUN" graph "$scenario"
  [ -z "$err" ] || fail "$name: graph wrote to stderr: $err"
  cp "$WORK/out" "$WORK/$name.svg"
  if $PY "$WORK/svg_check.py" "$WORK/$name.svg" "$@" >"$WORK/check" 2>&1; then
    pass "$name: well-formed SVG naming every element"
  else
    fail "$name: $(cat "$WORK/check")"
  fi
  if rsvg-convert -o "$WORK/$name.png" "$WORK/$name.svg" 2>"$WORK/rsvg-err"; then
    pass "$name: rsvg-convert renders it"
    local size w h
    size=$(png_size "$WORK/$name.png")
    read -r w h <<<"$size"
    if [ "${w:-0}" -ge 100 ] && [ "${h:-0}" -ge 50 ] && [ "$w" -le 5000 ] && [ "$h" -le 5000 ]; then
      pass "$name: the PNG is ${w}x${h}"
    else
      fail "$name: the PNG's size is '$size'"
    fi
  else
    fail "$name: rsvg-convert failed: $(cat "$WORK/rsvg-err")"
  fi
  expect_exit 0 "$name: rxerun graph -o FILE" -- "$RXERUN" graph "$scenario" -o "$WORK/$name-o.svg"
  [ -z "$out" ] || fail "$name: -o still wrote to stdout"
  if cmp -s "$WORK/$name.svg" "$WORK/$name-o.svg"; then pass "$name: -o writes the same bytes"; else
    fail "$name: -o wrote other bytes than stdout"
  fi
  local leftovers
  leftovers=$(find "$WORK" -maxdepth 1 -name "$name-o.svg.rxerun-*")
  [ -z "$leftovers" ] || fail "$name: temporary files left: $leftovers"
}

graph_case veth-pair scenarios/veth-pair.yaml \
  host host/vA host/vB veth/host/vA--host/vB rdma/rxe0 rdma/rxe1 rdma/rxe0--host/vA rdma/rxe1--host/vB -- \
  host vA vB 10.10.0.1/24 10.10.0.2/24 rxe0 rxe1 veth

graph_case netns-faults scenarios/netns-faults.yaml \
  netns/rxf-a netns/rxf-b netns/rxf-a/vA netns/rxf-b/vB veth/netns/rxf-a/vA--netns/rxf-b/vB block/no-icmp -- \
  "netns rxf-a" "netns rxf-b" vA vB 10.10.0.1/24 10.10.0.2/24 "block no-icmp" icmp "hook input: drop" "until step lift"
# Nothing of netns-faults lives in rxerun's own namespace: not drawn.
lacks "$(cat "$WORK/netns-faults.svg")" 'id="host"' "netns-faults: no empty host cluster"

graph_case netns-pair scenarios/netns-pair.yaml \
  host netns/rxn-lab host/vB netns/rxn-lab/vA veth/host/vB--netns/rxn-lab/vA rdma/rxe0 rdma/rxe1 \
  rdma/rxe0--netns/rxn-lab/vA rdma/rxe1--host/vB -- \
  "netns rxn-lab" vA vB 10.12.0.1/24 10.12.0.2/24 rxe0 rxe1

graph_case netem-loss scenarios/netem-loss.yaml \
  netns/rxl-a netns/rxl-b rdma/rxe0 rdma/rxe1 netem/lossy netem/lossy--netns/rxl-b/vB -- \
  "netem lossy" "loss 5%" egress "until step lift"

graph_case capture-write scenarios/capture-write.yaml \
  netns/rxc-lab host/vB capture/wire capture/wire--host/vB -- "capture wire" "udp port 4791" "until step seen"

# Two nodes (lab VMs): each a cluster with its kernel, its namespaces and
# interfaces inside it, the wire between their NICs labelled with the MACs.
graph_case two-nodes tests/data/e2e/two-nodes.yaml \
  node/a node/b node/a/host node/b/host node/b/netns/lab node/a/host/eth1 node/b/host/eth1 node/b/host/vA \
  node/b/netns/lab/vB node/a/rdma/rxe0 node/b/rdma/rxe0 wire/a/eth1--b/eth1 \
  veth/node/b/host/vA--node/b/netns/lab/vB node/a/rdma/rxe0--node/a/host/eth1 -- \
  "kernel 6.1" "kernel 7.3" eth1 10.70.0.1/24 10.70.0.2/24 "netns lab" rxe0 wire 52:54:00:0a:01:01 52:54:00:0a:01:02 \
  "its initial namespace"
svg=$(cat "$WORK/two-nodes.svg")
lacks "$svg" 'id="host"' "two-nodes: no machine outside the nodes"
# The nodes' clusters hold their namespaces: each opens before them.
if $PY - "$WORK/two-nodes.svg" <<'PYEOF'; then pass "two-nodes: each namespace is inside its node"; else fail "two-nodes: a namespace is outside its node"; fi
import sys
s = open(sys.argv[1]).read()
pos = lambda i: s.index('id="' + i + '"')
assert pos("node/a") < pos("node/a/host")
assert pos("node/b") < pos("node/b/host") and pos("node/b") < pos("node/b/netns/lab")
PYEOF

# --var wins over the scenario's vars, as for validate.
expect_exit 0 "graph --var" -- "$RXERUN" graph scenarios/veth-pair.yaml --var a=10.99.0.1
contains "$out" "10.99.0.1/24" "graph --var: the address from --var"
lacks "$out" "10.10.0.1/24" "graph --var: not the scenario's own"

# A plugin's kind (--plugin) is known to the loader and adds nothing; the
# built-in kinds beside it are drawn. Nothing runs: the plugin's file step
# makes no file.
PLUGIN="$(cd "$(dirname "$RXERUN")" && pwd)/test-plugins/test_kinds.so"
if [ -f "$PLUGIN" ]; then
  cat >"$WORK/plugin.yaml" <<YEOF
name: graph-plugin
steps:
  - test_file: {path: $WORK/made-by-plugin}
  - veth: {name: vP, peer: vQ}
YEOF
  expect_exit 0 "graph --plugin" -- "$RXERUN" graph "$WORK/plugin.yaml" --plugin "$PLUGIN"
  contains "$out" 'id="host/vP"' "graph --plugin: the built-in kinds are drawn"
  lacks "$out" "made-by-plugin" "graph --plugin: the plugin's step adds nothing"
  [ ! -e "$WORK/made-by-plugin" ] && pass "graph --plugin: nothing ran" || fail "graph ran the plugin's step"
  expect_exit 2 "graph without the plugin: an unknown kind" -- "$RXERUN" graph "$WORK/plugin.yaml"
else
  fail "no test plugin at $PLUGIN (built with the tests)"
fi

# A broken scenario: FILE:LINE:COL, exit 2, no file written.
cat >"$WORK/bad.yaml" <<'YEOF'
name: bad
steps:
  - veth: {name: vA, peer: vB, colour: red}
YEOF
expect_exit 2 "graph of a broken scenario" -- "$RXERUN" graph "$WORK/bad.yaml" -o "$WORK/bad.svg"
if grep -qE "bad\.yaml:3:[0-9]+: " <<<"$err"; then pass "the error is FILE:LINE:COL"; else
  fail "no FILE:LINE:COL in: $err"
fi
[ -z "$out" ] || fail "a broken scenario printed: $out"
if [ -e "$WORK/bad.svg" ]; then fail "a broken scenario wrote $WORK/bad.svg"; else pass "no file written"; fi
expect_exit 2 "graph of a missing file" -- "$RXERUN" graph "$WORK/missing.yaml"

# -o never writes through a symbolic link (base/files.h).
ln -s "$WORK/target" "$WORK/link.svg"
expect_exit 3 "graph -o a symbolic link" -- "$RXERUN" graph scenarios/veth-pair.yaml -o "$WORK/link.svg"
if [ -e "$WORK/target" ]; then fail "graph wrote through a symbolic link"; else pass "nothing written through the link"; fi
finish
