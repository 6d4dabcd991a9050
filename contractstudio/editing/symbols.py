"""Every named thing of a document and every place that names it, with exact spans.

Step ids, type names, fields, tool names, policy and task ids, router and
action names, tool parameters: each occurrence is a definition (where the name
is declared) or a reference (a `next:`, a type string, an `output.score` inside
an expression, a key of an example input ...). Definition, references, rename
and hover are lookups in this one index, built once per analysis.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from contractstudio.analysis.by_entry import ENTRY_EDIT
from contractstudio.analysis.check import Loaded
from contractstudio.analysis.facts import ExpressionSite, expression_sites, memo, type_system
from contractstudio.analysis.loaded_agent import OUTPUT_TYPE
from contractstudio.analysis.positions import value_span
from contractstudio.collector import paused_gc
from contractstudio.documents.models import Contract
from contractstudio.documents.type_syntax import ListOf, Ref, TypeExpr, Union, refs, without_none
from contractstudio.documents.types import TypeSystem
from contractstudio.editing.symbol_index import MEMO_KEY, Occurrence, Symbols, carried, list_key
from contractstudio.editing.text import rows
from contractstudio.expressions import TemplateField, template_fields
from contractstudio.expressions.checker import Checker
from contractstudio.expressions.syntax import ExprIssue, parse
from contractstudio.findings.diagnostics import Span
from contractstudio.reading.source import MapNode, Node, ScalarNode, SeqNode, inner_span

# Words of the type language that are not declared type names.
TYPE_WORDS = frozenset("list List dict Dict Literal Optional str int float bool any none None Any null string integer "
                       "number boolean True False".split())
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def occurrences(loaded: Loaded) -> Symbols:
    """Every occurrence in one document (an index computed once per analysis; after an analysis per entry, from the
    last one's index with only the edited entries collected again: editing/symbol_index.py)."""
    found = memo(loaded, MEMO_KEY, lambda: _index(loaded))
    loaded.memo.pop(ENTRY_EDIT, None)  # the analyses it was carried from are no longer needed
    return found


def occurrence_at(loaded: Loaded, line: int, column: int) -> Occurrence | None:
    """The occurrence under a 1-based position (the end of a name counts: the cursor just after it)."""
    return occurrences(loaded).at(line, column)


def same_thing(loaded: Loaded, occ: Occurrence) -> list[Occurrence]:
    """Every occurrence of the thing `occ` names, definitions first."""
    found = occurrences(loaded).named(occ.identity)
    return sorted(found, key=lambda o: (not o.definition, o.span.line, o.span.column))


def definition_of(loaded: Loaded, kind: str, name: str, owner: str = "") -> Occurrence | None:
    """The first declaration of a name of one kind, or None."""
    return next((o for o in same_thing(loaded, Occurrence(kind, name, Span(1, 1, 1, 1), False, owner)) if o.definition), None)


# ----------------------------------------------------------------- collection


def name_span(node: Node, text: str) -> Span | None:
    """The characters of a single-line scalar's value (inside its quotes), or None for other nodes."""
    if not isinstance(node, ScalarNode):
        return None
    line, column, end_line, _, _, value, style, _ = node  # a tuple: unpacked at once (126,844 names in a 5 MB file)
    if not isinstance(value, str) or line != end_line:
        return None
    if style == "" and value:  # a plain scalar's value is its characters: what inner_span gives, without its checks
        return Span(line, column, line, column + len(value))
    span = inner_span(node, 0, len(value), text)
    return span if span.end_column - span.column == len(node.value) else None


def _child(node: Node | None, *path: Any) -> Node | None:
    for part in path:
        if isinstance(node, MapNode):
            node = node.get(part)
        elif isinstance(node, SeqNode) and isinstance(part, int) and 0 <= part < len(node.items):
            node = node.items[part]
        else:
            return None
    return node


def _items(node: Node | None) -> list[tuple[int, Node]]:
    return list(enumerate(node.items)) if isinstance(node, SeqNode) else []


def _pairs(node: Node | None) -> list[tuple[Node, Node]]:
    return list(node.pairs) if isinstance(node, MapNode) else []


class _Collector:
    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded
        self.text = loaded.text
        self.root = loaded.doc.root
        self.out: list[Occurrence] = []

    def add(self, kind: str, node: Node | None, definition: bool, path: tuple[Any, ...], owner: str = "") -> None:
        if node is None:
            return
        span = name_span(node, self.text)
        if span is not None and isinstance(node, ScalarNode):
            self.out.append(Occurrence(kind, str(node.value), span, definition, owner, path))

    def keys(self, kind: str, mapping: Node | None, path: tuple[Any, ...], owner: str = "", definition: bool = True) -> None:
        for k, _ in _pairs(mapping):
            if isinstance(k, ScalarNode):
                self.add(kind, k, definition, path + (k.value,), owner)

    def type_string(self, node: Node | None, path: tuple[Any, ...]) -> None:
        """Type names inside a type string (`list[DocSnippet] | None`)."""
        if not isinstance(node, ScalarNode) or not isinstance(node.value, str):
            return
        value = node.value
        masked = _QUOTED.sub(lambda m: " " * len(m.group(0)), value)  # Literal['a'] values are not names
        for m in _IDENT.finditer(masked):
            if m.group(0) in TYPE_WORDS:
                continue
            span = value_span(self.loaded, path, m.start(), m.end())
            self.out.append(Occurrence("type", m.group(0), span, False, "", path))


def _index(loaded: Loaded) -> Symbols:
    # Hundreds of thousands of small objects with no cycles: the cyclic collector would rescan the heap while they
    # are made (half the time of a 5 MB document's collection).
    with paused_gc():
        c = _Collector(loaded)
        key = list_key(loaded)
        seq = _child(c.root, key) if key else None
        entry = _ENTRIES[key](c) if isinstance(seq, SeqNode) and loaded.model is not None else None
        if entry is None or not isinstance(seq, SeqNode) or any(s.path[:1] == (key,) for s in expression_sites(loaded)):
            _outside(c, "")
            return Symbols(c.out)
        _outside(c, key)

        def collect(k: int, node: Node) -> tuple[Occurrence, ...]:
            c.out = []
            entry(k, node)
            return tuple(c.out)

        outside, items = c.out, seq.items
        found = carried(loaded.memo, key, len(items))
        if found is not None:  # an analysis per entry: the entries edited since the last index are collected again
            base, edited = found
            return base.after(outside, items, {k: collect(k, items[k]) for k in sorted(edited)})
        return Symbols(outside, key, items, [(node.line, collect(k, node)) for k, node in enumerate(items)])


def _outside(c: _Collector, skip: str) -> None:
    """Every occurrence but those in the entries of the long list `skip` ("": none skipped)."""
    kind = c.loaded.kind
    if kind == "contract":
        _contract(c, skip)
    elif kind == "pipeline":
        _pipeline(c, skip)
    elif kind == "agent":
        _agent(c)
    elif kind == "tools":
        _tools(c)
    if c.loaded.model is not None:
        _expressions(c)


EntryCollector = Callable[[int, Node], None]


def _contract(c: _Collector, skip: str) -> None:
    root = c.root
    types = _child(root, "types")
    for k, decl in _pairs(types):
        if not isinstance(k, ScalarNode):
            continue
        c.add("type", k, True, ("types", k.value))
        fields = _child(decl, "fields")
        c.keys("field", fields, ("types", k.value, "fields"), owner=str(k.value))
        for fk, spec in _pairs(fields):
            c.type_string(_child(spec, "type"), ("types", k.value, "fields", fk.value, "type"))  # type: ignore[attr-defined]
    for role in ("input", "output", "intermediate"):
        c.type_string(_child(root, role), (role,))
    model = c.loaded.model
    if not isinstance(model, Contract):
        return
    system = type_system(c.loaded)
    out, mid, inp = system.declared(model.output or ""), system.declared(model.intermediate or ""), system.declared(model.input or "")
    if out:
        c.keys("field", _child(root, "fallback"), ("fallback",), owner=out, definition=False)
        unique = _unique_fields(system, out)
        for i, _ in _items(_child(root, "scenarios")):
            _data_keys(c, _child(root, "scenarios", i, "expect", "output"), ("scenarios", i, "expect", "output"), Ref(out), system)
            for j, reply in _items(_child(root, "scenarios", i, "responses")):
                _reply_keys(c, reply, ("scenarios", i, "responses", j), unique)
    if mid:
        c.keys("field", _child(root, "act", "assign"), ("act", "assign"), owner=mid, definition=False)
    if inp:
        example = _example_keys(c)
        if example is not None and skip != "examples":
            for i, node in _items(_child(root, "examples")):
                example(i, node)
        for i, _ in _items(_child(root, "scenarios")):
            _data_keys(c, _child(root, "scenarios", i, "input"), ("scenarios", i, "input"), Ref(inp), system)


def _example_keys(c: _Collector) -> EntryCollector | None:
    """What collects one example's occurrences (the keys of its input), or None: the contract's input is not declared."""
    model = c.loaded.model
    system = type_system(c.loaded)
    inp = system.declared(model.input or "") if isinstance(model, Contract) else None
    if not inp:
        return None
    t = Ref(inp)

    def example(i: int, node: Node) -> None:
        _data_keys(c, _child(node, "input"), ("examples", i, "input"), t, system)

    return example


def _data_keys(c: _Collector, node: Node | None, path: tuple[Any, ...], t: TypeExpr, system: TypeSystem, depth: int = 0) -> None:
    """Keys of literal data (example inputs, expected outputs) that name fields of its declared type."""
    t = without_none(t)
    if depth > 32 or node is None:
        return
    if isinstance(t, ListOf):
        for i, item in _items(node):
            _data_keys(c, item, path + (i,), t.item, system, depth + 1)
        return
    options = t.options if isinstance(t, Union) else (t,)
    for option in options:
        name = system.declared(option)
        field_types = system.field_types(option) if name else None
        if not name or field_types is None or not isinstance(node, MapNode):
            continue
        for k, v in node.pairs:
            if isinstance(k, ScalarNode) and k.value in field_types:
                c.add("field", k, False, path + (k.value,), owner=name)
                _data_keys(c, v, path + (k.value,), field_types[k.value], system, depth + 1)


def _unique_fields(system: TypeSystem, root: str) -> dict[str, str]:
    """Field name -> its type, for names only one type reachable from `root` declares (JSON keys then say whose they are)."""
    seen: dict[str, list[str]] = {}
    todo, done = [root], set()
    while todo:
        name = todo.pop()
        if name in done or not system.declared(name):
            continue
        done.add(name)
        for field, t in (system.field_types(name) or {}).items():
            seen.setdefault(field, []).append(name)
            todo.extend(refs(t))
    return {f: owners[0] for f, owners in seen.items() if len(owners) == 1}


_JSON_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')


def _reply_keys(c: _Collector, node: Node, path: tuple[Any, ...], unique: dict[str, str]) -> None:
    """Keys of a scripted JSON reply that name output fields (a JSON string followed by ':' is always a key)."""
    if not isinstance(node, ScalarNode) or not isinstance(node.value, str):
        return
    raw = _escaped_offsets(node, c.text) if node.style == '"' else None
    for m in _JSON_KEY.finditer(node.value):
        owner = unique.get(m.group(1))
        if owner is None:
            continue
        if raw is not None:
            span = Span(node.line, node.column + 1 + raw[m.start(1)], node.line, node.column + 1 + raw[m.end(1)])
        else:
            span = value_span(c.loaded, path, m.start(1), m.end(1))
        c.out.append(Occurrence("field", m.group(1), span, False, owner, path))


_ESCAPE_LENGTH = {"x": 4, "u": 6, "U": 10}


def _escaped_offsets(node: ScalarNode, text: str) -> list[int] | None:
    """For a one-line double-quoted scalar: the raw column (after the quote) of each character of its value."""
    if node.line != node.end_line:
        return None
    raw = rows(text)[node.line - 1][node.column : node.end_column - 2]
    offsets: list[int] = []
    i = 0
    while i < len(raw):
        offsets.append(i)
        i += _ESCAPE_LENGTH.get(raw[i + 1], 2) if raw[i] == "\\" and i + 1 < len(raw) else 1
    offsets.append(len(raw))
    return offsets if len(offsets) == len(node.value) + 1 else None


def _pipeline(c: _Collector, skip: str) -> None:
    root = c.root
    c.keys("router", _child(root, "routers"), ("routers",))
    c.keys("action", _child(root, "actions"), ("actions",))
    c.add("step", _child(root, "entry_step_id"), False, ("entry_step_id",))
    if skip != "steps":
        step = _step_names(c)
        for i, node in _items(_child(root, "steps")):
            step(i, node)


def _step_names(c: _Collector) -> EntryCollector:
    """What collects one step's occurrences: its id, its targets, the router or action it names."""
    root = c.root
    routers = {k.value for k, _ in _pairs(_child(root, "routers")) if isinstance(k, ScalarNode)}
    actions = {k.value for k, _ in _pairs(_child(root, "actions")) if isinstance(k, ScalarNode)}

    def step(i: int, node: Node) -> None:
        c.add("step", _child(node, "id"), True, ("steps", i, "id"))
        for k, v in _pairs(node):
            key = k.value if isinstance(k, ScalarNode) else None
            if key == "next" or (isinstance(key, str) and key.startswith("on_")):
                c.add("step", v, False, ("steps", i, key))
            elif key == "prompt" and isinstance(v, ScalarNode) and v.value in routers:
                c.add("router", v, False, ("steps", i, key))
            elif key == "action" and isinstance(v, ScalarNode) and v.value in actions:
                c.add("action", v, False, ("steps", i, key))

    return step


_ENTRIES: dict[str, Callable[[_Collector], EntryCollector | None]] = {"steps": _step_names, "examples": _example_keys}


def _agent(c: _Collector) -> None:
    root = c.root
    for i, tool in _items(_child(root, "tools")):
        c.add("tool", _child(tool, "name"), True, ("tools", i, "name"))
    c.keys("field", _child(root, "schema", "fields"), ("schema", "fields"), owner=OUTPUT_TYPE)
    for i, policy in _items(_child(root, "policies")):
        c.add("policy", _child(policy, "id"), True, ("policies", i, "id"))
        for part in ("require", "forbid"):
            c.add("tool", _child(policy, part, "tool"), False, ("policies", i, part, "tool"))
        for j, item in _items(_child(policy, "scope")):
            c.add("task", item, False, ("policies", i, "scope", j))
        for j, item in _items(_child(policy, "conflicts_with")):
            c.add("policy", item, False, ("policies", i, "conflicts_with", j))
    for i, task in _items(_child(root, "tasks")):
        c.add("task", _child(task, "id"), True, ("tasks", i, "id"))
        for j, step in _items(_child(task, "trajectory")):
            c.add("tool", _child(step, "expect_tool"), False, ("tasks", i, "trajectory", j, "expect_tool"))
            c.add("field", _child(step, "expect_field"), False, ("tasks", i, "trajectory", j, "expect_field"), owner=OUTPUT_TYPE)


def _tools(c: _Collector) -> None:
    for i, tool in _items(_child(c.root, "tools")):
        name = _child(tool, "name")
        c.add("tool", name, True, ("tools", i, "name"))
        owner = str(name.value) if isinstance(name, ScalarNode) else ""
        c.keys("param", _child(tool, "params"), ("tools", i, "params"), owner=owner)


# ----------------------------------------------------------------- inside expressions


class _Recorder(Checker):
    """The expression checker, also noting each field access (with its receiver's type) and each name."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.fields: list[tuple[int, int, TypeExpr, str]] = []
        self.names: list[tuple[int, int, str]] = []
        self.functions: list[tuple[int, int, str]] = []

    def field(self, node: ast.Attribute, t: TypeExpr) -> TypeExpr:
        start, end = self.attr_span(node)
        self.fields.append((start, end, t, node.attr))
        return super().field(node, t)

    def function(self, node: ast.Call, name: str, args: list[tuple[TypeExpr, Any]]) -> TypeExpr:
        start, end = self.p.span(node.func)
        self.functions.append((start, end, name))
        return super().function(node, name, args)

    def v_Name(self, node: ast.Name, scope: dict[str, TypeExpr]) -> tuple[TypeExpr, Any]:
        if scope.get(node.id) is self.scope.get(node.id):  # not a comprehension variable shadowing it
            start, end = self.p.span(node)
            self.names.append((start, end, node.id))
        return super().v_Name(node, scope)


def recorded(src: str, scope: dict[str, TypeExpr], types: TypeSystem) -> _Recorder | None:
    """The checker's walk of one expression with what it saw, or None when it does not parse."""
    parsed = parse(src)
    if isinstance(parsed, ExprIssue):
        return None
    rec = _Recorder(parsed, scope, types)
    try:
        rec.run()
    except RecursionError:
        return None
    return rec


def expression_pieces(site: ExpressionSite) -> list[tuple[str, int]]:
    """(expression, offset in the scalar) of a site: itself, or each placeholder of a template."""
    if not site.template:
        return [(site.src, 0)]
    parts, _ = template_fields(site.src)
    return [(p.expr, p.start) for p in parts if isinstance(p, TemplateField)]


def _expressions(c: _Collector) -> None:
    owner_tool = _tool_by_path(c)
    for site in expression_sites(c.loaded):
        for src, offset in expression_pieces(site):
            rec = recorded(src, site.scope, site.types)
            if rec is None:
                continue
            for start, end, t, attr in rec.fields:
                base = without_none(t)
                for option in base.options if isinstance(base, Union) else (base,):
                    name = site.types.declared(option)
                    if name and attr in (site.types.field_types(option) or {}):
                        span = value_span(c.loaded, site.path, offset + start, offset + end)
                        c.out.append(Occurrence("field", attr, span, False, name, site.path))
            tool = owner_tool.get(site.path[:2]) if c.loaded.kind == "tools" else None
            if tool is not None:
                for start, end, ident in rec.names:
                    if ident in site.scope:
                        span = value_span(c.loaded, site.path, offset + start, offset + end)
                        c.out.append(Occurrence("param", ident, span, False, tool, site.path))


def _tool_by_path(c: _Collector) -> dict[tuple[Any, ...], str]:
    out: dict[tuple[Any, ...], str] = {}
    for i, tool in _items(_child(c.root, "tools")):
        name = _child(tool, "name")
        if isinstance(name, ScalarNode):
            out[("tools", i)] = str(name.value)
    return out
