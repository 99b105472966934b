"""The JSON Schema and rxerun's loader agree: schema_agreement.py SCHEMA
VERDICTS EXCEPTIONS. VERDICTS holds a line `valid PATH` or `invalid PATH`
per file, the loader's verdict (`rxerun validate PATH`); each file is
checked against SCHEMA (python3-jsonschema, Draft 7, the file read as the
loader reads it: scenario_yaml.py), and must get the same verdict, except
the files EXCEPTIONS names (`NAME REASON`, NAME a path's tail): rules the
loader keeps and a schema cannot say, where the loader rejects a file the
schema accepts. An exception that no longer holds is an error too, so that
the list stays exact. Exits 1 on any disagreement."""
import json
import sys

import jsonschema
import yaml

import scenario_yaml

schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
exceptions = {}
for line in open(sys.argv[3]):
    line = line.strip()
    if line and not line.startswith("#"):
        name, reason = line.split(maxsplit=1)
        exceptions[name] = reason
used = set()
bad = checked = 0
for line in open(sys.argv[2]):
    verdict, path = line.rstrip("\n").split(" ", 1)
    loader_valid = verdict == "valid"
    try:
        errors = [e.message for e in validator.iter_errors(scenario_yaml.load(path))]
    except (yaml.YAMLError, UnicodeDecodeError, ValueError, RecursionError) as e:
        errors = [f"unreadable: {str(e).splitlines()[0]}"]
    schema_valid = not errors
    checked += 1
    excepted = [name for name in exceptions if path.endswith("/" + name)]
    if excepted:
        used.update(excepted)
        if loader_valid or not schema_valid:
            bad += 1
            print(f"{path}: listed as an exception ({exceptions[excepted[0]]}), but the loader and the schema agree")
        continue
    if loader_valid and not schema_valid:
        bad += 1
        print(f"{path}: the loader accepts it, the schema does not: {errors[0]}")
    elif schema_valid and not loader_valid:
        bad += 1
        print(f"{path}: the schema accepts it, the loader does not")
for name in sorted(set(exceptions) - used):
    bad += 1
    print(f"{name}: listed as an exception, but no such file was checked")
print(f"schema_agreement: {checked} files, {len(used)} known exceptions, {bad} disagreements")
sys.exit(1 if bad else 0)
