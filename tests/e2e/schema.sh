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

cat >"$WORK/check.py" <<'PYEOF'
import json, sys, yaml, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
want_valid = sys.argv[2] == "valid"
bad = 0
for path in sys.argv[3:]:
    doc = yaml.safe_load(open(path))
    errors = list(validator.iter_errors(doc))
    if want_valid and errors:
        bad += 1
        print(f"{path}: {errors[0].message}")
    if not want_valid and not errors:
        bad += 1
        print(f"{path}: accepted, but it is broken")
sys.exit(1 if bad else 0)
PYEOF
expect_exit 0 "every shipped scenario validates against the schema" -- $PY "$WORK/check.py" schemas/scenario.schema.json valid scenarios/*.yaml tests/data/e2e/*.yaml tests/data/vm/*.yaml
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
expect_exit 0 "the schema rejects broken scenarios" -- $PY "$WORK/check.py" schemas/scenario.schema.json invalid "$WORK"/unknown-key.yaml "$WORK"/bad-duration.yaml "$WORK"/no-kind.yaml "$WORK"/bad-mtu.yaml
finish
