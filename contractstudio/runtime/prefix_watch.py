"""The prefix watch: a streaming reply read as it grows, stopped at the first clause it can no longer pass.

The clauses watched, and how each is decided, come from the analyzer's classification (analysis/prefix_decidable.py):
this module only finds the JSON the reply check will read (reading/replies.py says which fence it reads), reads it
a chunk at a time (reading/json_prefix.py) and judges each value (runtime/prefix_checks.py), in the whole-reply
check's words. A watch never stops a reply that would pass when whole: where the reply check could still
read the JSON from elsewhere (a later fence), nothing is decided.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Protocol

from contractstudio.analysis.prefix_decidable import PrefixPlan, prefix_plan
from contractstudio.reading.json_prefix import JsonPrefix
from contractstudio.reading.replies import CUT_HINT, extract_json, first_json_fence
from contractstudio.runtime.prefix_checks import Checks, Monotone

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


# -- finding the document the reply check will read


class _Watch:
    """One reply's watch: where its JSON is, read as it grows, and the first violation."""

    def __init__(self, plan: PrefixPlan, mode: str, strict: bool, root_name: str, monotone: list[Monotone]) -> None:
        self.strict, self.decoder = strict, mode in DECODER_MODES
        checks = Checks(plan.root, root_name, monotone) if plan.root.options or monotone else None
        self.syntax = not self.decoder and any(c.keyword == "json" and c.early for c in plan.clauses)
        # the whole reply as one document: checked (strict, or a decoder's JSON), or only read to see it is not JSON
        self.whole = JsonPrefix(checks if (strict or self.decoder) else None)
        self.fence: JsonPrefix | None = None
        self.fence_at: int | None = None  # where the fence's body starts in the reply
        self.fence_fed = 0
        self.fence_checks = checks
        self.fed = 0
        self.whole_fed = 0  # lenient: how far the whole reply has been read as one document (only once needed)
        self.found: EarlyViolation | None = None
        self.gave_up = False

    def feed(self, reply: str) -> EarlyViolation | None:
        """The first violation of the reply so far (the same again once found), or None."""
        if self.found is not None or self.gave_up:
            return self.found
        new = reply[self.fed:]
        if not (self.strict or self.decoder):
            return self._lenient(reply, new)
        dead = self.whole.feed(new, self.fed) if self.whole.dead is None else self.whole.dead
        self.fed = len(reply)
        if self.whole.violation is not None:
            return self._found(self.whole.violation, reply)
        if dead is not None:
            if self.decoder or not self.syntax:
                self.gave_up = True  # the decoder did not write JSON: the reply check says what it is
                return None
            return self._syntax(reply, dead)
        return None

    def _lenient(self, reply: str, new: str) -> EarlyViolation | None:
        """json_reply: lenient: only the first ```json fence after text that is not JSON is final. Until a fence
        opens nothing can be decided, so nothing is read (a bare JSON reply costs no more than its fence search)."""
        first = self.fed == 0
        self.fed = len(reply)
        if self.fence is None:
            if "```" not in reply or ("`" not in new and "\n" not in new and not first):
                return None
            body = first_json_fence(reply)
            if body is None:
                return None
            self.fence_at = self.fence_fed = body
            self.fence = JsonPrefix(self.fence_checks)
        assert self.fence_at is not None
        close = reply.find("```", self.fence_at)
        upto = close if close >= 0 else len(reply.rstrip("`"))  # a backtick or two may be the closing fence's
        if upto > self.fence_fed:
            self.fence.feed(reply[self.fence_fed:upto], self.fence_fed)
            self.fence_fed = upto
        if close >= 0 and self.fence.dead is None and self.fence.violation is None:
            self.fence.finish(close + 2)  # decided by the closing fence's last backtick
        if self.fence.violation is None and self.fence.dead is None:
            return None
        # the whole reply read as one document, from where it was left: while it may still be one, the reader
        # takes it and not the fence
        dead = self.whole.feed(reply[self.whole_fed:], self.whole_fed) if self.whole.dead is None else self.whole.dead
        self.whole_fed = len(reply)
        if dead is None:
            return None
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


def watch_for(plan: Any, mode: str, scope: dict[str, Any] | None = None) -> PrefixWatch | None:
    """The prefix watch of a compiled contract under a structured-output mode; None when no prefix decides anything.

    `scope`: the call's values besides the output (`input`, `act`), for monotone conditions whose bound or guard
    reads them; without it those are left to the whole reply."""
    prefixes = _cache(plan)
    strict = getattr(plan.doc, "json_reply", "lenient") == "strict"
    key = (mode, strict)
    classified = prefixes.get(key)
    if classified is None:
        classified = prefixes[key] = prefix_plan(_schema(plan), mode=mode, json_reply="strict" if strict else "lenient",
                                                 post=plan.doc.post)
    monotone = [Monotone(plan.post[index], found.watched, scope or {}) for index, found in classified.monotone
                if scope is not None or not found.reads_input]
    watched = classified.root.options or monotone or any(c.keyword == "json" and c.early for c in classified.clauses)
    if not watched:
        return None
    return _Watch(classified, mode, strict, plan.output.root, monotone)


# A Python contract's plan is made per call, its output shape once per class: its classification is kept by the
# shape's model (or adapter), and goes with it.
_BY_SHAPE: weakref.WeakKeyDictionary[Any, dict[Any, PrefixPlan]] = weakref.WeakKeyDictionary()


def _cache(plan: Any) -> dict[Any, PrefixPlan]:
    shape = plan.output
    if shape.types is not None:
        found: dict[Any, PrefixPlan] = plan.__dict__.setdefault("_prefix_plans", {})
        return found
    owner = shape.model if shape.model is not None else shape.adapter
    try:
        return _BY_SHAPE.setdefault(owner, {})
    except TypeError:  # not weakly referable: kept with the plan
        kept: dict[Any, PrefixPlan] = plan.__dict__.setdefault("_prefix_plans", {})
        return kept


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
