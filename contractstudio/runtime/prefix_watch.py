"""The prefix watch: a streaming reply read as it grows, stopped at the first clause it can no longer pass.

The clauses watched, and how each is decided, come from the analyzer's classification (analysis/prefix_decidable.py):
this module only finds the JSON the reply check will read (reading/reply_prefix.py mirrors reading/replies.py),
reads it a chunk at a time (reading/json_prefix.py) and words each violation as the whole-reply check words it
(runtime/validation.py). A watch never stops a reply that would pass when whole: where the reply check could still
read the JSON from elsewhere (a later fence), nothing is decided.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal, Protocol

from pydantic import Field, TypeAdapter, ValidationError

from contractstudio.analysis.prefix_decidable import Option, PrefixPlan, Slot, prefix_plan
from contractstudio.reading.json_prefix import JsonPrefix, Listener
from contractstudio.reading.replies import CUT_HINT, extract_json, first_json_fence
from contractstudio.runtime.validation import format_errors

DECODER_MODES = ("json_schema", "json_object")


@dataclass(frozen=True)
class EarlyViolation:
    """A clause the reply so far has broken for good: the remedy starts with `message`."""

    clause: str  # the clause in the contract's words: "output.label: the Literal values", "json", "post[0]"
    message: str  # the error text the remedy sends, as the whole-reply check words it
    position: int  # characters into the reply: the one that decided it


class PrefixWatch(Protocol):
    """Fed the whole reply so far after each chunk; returns the first violation, then the same one again."""

    def feed(self, reply_so_far: str) -> EarlyViolation | None: ...


# -- the checks on values as they grow

_WORDS = {"enum": "the Literal values", "maxLength": "max_length", "maxItems": "max_length", "maximum": "le",
          "exclusiveMaximum": "lt", "minimum": "ge", "exclusiveMinimum": "gt"}
_PYDANTIC_BOUND = {"maximum": "le", "exclusiveMaximum": "lt", "minimum": "ge", "exclusiveMinimum": "gt"}


class _Value:
    """A value being read at a slot: the string options it is judged against, and its text so far."""

    __slots__ = ("slot", "path", "strings", "text")

    def __init__(self, slot: Slot, path: str) -> None:
        self.slot, self.path = slot, path
        self.strings = [o for o in slot.options if "string" in o.kinds]
        self.text: list[str] = []


class _Checks(Listener):
    """The listener that judges each value against its slot's options (a violation: every option refuses it)."""

    def __init__(self, root: Slot, root_name: str) -> None:
        self.root, self.root_name = root, root_name

    def value(self, parent: Any, key: str | int | None, kind: str, at: int) -> Any:
        if parent is None:
            slot: Slot | None = self.root
            path = self.root_name
        else:
            slot = parent.slot.child(key if isinstance(key, str) else None)
            path = f"{parent.path}[{key}]" if isinstance(key, int) else f"{parent.path}.{key}"
        if slot is None or not slot.options:
            return None
        return _Value(slot, path)

    def chars(self, ctx: _Value, text: str, at: int) -> tuple[Any, int] | None:
        if not ctx.strings:
            return None
        before = ctx.text[0] if ctx.text else ""
        ctx.text[:] = [before + text]
        deciding, refused = -1, None
        for o in ctx.strings:  # each option refuses at its own character; the string is refused at the last of them
            found = _refuses_at(o, before, text)
            if found is None:
                return None  # this option still takes the string
            if found[0] > deciding:
                deciding, refused = found
        assert refused is not None
        return _violation(ctx.path, refused, before + text[:deciding + 1]), at - (len(text) - 1 - deciding)

    def string_end(self, ctx: _Value, text: str, at: int) -> Any:
        if not ctx.strings or not all(o.enum is not None and text not in o.enum for o in ctx.strings):
            return None
        return _violation(ctx.path, ("enum", ctx.strings[0].enum), text)

    def number_end(self, ctx: _Value, token: str, at: int) -> Any:
        options = [o for o in ctx.slot.options if "number" in o.kinds]
        if not options:
            return None
        number: float = float(token) if any(c in token for c in ".eE") else int(token)
        refused: tuple[str, Any] | None = None
        for o in options:
            failed = [(k, v) for k, v in o.bounds if not _within(number, k, v)]
            if not failed:
                return None
            refused = refused or (failed[0][0], (failed[0][1], o.integer))
        assert refused is not None
        return _violation(ctx.path, refused, number)

    def item(self, ctx: _Value, count: int, at: int) -> Any:
        options = [o for o in ctx.slot.options if "array" in o.kinds]
        if not options or not all(o.max_items is not None and count > o.max_items for o in options):
            return None
        return _violation(ctx.path, ("maxItems", options[0].max_items), [None] * count,
                          shown=f"a list of {count} items so far")


def _common(a: str, b: str) -> str:
    """The longest common start of two texts."""
    return os.path.commonprefix([a, b])


def _refuses_at(option: Option, before: str, text: str) -> tuple[int, tuple[str, Any]] | None:
    """The index in `text` (what follows `before` in a string) of the first character the option refuses, and why."""
    first: tuple[int, tuple[str, Any]] | None = None
    if option.enum is not None:
        kept = max((len(_common(v[len(before):], text)) for v in option.enum if v.startswith(before)), default=-1)
        if kept < len(text):
            first = (max(kept, 0), ("enum", option.enum))
    if option.max_length is not None and len(before) + len(text) > option.max_length:
        at = max(option.max_length - len(before), 0)
        if first is None or at < first[0]:
            first = (at, ("maxLength", option.max_length))
    return first


def _within(number: float, keyword: str, limit: float) -> bool:
    if keyword == "maximum":
        return number <= limit
    if keyword == "exclusiveMaximum":
        return number < limit
    if keyword == "minimum":
        return number >= limit
    return number > limit


@lru_cache(maxsize=256)
def _adapter(constraint: tuple[str, Any]) -> TypeAdapter[Any]:
    """A validator of one clause alone, so its error reads word for word as the whole-reply check's."""
    keyword, value = constraint
    if keyword == "enum":
        return TypeAdapter(Literal[value])  # type: ignore[arg-type]
    if keyword == "maxLength":
        return TypeAdapter(Annotated[str, Field(max_length=value)])
    if keyword == "maxItems":
        return TypeAdapter(Annotated[list[Any], Field(max_length=value)])
    limit, integer = value
    if integer:
        return TypeAdapter(Annotated[int, Field(**{_PYDANTIC_BOUND[keyword]: limit})])
    return TypeAdapter(Annotated[float, Field(**{_PYDANTIC_BOUND[keyword]: limit})])


def _violation(path: str, constraint: tuple[str, Any], value: Any, shown: str | None = None) -> tuple[str, str]:
    """(the clause, the error text the whole-reply check gives for this value)."""
    keyword, limit = constraint
    clause = f"{path}: {_WORDS.get(keyword, keyword)}"
    try:
        _adapter((keyword, tuple(limit) if isinstance(limit, list) else limit)).validate_python(value)
    except ValidationError as err:
        lines = format_errors(err, path, shown)
        if lines:
            return clause, lines[0]
    return clause, f"{path}: breaks {clause}"  # pragma: no cover - the value was refused by the same clause


# -- finding the document the reply check will read


class _Watch:
    """One reply's watch: where its JSON is, read as it grows, and the first violation."""

    def __init__(self, plan: PrefixPlan, mode: str, strict: bool, root_name: str) -> None:
        self.strict, self.decoder = strict, mode in DECODER_MODES
        checks = _Checks(plan.root, root_name) if plan.root.options else None
        self.syntax = not self.decoder and any(c.keyword == "json" and c.early for c in plan.clauses)
        # the whole reply as one document: checked (strict, or a decoder's JSON), or only read to see it is not JSON
        self.whole = JsonPrefix(checks if (strict or self.decoder) else None)
        self.fence: JsonPrefix | None = None
        self.fence_at: int | None = None  # where the fence's body starts in the reply
        self.fence_fed = 0
        self.fence_checks = checks
        self.fed = 0
        self.found: EarlyViolation | None = None
        self.gave_up = False

    def feed(self, reply: str) -> EarlyViolation | None:
        """The first violation of the reply so far (the same again once found), or None."""
        if self.found is not None or self.gave_up:
            return self.found
        new = reply[self.fed:]
        dead = self.whole.feed(new, self.fed) if self.whole.dead is None else self.whole.dead
        self.fed = len(reply)
        if self.strict or self.decoder:
            if self.whole.violation is not None:
                return self._found(self.whole.violation, reply)
            if dead is not None:
                if self.decoder or not self.syntax:
                    self.gave_up = True  # the decoder did not write JSON: the reply check says what it is
                    return None
                return self._syntax(reply, dead)
            return None
        return self._lenient(reply, new, dead)

    def _lenient(self, reply: str, new: str, dead: int | None) -> EarlyViolation | None:
        """json_reply: lenient: only the first ```json fence after text that is not JSON is final."""
        if self.fence is None:
            if "```" not in reply or ("`" not in new and "\n" not in new and self.fed != len(new)):
                return None
            body = first_json_fence(reply)
            if body is None:
                return None
            self.fence_at = self.fence_fed = body
            self.fence = JsonPrefix(self.fence_checks)
        assert self.fence_at is not None
        close = reply.find("```", self.fence_at)
        upto = close if close >= 0 else len(reply) - (len(reply) - len(reply.rstrip("`")))
        if upto > self.fence_fed:
            self.fence.feed(reply[self.fence_fed:upto], self.fence_fed)
            self.fence_fed = upto
        if close >= 0 and self.fence.dead is None and self.fence.violation is None:
            self.fence.finish(close + 2)  # decided by the closing fence's last backtick
        if dead is None:
            return None  # the reply may still be one JSON document: the fence is not what the check reads
        if self.fence.violation is not None:
            found, at = self.fence.violation
            return self._found((found, max(at, dead)), reply)
        if self.fence.dead is not None and self.syntax:
            return self._syntax(reply, max(self.fence.dead, dead), closed=close >= 0 and self.fence.dead == close + 2)
        return None

    def _found(self, violation: tuple[Any, int], reply: str) -> EarlyViolation:
        (clause, message), at = violation
        self.found = EarlyViolation(clause, message, at)
        return self.found

    def _syntax(self, reply: str, at: int, closed: bool = False) -> EarlyViolation:
        cut = reply[:at + 1]
        problem = extract_json(cut, strict=self.strict)[1] or "the reply is not valid JSON"
        if not closed:
            problem = problem.replace(CUT_HINT, "")
        self.found = EarlyViolation("json", problem, at)
        return self.found


def watch_for(plan: Any, mode: str) -> PrefixWatch | None:
    """The prefix watch of a compiled contract under a structured-output mode; None when no prefix decides anything."""
    prefixes = plan.__dict__.setdefault("_prefix_plans", {})
    strict = getattr(plan.doc, "json_reply", "lenient") == "strict"
    key = (mode, strict)
    classified = prefixes.get(key)
    if classified is None:
        classified = prefixes[key] = prefix_plan(_schema(plan), mode=mode, json_reply="strict" if strict else "lenient")
    watched = classified.root.options or any(c.keyword == "json" and c.early for c in classified.clauses)
    if not watched:
        return None
    return _Watch(classified, mode, strict, plan.output.root)


def _schema(plan: Any) -> dict[str, Any] | None:
    """The output type's JSON Schema, when the value it validates is the JSON as read (no before-validator of the
    author's rewrites it first); None otherwise: then only JSON syntax is watched."""
    try:
        schema = plan.output.json_schema()
    except Exception:  # noqa: BLE001 - a schema that cannot be written: nothing is decided on a prefix
        return None
    if plan.output.types is None and not _as_read(plan.output):
        return None
    return schema


_SAFE_SCHEMAS = frozenset({"model", "model-fields", "typed-dict", "str", "int", "float", "bool", "none", "nullable",
                           "list", "dict", "literal", "union", "tagged-union", "default", "definitions",
                           "definition-ref", "any", "function-after", "enum", "set", "tuple"})


def _as_read(shape: Any) -> bool:
    """Whether a Python contract's type validates the JSON as written: no before/wrap/plain validator, no string
    rewriting (strip, case), no enum `_missing_` (each could turn a refused prefix into a valid value)."""
    core = shape.model.__pydantic_core_schema__ if shape.model is not None else shape.adapter.core_schema
    stack: list[Any] = [core]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > 10_000:
            return False
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        if isinstance(kind, str):
            if kind not in _SAFE_SCHEMAS and not kind.endswith("-field"):
                return False
            if kind == "enum" and node.get("missing") is not None:
                return False
            if kind == "model" and (node.get("custom_init") or node.get("root_model")):
                return False
            config = node.get("config") or {}
            if any(config.get(k) for k in ("str_strip_whitespace", "str_to_lower", "str_to_upper")):
                return False
            if kind == "str" and any(node.get(k) for k in ("strip_whitespace", "to_lower", "to_upper")):
                return False
        stack.extend(v for k, v in node.items() if isinstance(v, (dict, list)) and k not in ("metadata", "serialization"))
    return True
