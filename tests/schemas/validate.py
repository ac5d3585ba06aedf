#!/usr/bin/env python3
"""Validate kaicoder --json outputs against the JSON Schemas in schemas/.

    validate.py SCHEMA_DIR OUTPUT.json...

Each OUTPUT.json is one object as a command printed it; it is checked
against schemas/<its "command">.schema.json (references to
urn:kaicoder:schema:common resolve to common.schema.json). Prints one line
per problem and exits 1 when there is any; prints the schemas no output
used, so a caller can insist that every command was covered.

Works with Debian 12's python3-jsonschema (4.10, RefResolver) and with newer
releases (the referencing registry).
"""
import json
import pathlib
import sys

import jsonschema


def load_schemas(folder):
    schemas = {}
    for path in sorted(pathlib.Path(folder).glob("*.schema.json")):
        schema = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        schemas[path.name[: -len(".schema.json")]] = schema
    return schemas


def validator_for(schemas, name):
    by_id = {s["$id"]: s for s in schemas.values()}
    try:
        from referencing import Registry, Resource

        registry = Registry().with_resources((i, Resource.from_contents(s)) for i, s in by_id.items())
        return jsonschema.Draft202012Validator(schemas[name], registry=registry)
    except ImportError:
        resolver = jsonschema.RefResolver.from_schema(schemas[name], store=by_id)
        return jsonschema.Draft202012Validator(schemas[name], resolver=resolver)


def main(argv):
    schemas = load_schemas(argv[1])
    used, problems = set(), 0
    for out in argv[2:]:
        doc = json.loads(pathlib.Path(out).read_text())
        name = doc.get("command") if isinstance(doc, dict) else None
        if name not in schemas or name == "common":
            print(f"{out}: no schema for command {name!r}")
            problems += 1
            continue
        used.add(name)
        for err in validator_for(schemas, name).iter_errors(doc):
            print(f"{out}: {name}: {'/'.join(map(str, err.absolute_path)) or '(top)'}: {err.message}")
            problems += 1
    unused = sorted(set(schemas) - used - {"common"})
    print("unused schemas: " + (" ".join(unused) if unused else "none"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
