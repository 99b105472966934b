# The checked-in schema is what `rxerun schema` prints, it is a valid JSON
# Schema, and a real validator (python3-jsonschema) accepts every shipped
# scenario with it, and rejects broken ones (so this test can fail). Then the
# schema and the loader agree over every scenario file of the repository:
# `rxerun validate` accepts a file exactly when the schema does, but for the
# few rules a JSON Schema cannot say, listed below with the reason.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

expect_exit 0 "rxerun schema" -- "$RXERUN" schema
if diff -u schemas/scenario.schema.json "$WORK/out" >"$WORK/diff"; then pass "schema is current"; else
  fail "schemas/scenario.schema.json is stale; regenerate with: build/rxerun schema > schemas/scenario.schema.json"
  head -40 "$WORK/diff"
fi

expect_exit 0 "every shipped scenario validates against the schema" -- $PY "$SRC/tests/tools/schema_check.py" schemas/scenario.schema.json valid scenarios/*.yaml scenarios/topology/*.yaml tests/data/e2e/*.yaml tests/data/vm/*.yaml
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
# --- the schema and the loader agree over every scenario file of the repository
shopt -s nullglob globstar
files=(scenarios/**/*.yaml tests/data/e2e/*.yaml tests/data/vm/*.yaml tests/data/bad/**/*.yaml tests/data/lab/*.yaml tests/vm/**/*.yaml
  examples/**/*.yaml bench/data/*.yaml)
shopt -u nullglob globstar
: >"$WORK/verdicts"
for f in "${files[@]}"; do
  "$RXERUN" validate "$f" >/dev/null 2>&1 </dev/null
  case $? in
    0) echo "valid $SRC/$f" >>"$WORK/verdicts" ;;
    2) echo "invalid $SRC/$f" >>"$WORK/verdicts" ;;
    *) fail "rxerun validate $f: neither valid (0) nor invalid (2)" ;;
  esac
done
# NAME REASON: the loader rejects NAME, the schema cannot (a rule that spans
# values, or a YAML reading rule); the test fails when one of them agrees.
cat >"$WORK/exceptions" <<'XEOF'
tests/data/bad/fact_of_later_step.yaml   {{steps.NAME.FACT}} must name an earlier step: an order among the steps
tests/data/bad/duplicate_step_name.yaml  step names are unique across the list: JSON Schema compares no values of different items
tests/data/bad/bad_matcher.yaml          a matcher's operand must fit its operator ('>= lots'): the text of a string against its own prefix
tests/data/bad/bad_regex.yaml            a matcher's pattern must compile as PCRE2: no schema validator compiles it
tests/data/bad/include_missing.yaml      an included file must exist: a schema sees one document
tests/data/bad/include_cycle.yaml        includes must not loop: a schema sees one document
tests/data/bad/include_bad_step.yaml     the error is in the included file, which a schema does not open
tests/data/bad/node_missing.yaml         a step's node must be one of nodes: a reference to another key's value
tests/data/bad/node_unknown.yaml         a step's node must be one of nodes: a reference to another key's value
tests/data/bad/revert_later_step.yaml    a revert names an earlier step: an order among the steps
tests/data/bad/revert_unknown_step.yaml  a revert names a step of the scenario: a reference to another step
tests/data/bad/undefined_variable.yaml   an undefined {{variable}}: which names are defined is known across keys only
tests/data/bad/unknown_fact.yaml         an expectation names a fact its step's kind reports: the kind is another key of the step
tests/data/bad/unknown_fact_of_revert.yaml a revert's facts are the reverted step's: a reference to another step
tests/data/bad/literal_unterminated.yaml the inside of a {{ ... }}: the template pattern looks for braces, not their content
XEOF
# The planted mistakes of the lab as a whole (tests/e2e/lab_check.sh): each is
# a relation between steps (what they make, use, revert, wait for, report)
# or a kind's own rule on a value (KindSpec::validate), which the schema
# does not carry.
for f in tests/data/lab/*.yaml; do
  echo "$f the lab as a whole, or a kind's own rule on a value" >>"$WORK/exceptions"
done
expect_exit 0 "the schema accepts a scenario file exactly when the loader does" -- $PY "$SRC/tests/tools/schema_agreement.py" schemas/scenario.schema.json "$WORK/verdicts" "$WORK/exceptions"
echo "$out" | tail -20

finish
