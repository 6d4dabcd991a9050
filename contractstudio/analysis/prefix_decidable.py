"""Which clauses of a contract a reply's prefix can already break (issue 37, point 2): the one classification.

A clause is decidable on a prefix when some prefix of a reply can show that no continuation passes it: a string
value that no Literal value starts with, a string longer than its `max_length`, a list past its `max_items`, a number
outside its bounds once it is written out, text that can no longer become JSON. Every other clause (`min_length` of a
string still being written, a required field, a `post` condition not marked monotone) is checked after the reply.
The analyzer shows this classification (hover, `check -v`); the runtime's prefix watch (runtime/prefix_watch.py)
is built from the same tree, so what the author is told stops a reply early is what stops it.

The tree is read off the output type's JSON Schema. A value's place holds its options (a union has several); a
value breaks a clause only when it breaks every option that takes its JSON kind, so a union never stops a reply one
of its members accepts. Kinds pydantic coerces (a number written as a string, `true` for an int) are never judged
here: only strings, null, objects and arrays have a kind an option refuses outright.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
        return not self.options or any(o.kinds == ANY_KIND and o.enum is None and o.max_length is None
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

    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}
        self.made: dict[str, Slot] = {}
        self.clauses: list[PrefixClause] = []
        self.seen_paths: set[tuple[str, str]] = set()

    def clause(self, path: str, keyword: str, early: bool, reason: str, value: Any = None) -> None:
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
            self._after(node, path, ("minLength", "pattern", "format"))
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
            bounds = tuple((k, float(node[k])) for k in ("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum")
                           if isinstance(node.get(k), (int, float)) and not isinstance(node.get(k), bool))
            for k, v in bounds:
                self.clause(path, k, True, "refused as soon as the number is written out", v)
            return Option(bounds=bounds, integer=kinds == ["integer"])
        return Option()

    def _after(self, node: dict[str, Any], path: str, keywords: tuple[str, ...]) -> None:
        for k in keywords:
            if k in node:
                self.clause(path, k, False, "decided by the whole value", node[k])


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1").replace("*", "~2")


@dataclass(frozen=True)
class PrefixPlan:
    """The output's slot tree and its clauses, each classified."""

    root: Slot
    clauses: tuple[PrefixClause, ...]

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


def prefix_plan(schema: dict[str, Any] | None, *, mode: str = "off", json_reply: str = "lenient") -> PrefixPlan:
    """The classification of an output type's clauses (its JSON Schema; None when it cannot be written)."""
    builder = _Builder(schema or {})
    root = builder.slot(schema, "") if schema is not None else Slot()
    return PrefixPlan(root, (syntax_clause(mode, json_reply), *builder.clauses))
