"""How SymbolicAI's `LLMDataModel` describes itself in text: its schema digest, its LLM instructions, an example
value and an instance's `str()`. Written from the released package's output (symbolicai 2.2.0), not its code.

    [[Schema]]                                  <- simplified_schema(Model)
    - "name" (string, required)
    - "address" (nested object (Address), required)
      - Nested fields:
      - "street" (string, required)

    [[Definitions]]
    - Person:
      - "name": The person's full name.

`instructions(Model)` is a `[[Result]]` line, that schema and an `[[Example]]` block of JSON; `example(Model)` the
example value; `as_text(instance)` the indented `key: value` text (a `[[Header]]` line first when the instance has a
`section_header`). The engine's own requests do not use these (docs/runtime.md): they are for code written for SymbolicAI.
"""

from __future__ import annotations

import json
import types
import typing
from enum import Enum
from typing import Any

from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

HEADER = "section_header"  # SymbolicAI's field for the `[[...]]` line of str(); never part of a schema or an example
MAX_DEPTH = 50
NO_DESCRIPTION = "No definition provided. Focus on the [[Schema]] and the prompt to infer the expected structure and constraints."
DESCRIPTION_WORDS = ("represents", "should", "Always use", "This is", "This represents")


# ------------------------------------------------------------------------------------------------ the schema digest


def simplified_schema(model: type[BaseModel]) -> str:
    """`[[Schema]]` (each field: its type, required or optional) then `[[Definitions]]` (descriptions, examples)."""
    schema = model.model_json_schema()
    defs = schema.get("$defs", schema.get("definitions", {}))
    props = _properties(schema, defs)
    text = "[[Schema]]\n" + _field_lines(props, set(schema.get("required", [])), defs, 0, frozenset())
    definitions = _definitions(schema, props, defs)
    return f"{text}\n\n[[Definitions]]\n{definitions}" if definitions else text


def _properties(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema.get("properties"), dict):
        return dict(schema["properties"])
    if "$ref" in schema:
        return dict(defs.get(_ref_name(schema["$ref"]), {}).get("properties", {}))
    merged: dict[str, Any] = {}
    for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        merged.update(defs.get(_ref_name(part["$ref"]), {}).get("properties", {}) if "$ref" in part else part.get("properties", {}))
    return merged


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _field_lines(props: dict[str, Any], required: set[str], defs: dict[str, Any], level: int, seen: frozenset[str]) -> str:
    lines = []
    pad = "  " * level
    for name, prop in props.items():
        if name == HEADER:
            continue
        kind = type_text(prop, defs)
        const = f' [const: "{prop["const_value"]}"]' if "const_value" in prop else ""
        line = f'{pad}- "{name}" ({kind}, {"required" if name in required else "optional"}){const}'
        ref = ""
        if kind.startswith("nested object"):
            ref = _ref_name(prop.get("$ref", ""))
        elif kind.startswith("array of nested object"):
            ref = _ref_name(prop.get("items", {}).get("$ref", ""))
        if ref in defs and ref not in seen:
            nested = _field_lines(defs[ref].get("properties", {}), set(defs[ref].get("required", [])), defs, level + 1, seen | {ref})
            if nested:
                line += f"\n{pad}  - Nested fields:\n{nested}"
        lines.append(line)
    return "\n".join(lines)


def type_text(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    """A JSON Schema property in SymbolicAI's words: `string`, `array of integer`, `nested object (Address)`, `x or null`."""
    if "allOf" in prop:
        parts = prop["allOf"] if isinstance(prop["allOf"], list) else []
        if len(parts) == 1 and "$ref" in parts[0]:
            name = _ref_name(parts[0]["$ref"])
            target = defs.get(name)
            return _enum_text(target["enum"]) if isinstance(target, dict) and "enum" in target else f"nested object ({name})"
        return "object" if parts else "unknown"
    if "enum" in prop:
        return _enum_text(prop["enum"])
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " or ".join(type_text(p, defs) for p in prop[key])
    if "type" in prop:
        kind = prop["type"]
        if kind == "array":
            items = prop.get("items", {})
            if prop.get("uniqueItems") is True:
                return f"set of {type_text(items, defs)}"
            if "prefixItems" in prop:
                return f"tuple of ({', '.join(type_text(p, defs) for p in prop['prefixItems'])})"
            return f"array of {type_text(items, defs)}"
        if kind == "object" and "additionalProperties" in prop:
            extra = prop["additionalProperties"]
            return "object" if extra is True else f"object of {type_text(extra, defs)}"
        return str(kind)
    if "$ref" in prop:
        return f"nested object ({_ref_name(prop['$ref'])})"
    return "unknown"


def _enum_text(values: list[Any]) -> str:
    return "enum (" + ", ".join(repr(v) for v in values) + ")"


def _definitions(schema: dict[str, Any], props: dict[str, Any], defs: dict[str, Any]) -> str:
    lines: list[str] = []
    if props:
        lines.append(f"- {schema.get('title', 'Root')}:")
        lines.extend(_described(props))
    for name, definition in defs.items():
        lines.append(f"- {name}:")
        if "enum" in definition:
            lines.append("  Enum values: " + ", ".join(repr(v) for v in definition["enum"]))
        else:
            lines.extend(_described(definition.get("properties", {})))
    return "\n".join(lines)


def _described(props: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for name, prop in props.items():
        if name == HEADER:
            continue
        const = f' (const value: "{prop["const_value"]}")' if "const_value" in prop else ""
        description = prop.get("description")
        out.append(f'  - "{name}": {description}{const}' if description else f'  - "{name}": {NO_DESCRIPTION}')
        shown = prop.get("examples", prop.get("example"))
        if isinstance(shown, (list, tuple)):
            if shown:
                out.append("    - Examples:")
                out.extend(f"      - {_shown(v)}" for v in shown)
        elif shown is not None:
            out.append(f"    - Example: {_shown(shown)}")
    return out


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


# ------------------------------------------------------------------------------------------------ examples


def example(model: type[BaseModel], seen: set[str] | None = None) -> dict[str, Any]:
    """An example value of the model, as `generate_example_json` gives it: defaults where the fields have them."""
    seen = set() if seen is None else seen
    return {name: _field_example(field, seen) for name, field in model.model_fields.items() if name != HEADER}


def _field_example(field: FieldInfo, seen: set[str]) -> Any:
    extra = field.json_schema_extra
    if isinstance(extra, dict) and "const_value" in extra:
        return extra["const_value"]
    if not field.is_required() and field.default_factory is None:
        default = field.default
        wordy = isinstance(default, str) and (
            (field.description and default.strip() == field.description.strip()) or len(default) >= 30
            or any(w in default for w in DESCRIPTION_WORDS))
        # a default that reads like a description is not shown as the value (SymbolicAI's heuristic)
        return "example_string" if wordy and field.annotation in (str, Any, None) else default
    if field.default_factory is not None:
        made = field.default_factory()  # type: ignore[call-arg]
        if isinstance(made, (list, dict, set, tuple)) and not made:
            return value_for(field.annotation, seen, non_null=False)
        return made
    return value_for(field.annotation, seen, non_null=False)


def non_null_example(model: type[BaseModel], seen: set[str] | None = None) -> dict[str, Any]:
    """An example with every optional field filled (the instructions' example): defaults are not used."""
    seen = set() if seen is None else seen
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if name == HEADER:
            continue
        extra = field.json_schema_extra
        if isinstance(extra, dict) and "const_value" in extra:
            out[name] = extra["const_value"]
            continue
        out[name] = value_for(field.annotation, seen, non_null=True)
    return out


def value_for(annotation: Any, seen: set[str], *, non_null: bool) -> Any:
    """An example value of a type; `seen`: the model names already expanded at this level (a repeat is `{}`)."""
    origin = typing.get_origin(annotation) or annotation
    args = typing.get_args(annotation)
    if isinstance(origin, type) and issubclass(origin, Enum):
        first = next(iter(origin), None)
        return first.value if first is not None else "enum_value"
    if origin is typing.Literal:
        return args[0] if args else None
    if isinstance(origin, type) and issubclass(origin, BaseModel):
        if annotation.__name__ in seen:
            return {}
        seen.add(annotation.__name__)
        return non_null_example(annotation, set(seen)) if non_null else example(annotation, set(seen))
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        return value_for(members[0], seen, non_null=non_null) if members else None
    if origin in (list, set, frozenset):
        return [value_for(args[0] if args else Any, seen, non_null=non_null)]
    if origin is dict:
        key, value = args if args else (Any, Any)
        return {_key_for(key, seen): value_for(value, seen, non_null=non_null)}
    if origin is tuple:
        return tuple(value_for(a, seen, non_null=non_null) for a in args) if args else ("item1", "item2")
    return {str: "example_string", int: 123, float: 123.45, bool: True}.get(annotation, None if annotation in (None, type(None))
                                                                           else "example_value")


def _key_for(key: Any, seen: set[str]) -> Any:
    if key in (int, float, bool):
        return {int: 123, float: 123.45, bool: True}[key]
    origin = typing.get_origin(key) or key
    if origin is tuple:
        return tuple(value_for(a, seen, non_null=True) for a in (typing.get_args(key) or (str, int)))
    if origin is frozenset:
        return frozenset([value_for((typing.get_args(key) or (str,))[0], seen, non_null=True)])
    return "example_string"


def instructions(model: type[BaseModel]) -> str:
    """`[[Result]]`, the schema digest and `[[Example]]` block(s): what SymbolicAI tells a model to answer."""
    fields = {n: f for n, f in model.model_fields.items() if n != HEADER}
    if len(fields) == 1:
        (name, field), = fields.items()
        members = ([a for a in typing.get_args(field.annotation) if a is not type(None)]
                   if typing.get_origin(field.annotation) in (typing.Union, types.UnionType) else [field.annotation])
        if name == "value":  # a value model: one example per member of a union, each a whole object
            shown = [_json(example(create_model("Value", value=(m, ...)))) for m in members]  # type: ignore[arg-type]
        else:
            shown = [_json({name: value_for(m, set(), non_null=False)}) for m in members]
    else:
        shown = [_json(non_null_example(model))]
    if len(shown) == 1:
        blocks = f"[[Example]]\n```json\n{shown[0]}\n```"
    else:
        blocks = "\n\n".join(f"[[Example {i}]]\n```json\n{s}\n```" for i, s in enumerate(shown, 1))
    return f"\n[[Result]]\nReturn a JSON object with the following schema:\n\n{simplified_schema(model)}\n\n{blocks}\n"


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, default=str)


# ------------------------------------------------------------------------------------------------ str(instance)


def as_text(instance: BaseModel, indent: int = 0, seen: set[int] | None = None, depth: int = 0) -> str:
    """An instance as SymbolicAI's `str()`: `key: value` lines indented by two, nested values further in."""
    seen = set() if seen is None else seen
    lines = [_entry(name, getattr(instance, name), indent + 2, seen, depth)
             for name, field in type(instance).model_fields.items() if not field.exclude and name != HEADER]
    body = "\n".join(lines) + "\n" if lines else ""
    header = getattr(instance, HEADER, None)
    return f"{' ' * indent}[[{header}]]\n{body}" if header and indent == 0 else body


def _entry(key: str, value: Any, indent: int, seen: set[int], depth: int) -> str:
    pad = " " * indent
    if value is None:
        return f"{pad}{key}: None"
    if isinstance(value, Enum):
        return f"{pad}{key}: {value.value}"
    if _is_llm_model(value):  # an LLMDataModel: nested text
        if id(value) in seen:
            return f"{pad}{key}: <circular reference>"
        if depth >= MAX_DEPTH:
            return f"{pad}{key}: <max depth reached>"
        seen.add(id(value))
        nested = as_text(value, indent, seen, depth + 1).strip()
        seen.discard(id(value))
        return f"{pad}{key}:\n{pad}  {nested}"
    if isinstance(value, list):
        return f"{pad}{key}:\n" + "\n".join(_item(v, indent, seen, depth) for v in value) if value else f"{pad}{key}:\n"
    if isinstance(value, dict):
        if not value:
            return f"{pad}{key}:\n"
        if depth >= MAX_DEPTH:
            return f"{pad}{key}: <max depth reached>"
        if id(value) in seen:
            return f"{pad}{key}: <circular reference>"
        seen.add(id(value))
        items = [_entry(str(k), v, indent + 2, seen, depth + 1) if isinstance(v, (dict, list)) or _is_llm_model(v)
                 else f"{pad}  {k}: {v}" for k, v in value.items()]
        seen.discard(id(value))
        return f"{pad}{key}:\n" + "\n".join(items) if key else "\n".join(items)
    return f"{pad}{key}: {value}"


def _item(value: Any, indent: int, seen: set[int], depth: int) -> str:
    pad = " " * indent
    if isinstance(value, (dict, list)):
        return f"{pad}  - :\n{pad}    " + _entry("", value, indent + 2, seen, depth + 1).strip()
    if _is_llm_model(value):
        if id(value) in seen:
            return f"{pad}  - : <circular reference>"
        seen.add(id(value))
        text = as_text(value, indent + 2, seen, depth + 1).strip()
        seen.discard(id(value))
        return f"{pad}  - : {text}" if text else f"{pad}  - :"
    return f"{pad}  - : {value}" if value != "" else f"{pad}  - :"


def _is_llm_model(value: Any) -> bool:
    return isinstance(value, BaseModel) and HEADER in type(value).model_fields
