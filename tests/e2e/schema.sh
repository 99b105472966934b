# The checked-in schema is what `rxerun schema` prints, it is a valid JSON
# Schema, and a real validator (python3-jsonschema) accepts every shipped
# scenario with it, and rejects broken ones (so this test can fail).
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

expect_exit 0 "rxerun schema" -- "$RXERUN" schema
if diff -u schemas/scenario.schema.json "$WORK/out" >"$WORK/diff"; then pass "schema is current"; else
  fail "schemas/scenario.schema.json is stale; regenerate with: build/rxerun schema > schemas/scenario.schema.json"
  head -40 "$WORK/diff"
fi

expect_exit 0 "every shipped scenario validates against the schema" -- $PY "$SRC/tests/tools/schema_check.py" schemas/scenario.schema.json valid scenarios/*.yaml tests/data/e2e/*.yaml tests/data/vm/*.yaml
cat >"$WORK/unknown-key.yaml" <<'YEOF'
steps:
  - sleep: {duration: 1s}
    colour: red
YEOF
cat >"$WORK/bad-duration.yaml" <<'YEOF'
steps:
  - sleep: {duration: soon}
YEOF
cat >"$WORK/no-kind.yaml" <<'YEOF'
steps:
  - name: lonely
YEOF
cat >"$WORK/bad-mtu.yaml" <<'YEOF'
steps:
  - perftest: {test: write_bw, server: {dev: rxe0}, client: {dev: rxe1, to: 10.0.0.1}, mtu: 1000}
YEOF
cat >"$WORK/wires-without-nodes.yaml" <<'YEOF'
wires:
  - {a: eth1, b: eth1}
steps:
  - sleep: {duration: 1s}
YEOF
cat >"$WORK/nodes-and-matrix.yaml" <<'YEOF'
vm: {kernels: ["6.1", "7.3"]}
nodes: {a: {}, b: {}}
steps:
  - sleep: {duration: 1s}
YEOF
cat >"$WORK/multicast-mac.yaml" <<'YEOF'
nodes: {a: {}, b: {}}
wires:
  - {a: {nic: eth1, mac: "01:00:5e:00:00:01"}, b: eth1}
steps:
  - sleep: {duration: 1s}
YEOF
cat >"$WORK/three-ends.yaml" <<'YEOF'
nodes: {a: {}, b: {}, c: {}}
wires:
  - {a: eth1, b: eth1, c: eth1}
steps:
  - sleep: {duration: 1s}
YEOF
expect_exit 0 "the schema rejects broken scenarios" -- $PY "$SRC/tests/tools/schema_check.py" schemas/scenario.schema.json invalid "$WORK"/unknown-key.yaml "$WORK"/bad-duration.yaml "$WORK"/no-kind.yaml "$WORK"/bad-mtu.yaml "$WORK"/wires-without-nodes.yaml "$WORK"/nodes-and-matrix.yaml "$WORK"/multicast-mac.yaml "$WORK"/three-ends.yaml
finish
