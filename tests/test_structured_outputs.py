"""The output type's schema compiled per provider (documents/structured_outputs.py): what is sent, what each clause
relies on, and (property test) that the schema sent plus the after-reply checks accept exactly what the contract's
own type accepts."""

from __future__ import annotations

import json
import os
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from contractstudio.documents.models import TypeDecl
from contractstudio.documents.provider_profiles import Support, choose_mode
from contractstudio.documents.structured_outputs import (
    CompiledSchema,
    compile_schema,
    map_back,
    path_parts,
    profile_for,
)
from contractstudio.documents.types import TypeSystem


def _types(decls: dict[str, dict[str, Any]]) -> TypeSystem:
    return TypeSystem({name: TypeDecl.model_validate(d) for name, d in decls.items()})


ANSWER = {
    "Answer": {"extra": "forbid", "fields": {
        "text": {"type": "str", "min_length": 3, "pattern": "^[A-Z].*$"},
        "score": {"type": "float", "ge": 0, "le": 1},
        "note": {"type": "str", "default": ""},
        "tags": {"type": "list[str]", "max_length": 3},
        "kind": {"type": "Literal['fact', 'guess']"},
    }},
}


def _compiled(decls: dict[str, dict[str, Any]], name: str, model: str, **kw: Any) -> CompiledSchema:
    """The profile's schema transform (a schema asked for: under `auto` a guided route sends none, see choose_mode)."""
    return compile_schema(_types(decls).json_schema(name), model, **({"requested": "json_schema"} | kw))


def _enforcement(compiled: CompiledSchema, path: str, keyword: str) -> str:
    return next(c.enforcement for c in compiled.clauses if c.path == path and c.keyword == keyword)


def _keywords(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        out = set(schema)
        for key, value in schema.items():
            out |= _keywords(list(value.values()) if key in ("properties", "$defs") else value)
        return out
    if isinstance(schema, list):
        return set().union(*(_keywords(v) for v in schema)) if schema else set()
    return set()


def test_openai_strict_is_sent_without_length_bounds_which_are_checked_after_the_reply() -> None:
    c = _compiled(ANSWER, "Answer", "openai/gpt-4o-mini")
    assert (c.mode, c.strict, c.provider) == ("json_schema", True, "openai")
    assert not {"minLength", "maxLength", "default", "title"} & _keywords(c.schema)
    assert _enforcement(c, "/text", "minLength") == "after_reply"
    assert _enforcement(c, "/text", "pattern") == "decoder"
    assert _enforcement(c, "/score", "maximum") == "decoder"
    assert _enforcement(c, "/kind", "enum") == "decoder"
    assert c.schema is not None and c.schema["additionalProperties"] is False
    assert sorted(c.schema["required"]) == sorted(["text", "score", "note", "tags", "kind"])
    assert c.schema["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert c.optional_as_nullable == ("/note",)


def test_a_null_for_an_optional_field_under_openai_strict_becomes_the_contracts_default() -> None:
    c = _compiled(ANSWER, "Answer", "openai/gpt-4o-mini")
    reply = {"text": "Paris", "score": 0.5, "note": None, "tags": [], "kind": "fact"}
    value = _types(ANSWER).model("Answer").model_validate(map_back(reply, c))
    assert value.note == ""  # type: ignore[attr-defined]


def test_anthropic_loses_numeric_and_length_bounds_to_the_after_reply_check() -> None:
    c = _compiled(ANSWER, "Answer", "anthropic/claude-sonnet-4-5")
    assert c.mode == "json_schema" and c.provider == "anthropic"
    assert not {"minimum", "maximum", "minLength", "maxItems"} & _keywords(c.schema)
    assert _enforcement(c, "/score", "minimum") == "after_reply"
    assert "numerical constraints" in next(x.reason for x in c.clauses if x.keyword == "minimum")
    assert _enforcement(c, "/tags", "maxItems") == "after_reply"
    assert c.optional_as_nullable == () and c.schema is not None and "note" not in c.schema["required"]


TREE = {"Node": {"fields": {"label": {"type": "str"}, "children": {"type": "list[Node]", "default": []}}}}


def test_a_recursive_type_falls_back_to_json_mode_under_anthropic_but_not_under_openai() -> None:
    anthropic = _compiled(TREE, "Node", "claude-sonnet-4-5")
    assert (anthropic.mode, anthropic.schema) == ("json_object", None)
    assert anthropic.fallback_reason and "recursive" in anthropic.fallback_reason
    assert _enforcement(anthropic, "/children/*", "$ref") == "not_representable"
    assert _enforcement(anthropic, "", "type") == "decoder"  # JSON mode still makes the reply an object
    assert _enforcement(anthropic, "/label", "type") == "after_reply"
    openai = _compiled(TREE, "Node", "gpt-4o-mini")
    assert openai.mode == "json_schema" and openai.schema is not None and "Node" in openai.schema["$defs"]
    reply = {"label": "a", "children": [{"label": "b", "children": None}, {"label": "c", "children": [
        {"label": "d", "children": None}]}]}
    value = _types(TREE).model("Node").model_validate(map_back(reply, openai))
    assert value.children[1].children[0].children == []  # type: ignore[attr-defined]


def test_nesting_deeper_than_five_objects_is_not_representable_under_openai_strict() -> None:
    decls = {f"L{i}": {"fields": {"next": {"type": f"L{i + 1}"}}} for i in range(6)}
    decls["L6"] = {"fields": {"leaf": {"type": "str"}}}
    c = _compiled(decls, "L0", "openai/gpt-4o-mini")
    assert c.mode == "json_object" and c.schema is None
    assert c.fallback_reason and "at most 5" in c.fallback_reason
    assert _compiled(decls, "L2", "openai/gpt-4o-mini").mode == "json_schema"  # five levels are fine


def test_a_dict_field_cannot_be_sent_under_openai_strict() -> None:
    decls = {"Counts": {"fields": {"by_word": {"type": "dict[str, int]"}}}}
    c = _compiled(decls, "Counts", "openai/gpt-4o-mini")
    assert c.mode == "json_object" and _enforcement(c, "/by_word", "additionalProperties") == "not_representable"
    guided = _compiled(decls, "Counts", "ollama/llama3.1")
    assert guided.mode == "json_schema" and guided.schema is not None
    assert guided.schema["properties"]["by_word"]["additionalProperties"] == {"type": "integer"}


def test_a_dict_of_any_values_is_not_closed_to_an_empty_object_under_strict_modes() -> None:
    decls = {"Turn": {"fields": {"extracted": {"type": "dict[str, any]"}}}}
    for model in ("openai/gpt-4o-mini", "claude-sonnet-4-5"):
        c = _compiled(decls, "Turn", model)
        assert (c.mode, c.schema) == ("json_object", None)
        assert _enforcement(c, "/extracted", "additionalProperties") == "not_representable"
    guided = _compiled(decls, "Turn", "ollama/llama3.1")
    assert guided.schema is not None and guided.schema["properties"]["extracted"]["additionalProperties"] is True


def test_a_pattern_goes_to_the_decoder_only_when_anchored_and_linear() -> None:
    decls = {"P": {"fields": {"a": {"type": "str", "pattern": "^[a-z]+$"}, "b": {"type": "str", "pattern": "[a-z]"},
                              "c": {"type": "str", "pattern": "^(?=x).*$"}}}}
    c = _compiled(decls, "P", "openai/gpt-4o-mini")
    assert [_enforcement(c, f"/{f}", "pattern") for f in "abc"] == ["decoder", "after_reply", "after_reply"]
    assert c.schema is not None and "pattern" not in c.schema["properties"]["b"]


def test_a_list_output_cannot_be_sent_to_openai_strict_and_is_no_json_object_either() -> None:
    c = compile_schema(_types(ANSWER).json_schema("Answer") | {}, "openai/gpt-4o-mini")
    assert c.mode == "json_schema"
    listed = compile_schema({"type": "array", "items": {"type": "string"}}, "openai/gpt-4o-mini")
    assert (listed.mode, listed.schema) == ("off", None) and "object at the top" in (listed.fallback_reason or "")


def test_gemini_gets_references_inlined_and_no_additional_properties() -> None:
    decls = {"Outer": {"extra": "forbid", "fields": {"inner": {"type": "Inner"}}},
             "Inner": {"fields": {"x": {"type": "int", "gt": 0, "le": 9}}}}
    c = _compiled(decls, "Outer", "gemini/gemini-2.5-flash")
    assert c.mode == "json_schema" and c.schema is not None
    assert not {"$ref", "$defs", "additionalProperties", "exclusiveMinimum"} & _keywords(c.schema)
    assert c.schema["properties"]["inner"]["properties"]["x"] == {"type": "integer", "maximum": 9}
    assert _enforcement(c, "", "additionalProperties") == "after_reply"
    assert _enforcement(c, "/inner/x", "exclusiveMinimum") == "after_reply"


@pytest.mark.parametrize(("model", "api_base", "provider"), [
    ("openai/gpt-4o-mini", None, "openai"), ("gpt-4o", None, "openai"), ("o3-mini", None, "openai"),
    ("anthropic/claude-3-5-haiku-latest", None, "anthropic"), ("claude-sonnet-4-5", None, "anthropic"),
    ("gemini/gemini-2.0-flash", None, "gemini"), ("vertex_ai/gemini-1.5-pro", None, "gemini"),
    ("hosted_vllm/qwen", None, "guided"), ("ollama_chat/llama3", None, "guided"), ("ollama/llama3", None, "guided"),
    ("openai/qwen2.5", "http://127.0.0.1:8000/v1", "guided"), ("mistral/mistral-small", None, "none"), (None, None, "none"),
])
def test_the_provider_is_read_from_the_model_string(model: str | None, api_base: str | None, provider: str) -> None:
    assert profile_for(model, api_base).name == provider


def test_what_is_asked_for_decides_the_mode() -> None:
    schema = _types(ANSWER).json_schema("Answer")
    assert compile_schema(schema, "gpt-4o-mini", "off").mode == "off"
    assert compile_schema(schema, "gpt-4o-mini", "json_object").mode == "json_object"
    no_schema = compile_schema(schema, "gpt-4o-mini", choose_mode("auto", "gpt-4o-mini", support=Support(False, True)))
    assert no_schema.mode == "json_object" and no_schema.fallback_reason
    assert compile_schema(schema, "gpt-3.5-turbo").mode == "json_object"
    assert compile_schema(schema, "mistral/mistral-small").mode == "off"
    assert all(c.enforcement == "after_reply" for c in compile_schema(schema, "gpt-4o-mini", "off").clauses)


# ----------------------------------------------------------------- the property


_PATTERNS = ["^[A-Z][a-z]*$", "[a-z]", "^a", "^(?!b).*$", "^[ab]{1,3}$"]
_MODELS = ["openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash", "ollama/llama3.1"]


@st.composite
def _field(draw: Any, names: list[str], depth: int) -> dict[str, Any]:
    """A random field: primitives with bounds and patterns, literals, lists, unions, optionals, nested types."""
    kinds = ["str", "int", "float", "bool", "literal", "union", "list", "dict"] + (["ref"] if names else [])
    kind = draw(st.sampled_from(kinds))
    spec: dict[str, Any] = {}
    if kind == "str":
        spec["type"] = "str"
        if draw(st.booleans()):
            spec["min_length"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            spec["max_length"] = draw(st.integers(1, 4))
        if draw(st.booleans()):
            spec["pattern"] = draw(st.sampled_from(_PATTERNS))
    elif kind in ("int", "float"):
        spec["type"] = kind
        for bound in draw(st.lists(st.sampled_from(["ge", "gt", "le", "lt"]), max_size=2, unique=True)):
            spec[bound] = draw(st.integers(-2, 2)) + (0 if bound in ("ge", "gt") else 3)
    elif kind == "bool":
        spec["type"] = "bool"
    elif kind == "literal":
        spec["type"] = draw(st.sampled_from(["Literal['a', 'b']", "Literal[1, 2]"]))
    elif kind == "union":
        spec["type"] = "str | int"
    elif kind == "list":
        spec["type"] = draw(st.sampled_from(["list[str]", "list[int]"] + [f"list[{n}]" for n in names]))
        if draw(st.booleans()):
            spec["min_length"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            spec["max_length"] = draw(st.integers(1, 3))
    elif kind == "dict":
        spec["type"] = "dict[str, int]"
    else:
        spec["type"] = draw(st.sampled_from(names))
    optional = draw(st.sampled_from(["required", "nullable", "default"]))
    if optional == "nullable":
        spec["type"] = f"{spec['type']} | None"
        spec["default"] = None
    elif optional == "default" and set(spec) == {"type"} and spec["type"] in ("str", "int", "bool", "list[str]"):
        spec["default"] = {"str": "", "int": 0, "bool": False, "list[str]": []}[spec["type"]]
    return spec


@st.composite
def _declarations(draw: Any) -> dict[str, dict[str, Any]]:
    decls: dict[str, dict[str, Any]] = {}
    for i in range(draw(st.integers(1, 3))):  # each type may use the ones declared before it: nesting, no recursion
        names = list(decls)
        fields = {f"f{j}": draw(_field(names, i)) for j in range(draw(st.integers(1, 4)))}
        decls[f"T{i}"] = {"extra": draw(st.sampled_from(["forbid", "ignore"])), "fields": fields}
    return decls


def _json_value(draw: Any, schema: dict[str, Any], defs: dict[str, Any], strict: bool, forbids: Any, path: str = "") -> Any:
    """A JSON value near the contract's schema: mostly of the right shape, often just outside a bound or type."""
    if "$ref" in schema:
        return _json_value(draw, defs[schema["$ref"].rsplit("/", 1)[-1]], defs, strict, forbids, path)
    if "anyOf" in schema:
        return _json_value(draw, draw(st.sampled_from(schema["anyOf"])), defs, strict, forbids, path)
    if draw(st.integers(0, 9)) == 0:  # a value of another JSON kind than the one asked for (none coerces)
        kinds = {"array": [], "object": {}, "string": "x", "number": 2.5, "integer": 2.5, "null": None}
        return draw(st.sampled_from([v for k, v in kinds.items() if k != schema.get("type")]))
    if "enum" in schema or "const" in schema:
        return draw(st.sampled_from([*schema.get("enum", [schema.get("const")]), "c", 3]))
    kind = schema.get("type")
    if kind == "string":
        return draw(st.text(alphabet="aAbZ", max_size=5))  # no newline: `$` before a final newline differs in re
    if kind == "integer":
        return draw(st.integers(-3, 7))
    if kind == "number":
        return draw(st.integers(-3, 7) | st.floats(-3, 7, allow_nan=False))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "null":
        return None
    if kind == "array":
        return [_json_value(draw, schema["items"], defs, strict, forbids, path + "/*") for _ in range(draw(st.integers(0, 4)))]
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return {k: _json_value(draw, schema["additionalProperties"], defs, strict, forbids, path + "/*")
                for k in draw(st.lists(st.sampled_from("pq"), max_size=2, unique=True))}
    out: dict[str, Any] = {}
    for name, sub in schema.get("properties", {}).items():
        required = name in schema.get("required", [])
        presence = draw(st.integers(0, 9))
        if presence == 0 and not strict:  # under strict modes the decoder writes every field (optional ones as null)
            continue  # missing (required: both sides refuse it) or left out (optional: the default applies)
        out[name] = None if not required and presence == 1 else _json_value(draw, sub, defs, strict, forbids,
                                                                             f"{path}/{name}")
    if forbids(path) and draw(st.integers(0, 9)) == 0:
        out["extra"] = 1  # an undeclared key where the type forbids them; where it ignores them, the decoder's
        # additionalProperties: false only narrows what it writes, so the two sides are compared without such keys
    return out


def _at(value: Any, parts: list[str]) -> list[Any]:
    """Every value at a clause's path ("*": any item or key)."""
    if not parts:
        return [value]
    head, rest = parts[0], parts[1:]
    if head == "*":
        items = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else []
        return [v for item in items for v in _at(item, rest)]
    return _at(value[head], rest) if isinstance(value, dict) and head in value else []


def _after_reply_ok(value: Any, compiled: CompiledSchema, original: dict[str, Any]) -> bool:
    """The keywords removed from the schema sent, checked where they apply (what the engine's own check covers)."""
    for clause in compiled.enforced_by("after_reply"):
        for instance in _at(value, [p for p in clause.path.split("/")[1:]]):
            if clause.keyword == "additionalProperties":
                declared = {n for s in _objects_at(original, clause.path) for n in s.get("properties", {})}
                if isinstance(instance, dict) and set(instance) - declared:
                    return False
            elif not jsonschema.Draft202012Validator({clause.keyword: clause.value}).is_valid(instance):
                return False
    return True


def _below(node: dict[str, Any], part: str) -> dict[str, Any]:
    """The schema one step down a path: an item or map value ("*"), or a named property."""
    if part == "*":
        extra = node.get("additionalProperties")
        return node.get("items") or (extra if isinstance(extra, dict) else {})
    return node.get("properties", {}).get(part, {})


def _objects_at(schema: dict[str, Any], path: str) -> list[dict[str, Any]]:
    defs = schema.get("$defs", {})

    def resolve(node: dict[str, Any]) -> list[dict[str, Any]]:
        if "$ref" in node:
            return resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
        if "anyOf" in node:
            return [r for o in node["anyOf"] for r in resolve(o)]
        return [node]

    nodes = resolve(schema)
    for part in [p for p in path.split("/")[1:]]:
        nodes = [r for n in nodes for r in resolve(_below(n, part))]
    return nodes


@settings(max_examples=int(os.environ.get("STRUCTURED_EXAMPLES", "40")), deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(decls=_declarations(), model=st.sampled_from(_MODELS), data=st.data())
def test_the_schema_sent_plus_the_after_reply_checks_accept_exactly_what_the_contracts_type_accepts(
        decls: dict[str, dict[str, Any]], model: str, data: Any) -> None:
    types = _types(decls)
    top = list(decls)[-1]
    original = types.json_schema(top)
    compiled = compile_schema(original, model, "json_schema")
    if compiled.mode != "json_schema":  # not representable: nothing is sent, the contract's type checks it all
        assert compiled.enforced_by("not_representable") and compiled.schema is None
        return
    assert compiled.schema is not None
    sent = jsonschema.Draft202012Validator(compiled.schema)
    contract = types.model(top)
    for _ in range(6):
        reply = _json_value(data.draw, compiled.schema, compiled.schema.get("$defs", {}), compiled.strict,
                            lambda path: any(o.get("additionalProperties") is False for o in _objects_at(original, path)))
        by_provider = sent.is_valid(reply) and _after_reply_ok(reply, compiled, original)
        try:
            contract.model_validate(map_back(reply, compiled))
            by_contract = True
        except ValidationError:
            by_contract = False
        assert by_provider == by_contract, (model, json.dumps(compiled.schema), reply)


# ----------------------------------------------------------------- a field named like the wildcard (issue 32, finding 9)


STARRED = {"A": {"extra": "forbid", "fields": {"*": {"type": "str", "default": "d"}, "x/y": {"type": "int | None"}}}}


def test_a_field_named_star_does_not_drop_the_null_of_another_field_when_a_strict_reply_is_mapped_back() -> None:
    c = _compiled(STARRED, "A", "openai/gpt-4o-mini")
    value = _types(STARRED).model("A").model_validate(map_back({"*": None, "x/y": None}, c))
    assert value.model_dump(by_alias=True) == {"*": "d", "x/y": None}


def test_a_field_named_star_does_not_hide_an_extra_key_from_extra_forbid() -> None:
    c = _compiled(STARRED, "A", "openai/gpt-4o-mini")
    with pytest.raises(ValidationError, match="zzz"):
        _types(STARRED).model("A").model_validate(map_back({"*": "v", "x/y": 1, "zzz": None}, c))


def test_no_field_name_spells_the_wildcard_in_a_clause_path() -> None:
    decls = {"A": {"fields": {"*": {"type": "str"}, "items": {"type": "list[str]"}}}}
    c = _compiled(decls, "A", "openai/gpt-4o-mini")
    paths = {x.path for x in c.clauses}
    assert "/items/*" in paths  # the wildcard: any item
    assert "/*" not in paths  # the field named '*' is spelt another way
    assert path_parts("/items/*") == ["items", None] and path_parts(next(p for p in paths if p.startswith("/~"))) == ["*"]


# ----------------------------------------------------------------- OpenAI strict mode's enum and character bounds


def _values(count: int, total: int, prefix: str = "v") -> list[str]:
    """`count` distinct strings of `total` characters together."""
    base = total // count
    out = [f"{prefix}{i}".ljust(base, "x") for i in range(count)]
    out[-1] += "y" * (total - sum(map(len, out)))
    return out


def _literal_type(values: list[str]) -> str:
    return "Literal[" + ", ".join(repr(v) for v in values) + "]"


def _openai(fields: dict[str, list[str]]) -> CompiledSchema:
    decls = {"A": {"fields": {name: {"type": _literal_type(values)} for name, values in fields.items()}}}
    return _compiled(decls, "A", "openai/gpt-4o-mini")


def test_openai_strict_takes_500_enum_values_across_the_schema_and_not_501() -> None:
    under = _openai({"a": _values(250, 1000, "a"), "b": _values(250, 1000, "b")})
    assert under.mode == "json_schema"
    over = _openai({"a": _values(250, 1000, "a"), "b": _values(251, 1004, "b")})
    assert over.mode == "json_object" and over.schema is None
    assert over.fallback_reason == "the type has 501 enum values; OpenAI strict mode allows at most 500"


def test_a_50000_value_literal_is_not_sendable_to_openai_strict() -> None:
    c = _openai({"code": [f"c{i}" for i in range(50_000)]})
    assert c.mode == "json_object" and c.fallback_reason is not None and "50000 enum values" in c.fallback_reason


def test_openai_strict_takes_120000_characters_of_names_and_values_and_not_one_more() -> None:
    # the field's name (1 character) and 250 values: 119,999 and 120,000 characters, then 120,001
    under = _openai({"e": _values(250, 119_999)})
    assert under.mode == "json_schema"
    over = _openai({"e": _values(250, 120_000)})
    assert over.mode == "json_object"
    assert over.fallback_reason == ("the type's property names, definition names, enum and const values have 120,001 "
                                    "characters; OpenAI strict mode allows at most 120,000")


def test_openai_strict_takes_an_enum_of_more_than_250_values_of_15000_characters_and_not_one_more() -> None:
    under = _openai({"e": _values(251, 15_000)})
    assert under.mode == "json_schema"
    over = _openai({"e": _values(251, 15_001)})
    assert over.mode == "json_object"
    assert _enforcement(over, "/e", "enum") == "not_representable"
    assert over.fallback_reason == ("an enum of 251 values has 15,001 characters; OpenAI strict mode allows at most "
                                    "15,000 for an enum of more than 250 values")
    assert _openai({"e": _values(250, 15_001)}).mode == "json_schema"  # 250 values: only the total applies
