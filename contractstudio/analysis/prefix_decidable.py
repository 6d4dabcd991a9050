"""Which clauses of a contract a reply's prefix can already break (issue 37, point 2): the one classification.

A clause is decidable on a prefix when some prefix of a reply can show that no continuation passes it: a string
value that no Literal value starts with, a string longer than its `max_length`, a list past its `max_items`, a number
outside its bounds once it is written out, a string too short or not matching its pattern once it ends, text that can
no longer become JSON. Every other clause (a required field, a type pydantic may coerce, a `post` condition not
marked monotone) is checked after the reply.
The analyzer shows this classification (hover, `check -v`); the runtime's prefix watch (runtime/prefix_watch.py)
is built from the same tree, so what the author is told stops a reply early is what stops it.

The tree is read off the output type's JSON Schema. A value's place holds its options (a union has several); a
value breaks a clause only when it breaks every option that takes its JSON kind, so a union never stops a reply one
of its members accepts. Kinds pydantic coerces (a number written as a string, `true` for an int) are never judged
here: only strings, null, objects and arrays have a kind an option refuses outright.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contractstudio.analysis.monotone import Monotonicity, monotonicity
from contractstudio.documents.models import Condition
from contractstudio.documents.patterns import parse_pattern, pattern_problem

ANY_KIND = frozenset({"string", "number", "object", "array", "literal"})
_REF = "#/$defs/"

EARLY = "stops the reply early"
AFTER = "checked after the reply"


@dataclass(frozen=True)
class PrefixClause:
    """One clause of the output and whether a prefix of the reply decides it."""

    path: str  # the clause's path as structured_outputs writes it: "" (the reply), "/label", "/items/*"
    keyword: str  # "json", "enum", "const", "maxLength", "maxItems", "maximum", ..., or "post" for a condition
    early: bool  # decidable on a prefix: the watch stops the reply early
    reason: str  # how a prefix decides it, or why it cannot
    value: Any = field(default=None, compare=False, hash=False)


@dataclass(eq=False)
class Option:
    """One type a value at some place may have, with the clauses a prefix of it decides."""

    kinds: frozenset[str] = ANY_KIND  # the JSON kinds it may take ("literal": true, false; null is its own)
    enum: tuple[str, ...] | None = None  # the strings it takes (Literal values, enum members), all strings
    max_length: int | None = None  # of a string
    min_length: int | None = None  # of a string: decided when the string ends
    pattern: str | None = None  # of a string: decided when the string ends (searched, as pydantic does)
    anchored: bool = False  # the pattern is anchored at the start: decided at the first character no match continues
    max_items: int | None = None  # of an array
    bounds: tuple[tuple[str, float], ...] = ()  # (keyword, limit) of a number: maximum, minimum, exclusive...
    integer: bool = False  # the number is an int (its bounds are worded as an int's)
    properties: dict[str, Slot] | None = None  # of an object
    extra: Slot | None = None  # the values of keys not in `properties` (a dict's values); None: unchecked


@dataclass(eq=False)
class Slot:
    """A place in the output: the options a value there may take (none: nothing a prefix decides)."""

    options: list[Option] = field(default_factory=list)
    _children: dict[Any, Slot | None] = field(default_factory=dict, repr=False)

    def open(self) -> bool:
        """Whether a value here is unconstrained (some option takes any value unchecked)."""
        return not self.options or any(o.kinds == ANY_KIND and o.enum is None and o.max_length is None and o.pattern is None
                                       and o.min_length is None
                                       and o.max_items is None and not o.bounds and o.properties is None
                                       and o.extra is None for o in self.options)

    def child(self, key: str | None) -> Slot | None:
        """The place of an object's value at `key` (None: an array's item); None when nothing there is decided."""
        if key in self._children:
            return self._children[key]
        found: Slot | None = Slot()
        for option in self.options:
            if key is None:
                if "array" not in option.kinds:
                    continue
                sub = option.extra if option.kinds == frozenset({"array"}) else None
            else:
                if "object" not in option.kinds:
                    continue
                sub = (option.properties or {}).get(key, option.extra) if option.kinds == frozenset({"object"}) else None
            if sub is None or sub.open():
                found = None  # this option takes any value there: nothing is decided
                break
            assert found is not None
            found.options.extend(sub.options)
        if found is not None and not found.options:
            found = None
        if len(self._children) < 256:
            self._children[key] = found
        return found


class _Builder:
    """One walk over a JSON Schema: the slot tree, and each clause with its classification."""

    def __init__(self, schema: dict[str, Any], decoder: frozenset[tuple[str, str]] = frozenset()) -> None:
        self.decoder = decoder
        self.defs: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}
        self.made: dict[str, Slot] = {}
        self.clauses: list[PrefixClause] = []
        self.seen_paths: set[tuple[str, str]] = set()

    def clause(self, path: str, keyword: str, early: bool, reason: str, value: Any = None) -> None:
        if (path, keyword) in self.decoder:
            return  # the decoder enforces it: nothing is left to watch (structure.py shows it as enforced)
        if (path, keyword) not in self.seen_paths:
            self.seen_paths.add((path, keyword))
            self.clauses.append(PrefixClause(path, keyword, early, reason, value))

    def slot(self, node: Any, path: str, depth: int = 0) -> Slot:
        if not isinstance(node, dict) or depth > 64:
            return Slot()
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref[len(_REF):] if ref.startswith(_REF) else ref.rsplit("/", 1)[-1]
            if name in self.made:
                return self.made[name]
            made = self.made[name] = Slot()
            made.options = self.slot(self.defs.get(name), path, depth + 1).options
            return made
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                out = Slot()
                for alt in node[key]:
                    sub = self.slot(alt, path, depth + 1)
                    if sub.open():
                        return Slot()  # one member takes anything: nothing is decided here
                    out.options.extend(sub.options)
                return out
        if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            return self.slot(node["allOf"][0], path, depth + 1)
        return Slot([self.option(node, path, depth)])

    def option(self, node: dict[str, Any], path: str, depth: int) -> Option:
        values = node["enum"] if isinstance(node.get("enum"), list) else [node["const"]] if "const" in node else None
        if values is not None:
            keyword = "enum" if "enum" in node else "const"
            if values and all(isinstance(v, str) for v in values):
                self.clause(path, keyword, True, "a string no value starts with is refused as it is written", values)
                return Option(frozenset({"string"}), enum=tuple(values))
            self.clause(path, keyword, False, "values that are not all strings are compared with the whole value", values)
            return Option()
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        if kinds == ["string"]:
            opt = Option(frozenset({"string"}))
            if isinstance(node.get("maxLength"), int):
                opt.max_length = node["maxLength"]
                self.clause(path, "maxLength", True, "refused at the character past the bound", node["maxLength"])
            if isinstance(node.get("minLength"), int):
                opt.min_length = node["minLength"]
                self.clause(path, "minLength", True, "refused when the string ends", node["minLength"])
            pattern = node.get("pattern")
            if isinstance(pattern, str):
                how = pattern_decided(pattern)
                if how is None:
                    self.clause(path, "pattern", False, "its matching may differ between regex engines on a prefix "
                                "(case folding, word classes, look-around): decided by the whole reply", pattern)
                else:
                    opt.pattern, opt.anchored = pattern, how == "prefix"
                    self.clause(path, "pattern", True, "anchored: refused at the first character no match continues"
                                if opt.anchored else "refused when the string ends", pattern)
            self._after(node, path, ("format",))
            return opt
        if kinds == ["null"]:
            return Option(frozenset({"null"}))
        if kinds == ["array"]:
            opt = Option(frozenset({"array"}), extra=self.slot(node.get("items"), f"{path}/*", depth + 1))
            if isinstance(node.get("maxItems"), int):
                opt.max_items = node["maxItems"]
                self.clause(path, "maxItems", True, "refused when the item past the bound starts", node["maxItems"])
            self._after(node, path, ("minItems", "uniqueItems", "prefixItems"))
            return opt
        if kinds == ["object"]:
            props: dict[str, Any] = node["properties"] if isinstance(node.get("properties"), dict) else {}
            extra = node.get("additionalProperties")
            return Option(frozenset({"object"}),
                          properties={k: self.slot(v, f"{path}/{_escape(k)}", depth + 1) for k, v in props.items()},
                          extra=self.slot(extra, f"{path}/*", depth + 1) if isinstance(extra, dict) else None)
        if kinds in (["integer"], ["number"]):
            written = [k for k in ("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum")
                       if isinstance(node.get(k), (int, float)) and not isinstance(node.get(k), bool)]
            bounds = tuple((k, float(node[k])) for k in written)
            for k in written:
                self.clause(path, k, True, "refused as soon as the number is written out", node[k])
            return Option(bounds=bounds, integer=kinds == ["integer"])
        return Option()

    def _after(self, node: dict[str, Any], path: str, keywords: tuple[str, ...]) -> None:
        for k in keywords:
            if k in node:
                self.clause(path, k, False, "decided by the whole value", node[k])


# What a pattern may hold for a prefix to decide it: Python's matcher (the `regex` package, partial matching) and
# pydantic's linear engine (Rust's regex crate) agree on these, or Python's is the more lenient (`$` before a final
# newline), so Python never refuses what the reply check would accept. Case folding, word and space classes, word
# boundaries, look-around and back-references are left to the whole reply.
_SAFE_OPS = frozenset({"LITERAL", "NOT_LITERAL", "ANY", "IN", "MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT",
                       "SUBPATTERN", "BRANCH", "AT", "RANGE", "NEGATE", "CATEGORY"})
_SAFE_AT = frozenset({"AT_BEGINNING", "AT_BEGINNING_STRING", "AT_END", "AT_END_STRING"})
_SAFE_CATEGORY = frozenset({"CATEGORY_DIGIT", "CATEGORY_NOT_DIGIT"})
_UNSAFE_FLAGS = re.IGNORECASE | re.MULTILINE | re.ASCII | re.LOCALE


def pattern_decided(pattern: str) -> str | None:
    """How a prefix decides a pattern: "prefix" (anchored at the start), "end" (when the string ends), or None."""
    if pattern_problem(pattern):
        return None
    try:
        parsed = parse_pattern(pattern)
    except Exception:  # noqa: BLE001 - the pattern's own rule reports it (SCH103)
        return None
    if parsed.state.flags & _UNSAFE_FLAGS or not _safe(list(parsed), 0):
        return None
    first = list(parsed)[:1]
    anchored = bool(first) and str(first[0][0]) == "AT" and str(first[0][1]) in ("AT_BEGINNING", "AT_BEGINNING_STRING")
    return "prefix" if anchored else "end"


def _safe(items: Any, depth: int) -> bool:
    if depth > 50:
        return False
    for op, arg in items:
        name = str(op)
        if name not in _SAFE_OPS:
            return False
        if name == "AT" and str(arg) not in _SAFE_AT:
            return False
        if name == "CATEGORY" and str(arg) not in _SAFE_CATEGORY:
            return False
        if name == "IN" and not _safe(arg, depth + 1):
            return False
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and not _safe(list(arg[2]), depth + 1):
            return False
        if name == "SUBPATTERN" and (arg[1] or arg[2] or not _safe(list(arg[3]), depth + 1)):
            return False  # a group's own flags (?i:...)
        if name == "BRANCH" and not all(_safe(list(b), depth + 1) for b in arg[1]):
            return False
    return True


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1").replace("*", "~2")


@dataclass(frozen=True)
class PrefixPlan:
    """The output's slot tree and its clauses, each classified; the monotone post conditions by their index."""

    root: Slot
    clauses: tuple[PrefixClause, ...]
    monotone: tuple[tuple[int, Monotonicity], ...] = ()

    def early(self) -> tuple[PrefixClause, ...]:
        """The clauses a prefix decides."""
        return tuple(c for c in self.clauses if c.early)


def syntax_clause(mode: str, json_reply: str) -> PrefixClause:
    """Whether a prefix decides the reply's JSON syntax, for the structured-output mode in effect."""
    if mode in ("json_schema", "json_object"):
        return PrefixClause("", "json", False, "the decoder writes JSON: nothing to watch")
    if json_reply == "strict":
        return PrefixClause("", "json", True, "json_reply: strict: text that can no longer become one JSON document "
                            "is refused at its first wrong character")
    return PrefixClause("", "json", True, "json_reply: lenient: decided once a ```json fence opens after text that is "
                        "not JSON (until then a later fence could still carry the answer)")


def prefix_plan(schema: dict[str, Any] | None, *, mode: str = "off", json_reply: str = "lenient",
                post: Sequence[Condition] = (), decoder: frozenset[tuple[str, str]] = frozenset()) -> PrefixPlan:
    """The classification of an output type's clauses (its JSON Schema; None when it cannot be written) and of the
    post conditions (those marked monotone, checked to be so against the same schema). `decoder`: the clauses
    (path, keyword) the structured-output decoder enforces, left out of the list (the watch never sees them broken)."""
    builder = _Builder(schema or {}, decoder)
    root = builder.slot(schema, "") if schema is not None else Slot()
    clauses = [syntax_clause(mode, json_reply), *builder.clauses]
    monotone: list[tuple[int, Monotonicity]] = []
    for index, cond in enumerate(post):
        where = f"post[{index}]"
        if not getattr(cond, "monotone", False):
            clauses.append(PrefixClause(where, "post", False, "not marked monotone: judged on the whole output"))
            continue
        found = monotonicity(cond.assert_, cond.when, schema)
        if found.problem is None:
            monotone.append((index, found))
        clauses.append(PrefixClause(where, "post", found.problem is None, found.problem or "monotone in the output: "
                                    "refused as soon as the text written breaks it"))
    return PrefixPlan(root, tuple(clauses), tuple(monotone))


def clause_label(c: PrefixClause, post_ids: Sequence[str | None] = ()) -> str:
    """A clause as `check -v` lists it: `output.label: the Literal values`, `post[0] 'short'`, `the reply: JSON syntax`."""
    from contractstudio.analysis.structure import clause_name

    if c.keyword == "post":
        index = int(c.path[5:-1])
        cid = post_ids[index] if index < len(post_ids) else None
        return f"{c.path} '{cid}'" if cid else c.path
    where = "the reply" if not c.path else "output" + "".join(
        "[*]" if p == "*" else "." + p.replace("~2", "*").replace("~1", "/").replace("~0", "~") for p in c.path.split("/")[1:])
    return f"{where}: {clause_name(c.keyword, c.value)}"


def prefix_lines(plan: PrefixPlan, post_ids: Sequence[str | None] = ()) -> list[str]:
    """The clauses grouped by what a streaming reply does with them: `stops the reply early: ...`, `checked after ...`."""
    out = []
    for early, words in ((True, EARLY), (False, AFTER)):
        found = [c for c in plan.clauses if c.early == early and (early or c.keyword != "json")]
        if found:
            out.append(f"{words}: " + "; ".join(dict.fromkeys(clause_label(c, post_ids) for c in found)))
    return out
