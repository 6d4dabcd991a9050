"""Property (issue 37.2, done when): no clause the analyzer calls decidable on a prefix ever stops a reply that would
have passed when whole. Random output types, random replies near them (valid, just outside a bound, a Literal's
prefix, prose and fences around the JSON), fed to the watch in random chunks: whenever the watch stops a reply, the
whole-reply check (extract_json, the output type, the post conditions) refuses that reply."""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contractstudio.documents.models import Contract
from contractstudio.reading.replies import extract_json
from contractstudio.runtime.compiled import CompiledContract
from contractstudio.runtime.prefix_watch import watch_for

EXAMPLES = int(os.environ.get("PREFIX_EXAMPLES", "150"))
_WORDS = ["positive", "pos", "negative", "neg", "a", "ab", "abc", "", "é😀", "TODO", "x\ny", 'q"t', "A1", "A", "12",
          "Ab", "b", "posx", "a\n", "٣", "e\u0301", "abcdefgh"]


@st.composite
def _field(draw: Any, names: list[str]) -> dict[str, Any]:
    kind = draw(st.sampled_from(["literal", "str", "int", "float", "list", "union", "dict", "bool"] + (["ref"] if names else [])))
    spec: dict[str, Any] = {}
    if kind == "literal":
        spec["type"] = draw(st.sampled_from(["Literal['positive', 'negative']", "Literal['a', 'ab']", "Literal[1, 2]",
                                             "Literal['pos']"]))
    elif kind == "str":
        spec["type"] = "str"
        for key, low, high in (("min_length", 0, 3), ("max_length", 0, 5)):
            if draw(st.booleans()):
                spec[key] = draw(st.integers(low, high))
        if draw(st.integers(0, 3)) == 0:
            spec["pattern"] = draw(st.sampled_from([r"^[A-Z][0-9]$", r"^ab", r"b$", r"^(pos|neg)[a-z]*$", r"^\d+$",
                                                    r"(?i)^A", r"^\w+$", r"^a|b", r"^[^\n]{0,3}$", r"^a(?=b)"]))
    elif kind in ("int", "float"):
        spec["type"] = kind
        for bound in draw(st.lists(st.sampled_from(["ge", "gt", "le", "lt"]), max_size=2, unique=True)):
            spec[bound] = draw(st.integers(-2, 2)) + (0 if bound in ("ge", "gt") else 3)
    elif kind == "list":
        spec["type"] = draw(st.sampled_from(["list[str]", "list[int]", "list[Literal['a', 'ab']]"] +
                                            [f"list[{n}]" for n in names]))
        for key, low, high in (("min_length", 0, 2), ("max_length", 0, 3)):
            if draw(st.booleans()):
                spec[key] = draw(st.integers(low, high))
    elif kind == "union":
        spec["type"] = draw(st.sampled_from(["str | int", "Literal['a'] | Literal['b', 'c']", "Literal['x'] | int"]))
    elif kind == "dict":
        spec["type"] = draw(st.sampled_from(["dict[str, int]", "dict[str, Literal['a']]"]))
    elif kind == "bool":
        spec["type"] = "bool"
    else:
        spec["type"] = draw(st.sampled_from(names))
    if draw(st.integers(0, 3)) == 0:
        spec["type"] = f"{spec['type']} | None"
        spec["default"] = None
    return spec


@st.composite
def _contract(draw: Any) -> dict[str, Any]:
    types: dict[str, Any] = {}
    for i in range(draw(st.integers(1, 3))):
        names = list(types)
        fields = {f"f{j}": draw(_field(names)) for j in range(draw(st.integers(1, 4)))}
        types[f"T{i}"] = {"extra": draw(st.sampled_from(["forbid", "ignore"])), "fields": fields}
    top = list(types)[-1]
    fields = list(types[top]["fields"])
    post = [{"assert": draw(st.sampled_from(_CONDITIONS)).format(f=draw(st.sampled_from(fields))), "monotone": True}
            for _ in range(draw(st.integers(0, 2)))]
    return {"kind": "contract", "name": "p", "types": types, "input": "str", "output": top, "prompt": "x",
            "json_reply": draw(st.sampled_from(["lenient", "strict"])), "post": post}


# Conditions marked monotone: the analyzer keeps those that are (on a str or list field) and refuses the others.
_CONDITIONS = ["len(output.{f}) <= 2", "len(output.{f}) < len(input) + 1", "'b' not in output.{f}",
               "not ('TODO' in output.{f})", "3 >= len(output.{f}) and 'a' not in output.{f}", "len(output.{f}) >= 2",
               "output.{f} != 'ab'", "len(output.{f}) <= 1 or 'x' in output.{f}"]


def _near(draw: Any, schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    """A JSON value near a schema: mostly of its shape, often just past a bound, a Literal's prefix, another kind."""
    if "$ref" in schema:
        return _near(draw, defs[schema["$ref"].rsplit("/", 1)[-1]], defs, depth)
    if "anyOf" in schema:
        return _near(draw, draw(st.sampled_from(schema["anyOf"])), defs, depth)
    roll = draw(st.integers(0, 11))
    if roll == 0:
        return draw(st.sampled_from([[], {}, "x", 2.5, 3, None, True, "100"]))
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        return draw(st.sampled_from([*values, *[str(v)[:k] for v in values for k in (1, 2)], "c", 1]))
    kind = schema.get("type")
    if kind == "string":
        return draw(st.sampled_from(_WORDS) | st.text(alphabet="aAbZ0 é\"\\", max_size=7))
    if kind in ("integer", "number"):
        return draw(st.integers(-4, 8) | st.sampled_from([1e1, 0.5, -0.0, 100, 2.0, 5e-1]))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "null":
        return None
    if kind == "array":
        return [_near(draw, schema.get("items", {}), defs, depth + 1) for _ in range(draw(st.integers(0, 5)))]
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return {k: _near(draw, schema["additionalProperties"], defs, depth + 1)
                for k in draw(st.lists(st.sampled_from("pq"), max_size=2, unique=True))}
    out: dict[str, Any] = {}
    for name, sub in schema.get("properties", {}).items():
        if draw(st.integers(0, 9)) == 0:
            continue
        out[name] = _near(draw, sub, defs, depth + 1) if depth < 4 else None
    if draw(st.integers(0, 9)) == 0:
        out["extra"] = 1
    return out


def _text(draw: Any, value: Any) -> str:
    indent = draw(st.sampled_from([None, 1, 2]))
    ascii_only = draw(st.booleans())
    return json.dumps(value, indent=indent, ensure_ascii=ascii_only)


def _reply(draw: Any, doc: str, other: str, decoder: bool) -> str:
    """The JSON as a model might send it: bare, in a fence, with prose, twice (the second one fixed)."""
    if decoder:
        return draw(st.sampled_from(["", " ", "\n"])) + doc + draw(st.sampled_from(["", "\n"]))
    form = draw(st.integers(0, 7))
    if form == 0:
        return doc
    if form == 1:
        return f"```json\n{doc}\n```"
    if form == 2:
        return f"Here is the answer:\n```json\n{doc}\n```\nIt says so because the input says so."
    if form == 3:
        return f"{doc}\n```json\n{other}\n```"  # a second answer in a fence: the lenient reader takes the fence
    if form == 4:
        return f"Sure! {doc} Hope that helps."
    if form == 5:
        return f"```\n{doc}\n```\n```JSON\n{other}\n```"
    if form == 6:
        return f"Note: ```json\n{doc}"  # cut off inside the fence
    return f"{doc[: len(doc) // 2]}"  # cut off


def _passes(plan: CompiledContract, reply: str) -> bool:
    parsed, problem = extract_json(reply, strict=plan.doc.json_reply == "strict")
    if problem:
        return False
    output, errors = plan.output.validate(parsed)
    if errors:
        return False
    return all(check.evaluate({"input": "x", "output": output})[1] for check in plan.post)


def test_the_generated_contracts_are_read_by_the_analyzer_as_the_runtime_reads_them() -> None:
    # the monotone forms the generator writes are classified: some kept, some refused (so both paths are exercised)
    from contractstudio.analysis.monotone import monotonicity

    plan = CompiledContract.of_document(Contract.model_validate({
        "kind": "contract", "name": "p", "input": "str", "output": "T", "prompt": "x",
        "types": {"T": {"fields": {"f": {"type": "str"}, "n": {"type": "int"}}}}}))
    schema = plan.output.json_schema()
    kept = [c for c in _CONDITIONS if monotonicity(c.format(f="f"), None, schema).problem is None]
    assert 0 < len(kept) < len(_CONDITIONS)
    assert all(monotonicity(c.format(f="n"), None, schema).problem for c in _CONDITIONS)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data(), spec=_contract(), mode=st.sampled_from(["off", "off", "json_object"]))
def test_no_reply_the_watch_stops_would_have_passed_when_whole(data: Any, spec: dict[str, Any], mode: str) -> None:
    plan = CompiledContract.of_document(Contract.model_validate(spec))
    watch_maker = watch_for
    schema = plan.output.json_schema()
    defs = schema.get("$defs", {})
    value, other = _near(data.draw, schema, defs), _near(data.draw, schema, defs)
    reply = _reply(data.draw, _text(data.draw, value), _text(data.draw, other), mode != "off")
    whole = _passes(plan, reply)
    watch = watch_maker(plan, mode, {"input": "x"})
    if watch is None:
        return
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(len(reply), 1)), max_size=6)) + [len(reply)]))
    every = data.draw(st.booleans())
    for end in range(1, len(reply) + 1) if every else cuts:
        found = watch.feed(reply[:end])
        if found is not None:
            assert not whole, (reply, found)
            assert 0 <= found.position < end
            return
