"""Checks YAML scenario files against a JSON Schema with a real validator
(python3-jsonschema, Draft 7): schema_check.py SCHEMA valid|invalid FILE...
With `valid`, every file must pass; with `invalid`, every file must be
rejected. Files are read as rxerun reads them (scenario_yaml.py). Prints
each file that does not behave so, and exits 1 then."""
import json
import sys

import jsonschema
import yaml

import scenario_yaml

schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
want_valid = sys.argv[2] == "valid"
bad = 0
for path in sys.argv[3:]:
    try:
        errors = [e.message for e in validator.iter_errors(scenario_yaml.load(path))]
    except (yaml.YAMLError, UnicodeDecodeError, ValueError, RecursionError) as e:
        errors = [f"unreadable: {e}"]
    if want_valid and errors:
        bad += 1
        print(f"{path}: {errors[0]}")
    if not want_valid and not errors:
        bad += 1
        print(f"{path}: accepted, but it is broken")
sys.exit(1 if bad else 0)
