"""Quick fixes (code actions) for findings whose fix is knowable, as minimal text edits.

Apply a did-you-mean; add a missing required key with a placeholder, a field's
`description:`, a router's `on_other` or `on_<route>`, a step's required key, a
step stub for an unknown target, a declared type for an undeclared name;
`on_failure: raise` or a `fallback:` built from the output type; remove a
duplicate key; suppress with `# contractstudio: ignore[CODE]` on the line above.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from contractstudio.analysis.check import FileReport, Loaded
from contractstudio.analysis.facts import step_graph, type_system
from contractstudio.analysis.shape import annotation_at
from contractstudio.documents.models import KINDS, Contract, Pipeline
from contractstudio.editing.cursor import document_at
from contractstudio.editing.items import CodeAction, TextEdit
from contractstudio.editing.placeholders import expression_for, placeholder
from contractstudio.editing.yaml_text import add_entry, add_item, delete_entry, entry_text, walk
from contractstudio.expressions.kinds import kind_of
from contractstudio.findings.diagnostics import Diagnostic, Payload, Span
from contractstudio.reading.source import MapNode, Node, ScalarNode, SeqNode, node_at

_TOKEN = re.compile(r"[A-Za-z0-9_.\-\[\]:/]+")
_IGNORE = re.compile(r"#\s*contractstudio:\s*ignore\[([A-Z0-9_,\s]+)\]")


def code_actions(report: FileReport, diagnostics: list[Diagnostic] | None = None, *, span: Span | None = None) -> list[CodeAction]:
    """The fixes of the given findings (by default those of the report that touch `span`, or all)."""
    if diagnostics is None:
        diagnostics = [d for d in report.diagnostics if span is None or _touches(d, span)]
    lines = report.text.split("\n")
    actions: list[CodeAction] = []
    for d in diagnostics:
        loaded = document_at(report, d.line)
        found = list(fixes(d, loaded, lines)) if loaded is not None else []
        if loaded is not None and d.code == "YML002":
            found += _duplicate_key(d, loaded, lines)
        suppress = _suppress(d, report, lines)
        actions.extend(found)
        if suppress is not None:
            actions.append(suppress)
    # The obvious fix first, then real fixes of the worst findings, suppressions last.
    rank = {"error": 0, "warning": 1, "info": 2}
    return sorted(actions, key=lambda a: (a.title.startswith("Suppress"), not a.preferred,
                                          rank.get(a.diagnostic.severity if a.diagnostic else "info", 2)))


def _touches(d: Diagnostic, span: Span) -> bool:
    return not (d.end_line < span.line or d.line > span.end_line)


def fixes(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    """The fixes of one finding in its document."""
    payload = d.payload or Payload()
    if payload.suggestion and d.line == d.end_line:
        fix = _replace_token(d, payload.suggestion, lines)
        if fix is not None:
            yield fix
    maker = _BY_CODE.get(d.code)
    if maker is not None:
        yield from maker(d, loaded, lines)


def _replace_token(d: Diagnostic, new: str, lines: list[str]) -> CodeAction | None:
    text = lines[d.line - 1][d.column - 1 : d.end_column - 1]
    start, end = d.column, d.end_column
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text, start, end = text[1:-1], start + 1, end - 1
    if not _TOKEN.fullmatch(text) or text == new:
        return None
    return CodeAction(f"Change '{text}' to '{new}'", (TextEdit(Span(d.line, start, d.line, end), new),), d, preferred=True)


# ----------------------------------------------------------------- finding nodes


def _node_at(loaded: Loaded, line: int, column: int) -> tuple[tuple[Any, ...], Node] | None:
    """The deepest node that starts exactly at a position (keys count as their pair's path)."""
    best = None
    for path, node in walk(loaded.doc.root):
        if node.line == line and node.column == column:
            best = (path, node)
        if isinstance(node, MapNode):
            for k, v in node.pairs:
                if k.line == line and k.column == column and isinstance(k, ScalarNode):
                    return path + (k.value,), v
    return best


def _mapping_of_key(loaded: Loaded, line: int, column: int) -> tuple[tuple[Any, ...], MapNode] | None:
    """The mapping whose key is at a position."""
    for path, node in walk(loaded.doc.root):
        if isinstance(node, MapNode) and any(k.line == line and k.column == column for k, _ in node.pairs):
            return path, node
    return None


def _exact(loaded: Loaded, path: tuple[Any, ...]) -> Node | None:
    return node_at(loaded.doc.root, path)


# ----------------------------------------------------------------- per rule


def _missing_key(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    key = d.payload.key if d.payload else None
    hit = _mapping_of_key(loaded, d.line, d.column)
    if not key or hit is None:
        return
    path, mapping = hit
    if mapping.pairs and mapping.pairs[0][0].line != d.line:
        return
    cls = KINDS.get(loaded.kind or "")
    ann = annotation_at(cls, path + (key,)) if cls is not None else None
    value = placeholder(loaded, path, key, ann)
    yield CodeAction(f"Add '{key}: {value.splitlines()[0] if value.strip() else value}'", (add_entry(mapping, key, value, lines),), d)


def _describe(name: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").strip()
    return (words[:1].upper() + words[1:] + ".") if words else "What this field holds."


def _field_description(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    hit = _node_at(loaded, d.line, d.column)
    if hit is None or not isinstance(hit[1], MapNode):
        return
    path, spec = hit
    assert isinstance(spec, MapNode)
    yield CodeAction(f"Add a description to field '{path[-1]}'",
                     (add_entry(spec, "description", _describe(str(path[-1])), lines),), d)


def _step_of(loaded: Loaded, d: Diagnostic) -> tuple[tuple[Any, ...], MapNode] | None:
    hit = _mapping_of_key(loaded, d.line, d.column)
    if hit is None:  # the finding is on a value: its mapping is the one holding that pair
        for path, node in walk(loaded.doc.root):
            if isinstance(node, MapNode) and any(v.line == d.line and v.column == d.column for _, v in node.pairs):
                hit = (path, node)
    if hit is None or len(hit[0]) != 2 or hit[0][0] != "steps":
        return None
    return hit


def _target(loaded: Loaded, step: MapNode) -> str | None:
    """A step a new route can go to: one the router already uses, else a step that ends."""
    for k, v in step.pairs:
        if isinstance(k, ScalarNode) and str(k.value).startswith("on_") and isinstance(v, ScalarNode):
            return str(v.value)
    sg = step_graph(loaded)
    if sg is None:
        return None
    ends = [sid for sid, s in sg.steps.items() if s.end]
    candidates = ends or list(sg.steps)
    return candidates[0] if candidates else None


def _route_target(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    hit = _step_of(loaded, d)
    if hit is None:
        return
    _, step = hit
    target = _target(loaded, step)
    if target is None:
        return
    key = "on_other" if d.code == "RTE305" else (d.payload.key if d.payload else None)
    if not key:
        return
    yield CodeAction(f"Add '{key}: {target}'", (add_entry(step, key, target, lines),), d)


def _dead_end(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    """PIP105 on a step with no way on: it ends the pipeline (a loop with no exit is the author's to open)."""
    sid = d.payload.step if d.payload else None
    hit = _step_of(loaded, d)
    if not sid or hit is None:
        return
    yield CodeAction(f"End the pipeline at step '{sid}' (end: true)", (add_entry(hit[1], "end", "true", lines),), d)


def _step_key(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    key = d.payload.key if d.payload else None
    hit = _step_of(loaded, d)
    if not key or hit is None:
        return
    value = placeholder(loaded, hit[0], key, str)
    yield CodeAction(f"Add '{key}: {value}'", (add_entry(hit[1], key, value, lines),), d)


def _new_step(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    sid = d.payload.name if d.payload else None
    steps = loaded.node(("steps",))
    if not sid or not isinstance(steps, SeqNode) or not steps.items:
        return
    stub = [f"id: {sid}", "action: call_model", f"prompt: {sid}_prompt", "end: true"]
    yield CodeAction(f"Add a step '{sid}'", (add_item(steps, stub, lines),), d)


def _entry_step(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    model, root = loaded.model, loaded.doc.root
    if not isinstance(model, Pipeline) or not model.steps or not isinstance(root, MapNode) or model.entry_step_id is not None:
        return
    first = model.steps[0].id
    yield CodeAction(f"Add 'entry_step_id: {first}'", (add_entry(root, "entry_step_id", first, lines),), d)


def _declare_type(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    name = d.payload.name if d.payload else None
    root = loaded.doc.root
    if not name or not isinstance(loaded.model, Contract) or not isinstance(root, MapNode):
        return
    body = f"description: {_describe(name)}\nfields:\n  value: {{type: str, description: {_describe(name)[:-1]} value.}}"
    types = _exact(loaded, ("types",))
    if isinstance(types, MapNode) and types.pairs:
        edit = add_entry(types, name, body, lines)
    else:
        edit = add_entry(root, "types", entry_text(0, name, body).rstrip("\n"), lines)
    yield CodeAction(f"Declare type '{name}'", (edit,), d)


def _fallback(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    doc, root = loaded.model, loaded.doc.root
    if not isinstance(doc, Contract) or not isinstance(root, MapNode):
        return
    types = type_system(loaded)
    out = types.declared(doc.output or "")
    payload = d.payload or Payload()
    if payload.key == "fallback":  # there is no fallback at all
        node = _exact(loaded, ("on_failure",))
        if isinstance(node, ScalarNode):
            edit = TextEdit(node.span, "raise")
        else:
            edit = add_entry(root, "on_failure", "raise", lines)
        yield CodeAction("Set 'on_failure: raise'", (edit,), d)
        if out:
            fields = types.fields(out) or {}
            body = "\n".join(f"{n}: {expression_for(types, types.field_type(out, n))}" for n, s in fields.items() if s.required)
            yield CodeAction(f"Add a fallback built from {out}", (add_entry(root, "fallback", body + "\n", lines),), d)
        return
    fallback = _exact(loaded, ("fallback",))
    if payload.fields and out and isinstance(fallback, MapNode):
        edits = [add_entry(fallback, n, expression_for(types, types.field_type(out, n)), lines) for n in payload.fields]
        yield CodeAction("Add the missing fallback fields", (_joined(edits),), d)


def _assign(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    doc = loaded.model
    missing = d.payload.fields if d.payload else ()
    assign = _exact(loaded, ("act", "assign"))
    if not missing or not isinstance(doc, Contract) or not isinstance(assign, MapNode) or not doc.intermediate:
        return
    types = type_system(loaded)
    given = types.fields(doc.input or "") or {}
    edits = []
    for name in missing:
        value = f"input.{name}" if name in given else expression_for(types, types.field_type(doc.intermediate, name))
        edits.append(add_entry(assign, name, value, lines))
    yield CodeAction("Add the missing act.assign fields", (_joined(edits),), d)


def _joined(edits: list[TextEdit]) -> TextEdit:
    """Several insertions at the same place as one edit (editors refuse overlapping edits)."""
    return TextEdit(edits[0].span, "".join(e.new_text for e in edits))


def _duplicate_key(d: Diagnostic, loaded: Loaded, lines: list[str]) -> list[CodeAction]:
    hit = _mapping_of_key(loaded, d.line, d.column)
    if hit is None:
        return []
    _, mapping = hit
    index = next(i for i, (k, _) in enumerate(mapping.pairs) if k.line == d.line and k.column == d.column)
    edit = delete_entry(mapping, index, lines)
    if edit is None:
        return []
    key = mapping.pairs[index][0]
    return [CodeAction(f"Remove the duplicate key '{getattr(key, 'value', '')}'", (edit,), d)]


def _suppress(d: Diagnostic, report: FileReport, lines: list[str]) -> CodeAction | None:
    """`# contractstudio: ignore[CODE]` on its own line above the finding (or the code added to one there)."""
    if not 0 < d.line <= len(lines):
        return None
    above = lines[d.line - 2] if d.line >= 2 else ""
    m = _IGNORE.search(above)
    if m:
        codes = [c.strip() for c in m.group(1).split(",") if c.strip()]
        if d.code in codes:
            return None
        col = m.start(1) + 1
        return CodeAction(f"Suppress {d.code} here", (TextEdit(Span(d.line - 1, col, d.line - 1, m.end(1) + 1),
                                                                ", ".join(codes + [d.code])),), d, kind="quickfix")
    if _inside_multiline_scalar(report, d.line):
        return None
    line = lines[d.line - 1]
    indent = line[: len(line) - len(line.lstrip(" "))]
    return CodeAction(f"Suppress {d.code} here",
                      (TextEdit(Span(d.line, 1, d.line, 1), f"{indent}# contractstudio: ignore[{d.code}]\n"),), d)


def _inside_multiline_scalar(report: FileReport, line: int) -> bool:
    """True when a line is a continuation of a multi-line scalar (a comment line there would become text)."""
    for loaded in report.documents:
        for _, node in walk(loaded.doc.root):
            if isinstance(node, ScalarNode) and node.line < line <= node.end_line:
                return True
    return False


def _post_condition(d: Diagnostic, loaded: Loaded, lines: list[str]) -> Iterator[CodeAction]:
    """CON107: a first post condition on the output's first required field (a start the author edits)."""
    doc, root = loaded.model, loaded.doc.root
    if not isinstance(doc, Contract) or not isinstance(root, MapNode):
        return
    types = type_system(loaded)
    out = types.declared(doc.output or "")
    fields = [(n, types.field_type(out, n)) for n, s in (types.fields(out) or {}).items() if s.required] if out else []
    if not fields:
        return
    name, t = fields[0]
    kind = kind_of(t, types) if t is not None else "any"
    check = {"str": f"output.{name}.strip() != ''", "num": f"output.{name} >= 0", "list": f"len(output.{name}) > 0"}.get(
        kind, f"output.{name} is not None")
    body = f"- assert: \"{check}\"\n  message: {_describe(name)[:-1]} does not hold."
    yield CodeAction(f"Add a post condition on output.{name}", (add_entry(root, "post", body + "\n", lines),), d)


_BY_CODE = {
    "CON107": _post_condition,
    "SCH101": _missing_key,
    "CON104": _field_description,
    "RTE305": _route_target,
    "RTE301": _route_target,
    "PIP203": _step_key,
    "PIP105": _dead_end,
    "PIP102": _new_step,
    "PIP101": _entry_step,
    "REF201": _declare_type,
    "CON103": _fallback,
    "CON106": _assign,
}
