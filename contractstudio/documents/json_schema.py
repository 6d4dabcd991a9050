"""The JSON Schema of the format (draft-07, what yaml-language-server and other editors understand).

Generated from the same pydantic models the analyzer validates with, so the
editor's completion and the analyzer never disagree about a key.
"""

from __future__ import annotations

import json
from typing import Any

from contractstudio.documents.models import KINDS

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def _draft07(node: Any) -> Any:
    """Rewrite pydantic's 2020-12 output into draft-07: $defs -> definitions."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$defs":
                out["definitions"] = _draft07(value)
            elif key == "$ref" and isinstance(value, str):
                out[key] = value.replace("#/$defs/", "#/definitions/")
            else:
                out[key] = _draft07(value)
        return out
    if isinstance(node, list):
        return [_draft07(v) for v in node]
    return node


def kind_schema(kind: str) -> dict[str, Any]:
    """The schema of one document kind."""
    schema = KINDS[kind].model_json_schema(by_alias=True, mode="validation")
    schema = _draft07(schema)
    schema["$schema"] = DRAFT_07
    schema["$id"] = f"https://contractstudio.invalid/schema/{kind}.json"
    return schema


def full_schema() -> dict[str, Any]:
    """Every kind in one schema, chosen by the document's `kind:`."""
    definitions: dict[str, Any] = {}
    options = []
    for kind in KINDS:
        one = kind_schema(kind)
        definitions.update(one.pop("definitions", {}))
        one.pop("$schema", None)
        one.pop("$id", None)
        title = one.get("title", kind)
        definitions[title] = one
        options.append({"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": {"$ref": f"#/definitions/{title}"}})
    return {
        "$schema": DRAFT_07,
        "$id": "https://contractstudio.invalid/schema/contractstudio.json",
        "title": "ContractStudio document",
        "description": "A contract, agent, pipeline or tools document (see docs/format.md).",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": list(KINDS), "description": "The document kind."}},
        "allOf": options,
        "definitions": definitions,
    }


def schema_json(kind: str | None = None) -> str:
    """The schema as pretty JSON text."""
    return json.dumps(kind_schema(kind) if kind else full_schema(), indent=2, sort_keys=False)
