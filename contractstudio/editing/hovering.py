"""Hover: what the thing under the cursor is, in markdown.

A finding under the cursor shows its rule's documentation; a name shows what
it names (a type's schema, a field's type and description, a step's action
with what it requires and ensures and the state known there); a key shows its
one-line doc from the document models.
"""

from __future__ import annotations

import typing
from typing import Any

from contractstudio.analysis.check import FileReport, Loaded
from contractstudio.analysis.facts import expression_sites, state_flow, step_graph, type_system
from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.positions import value_span
from contractstudio.analysis.prefix_decidable import AFTER, EARLY, clause_label
from contractstudio.analysis.shape import annotation_at
from contractstudio.analysis.structure import WORDS, field_of, names
from contractstudio.documents.actions import action_catalog
from contractstudio.documents.models import KINDS, Agent, Pipeline, ToolSet
from contractstudio.documents.structured_outputs import path_parts
from contractstudio.documents.type_syntax import TypeSyntaxError, parse_type
from contractstudio.editing.completion import action_doc, type_label
from contractstudio.editing.cursor import document_at, locate
from contractstudio.editing.expression_help import FUNCTION_DOCS
from contractstudio.editing.items import Hover
from contractstudio.editing.symbols import Occurrence, expression_pieces, occurrence_at, recorded
from contractstudio.editing.text import rows
from contractstudio.findings.diagnostics import RULES, Diagnostic, Span

STEP_KEYS = {
    "prompt": "The prompt a `call_model` step sends (a router name from `routers:` makes the step a router).",
    "on_other": "The step for a reply that starts with no known prefix.",
}


def rule_doc(d: Diagnostic) -> str:
    """Markdown for a finding: the rule's code, name and summary, the message and the hint."""
    rule = RULES.get(d.code)
    head = f"**{d.code}** `{d.name}` ({d.severity})"
    parts = [head, d.message]
    if rule is not None and rule.summary:
        parts.append(f"*{rule.summary}*")
    if d.hint:
        parts.append(f"Hint: {d.hint}")
    return "\n\n".join(parts)


def _covers(d: Diagnostic, line: int, column: int) -> bool:
    if not d.line <= line <= d.end_line:
        return False
    if d.line == line and column < d.column:
        return False
    return not (d.end_line == line and column > d.end_column)


def hover(report: FileReport, line: int, column: int, names: bool = True) -> Hover | None:
    """Markdown about the position (None when there is nothing to say); `names`: also the named thing there (a pass
    over its whole document the first time: editing/symbols.py), else its findings only."""
    found = [d for d in report.diagnostics if _covers(d, line, column)]
    loaded = document_at(report, line) if names else None
    parts: list[str] = []
    span: Span | None = None
    if loaded is not None:
        occ = occurrence_at(loaded, line, column)
        if occ is not None:
            text = describe(loaded, occ)
            if text:
                parts.append(text)
                span = occ.span
        if not parts:
            hit = _expression_name(loaded, line, column) or _key(loaded, report, line, column)
            if hit is not None:
                parts.append(hit[0])
                span = hit[1]
    for d in found:
        parts.append(rule_doc(d))
        span = span or Span(d.line, d.column, d.end_line, d.end_column)
    if not parts or span is None:
        return None
    return Hover("\n\n---\n\n".join(parts), span)


def describe(loaded: Loaded, occ: Occurrence) -> str:
    """Markdown about a named thing."""
    model = loaded.model
    if occ.kind == "type":
        types = type_system(loaded)
        if not types.declared(occ.name):
            return f"type `{occ.name}` is not declared"
        return f"```text\n{types.schema_text(occ.name)}\n```" + _structure(loaded, None, None, occ.name) \
            + _streaming(loaded, None, None, occ.name)
    if occ.kind == "field":
        types = type_system(loaded)
        spec = (types.fields(occ.owner) or {}).get(occ.name)
        if spec is None:
            return ""
        t = types.field_type(occ.owner, occ.name)
        state = "required" if spec.required else f"optional, default {spec.default!r}"
        text = f"**{occ.owner}.{occ.name}**: `{t}` ({state})" + (f"\n\n{spec.description}" if spec.description else "")
        return text + _structure(loaded, occ.owner, occ.name) + _streaming(loaded, occ.owner, occ.name)
    if isinstance(model, Pipeline):
        return _pipeline(loaded, model, occ)
    if isinstance(model, Agent):
        return _agent(model, occ)
    if isinstance(model, ToolSet) and occ.kind == "param":
        tool = next((t for t in model.tools if t.name == occ.owner), None)
        spec = tool.params.get(occ.name) if tool else None
        if spec is not None:
            return f"**{occ.owner}({occ.name})**: `{spec.type}`" + (f"\n\n{spec.description}" if spec.description else "")
    if occ.kind == "tool" and isinstance(model, ToolSet):
        tool = next((t for t in model.tools if t.name == occ.name), None)
        if tool is not None:
            params = ", ".join(f"{n}: {s.type}" for n, s in tool.params.items())
            return f"**tool {tool.name}**({params})" + (f"\n\n{tool.description}" if tool.description else "")
    return ""


def _structure(loaded: Loaded, owner: str | None, name: str | None, output: str | None = None) -> str:
    """Who enforces a field's clauses (or, for the output type, the whole reply's) for the contract's model."""
    if not isinstance(loaded, LoadedContract):
        return ""
    found = loaded.structure
    if found is None or (output is not None and output != loaded.output_type):
        return ""
    clauses = found.by_field.get((owner, name))
    if not clauses:
        return ""
    c = found.compiled
    head = f"**structured output** with `{found.model}` ({c.mode}{' strict' if c.strict else ''})"
    if output is not None:
        head = f"**{found.summary()}**\n\nthe whole reply:"
    groups = {e: [x for x in clauses if x.enforcement == e] for e in WORDS}
    lines = [f"- {WORDS[e]}: {names(xs)}" + (f" ({'; '.join(dict.fromkeys(x.reason for x in xs))})" if e != "decoder" else "")
             for e, xs in groups.items() if xs]
    return "\n\n" + head + "\n\n" + "\n".join(lines)


def _streaming(loaded: Loaded, owner: str | None, name: str | None, output: str | None = None) -> str:
    """What a streaming reply does with a field's clauses (or, for the output type, the whole reply's and the post
    conditions'): stops the reply early, or checked after the reply (analysis/prefix_decidable.py)."""
    if not isinstance(loaded, LoadedContract) or (output is not None and output != loaded.output_type):
        return ""
    plan = loaded.prefix
    try:
        root = parse_type(loaded.contract.output)
    except TypeSyntaxError:
        return ""
    types = loaded.types
    if output is not None:
        mine = [c for c in plan.clauses if not c.path or c.keyword == "post"]
    else:
        mine = [c for c in plan.clauses if c.path and c.keyword != "post"
                and field_of(types, root, path_parts(c.path)) == (owner, name)]
    ids = [c.id for c in loaded.contract.post]
    lines = [f"- {words}: " + ", ".join(dict.fromkeys(clause_label(c, ids).split(": ")[-1] for c in found))
             for early, words in ((True, EARLY), (False, AFTER))
             if (found := [c for c in mine if c.early == early and (early or c.keyword != "json")])]
    return "\n\n**streamed reply**\n\n" + "\n".join(lines) if lines else ""


def _pipeline(loaded: Loaded, model: Pipeline, occ: Occurrence) -> str:
    if occ.kind == "step":
        sg, flow = step_graph(loaded), state_flow(loaded)
        step = sg.steps.get(occ.name) if sg else None
        if step is None or sg is None:
            return f"`{occ.name}` is not a step"
        lines = [f"**step {step.id}**: action `{step.action}`"]
        spec = sg.catalog.get(step.action)
        if spec is not None:
            lines.append(action_doc(spec))
        routes = sg.routes.get(step.id, [])
        if routes:
            lines.append("routes: " + ", ".join(f"{r.label} → {r.target.replace(chr(0), '')}" for r in routes))
        if flow is not None and step.id in flow.known:
            known = flow.names(flow.known[step.id])
            lines.append("state set on every path here: " + (", ".join(known) or "nothing"))
        elif sg.entry is not None and step.id not in sg.reachable():
            lines.append("not reachable from the entry step")
        return "\n\n".join(lines)
    if occ.kind == "router" and occ.name in model.routers:
        router = model.routers[occ.name]
        return f"**router {occ.name}** emits: " + ", ".join(f"`{p}`" for p in router.prefixes) + (
            f"\n\n{router.description}" if router.description else "")
    if occ.kind == "action":
        spec = action_catalog(model).get(occ.name)
        return f"**action {occ.name}**\n\n{action_doc(spec)}" if spec else ""
    return ""


def _agent(model: Agent, occ: Occurrence) -> str:
    if occ.kind == "tool":
        tool = next((t for t in model.tools if t.name == occ.name), None)
        if tool is None:
            return f"tool `{occ.name}` is not declared"
        params = ", ".join(f"{n}: {p if isinstance(p, str) else p.type}" for n, p in tool.params.items())
        return f"**tool {tool.name}**({params})" + (f"\n\n{tool.description}" if tool.description else "")
    if occ.kind == "policy":
        p = next((p for p in model.policies if p.id == occ.name), None)
        if p is None:
            return f"policy `{occ.name}` is not declared"
        ref = p.require or p.forbid
        what = "requires" if p.require else "forbids"
        target = (ref.tool or f"pattern {ref.tool_pattern!r}") if ref else "?"
        scope = ", ".join(p.scope) if p.scope is not None else "every task"
        return f"**policy {p.id}** {what} {target} on {scope}" + (f"\n\n{p.description}" if p.description else "")
    if occ.kind == "task":
        t = next((t for t in model.tasks if t.id == occ.name), None)
        if t is None:
            return f"task `{occ.name}` is not declared"
        return f"**task {t.id}**: oracle `{t.oracle}`, {t.llm_calls} LLM call(s)" + (f"\n\n{t.description}" if t.description else "")
    return ""


def _expression_name(loaded: Loaded, line: int, column: int) -> tuple[str, Span] | None:
    """A name or function inside an expression (`input`, `len`)."""
    for site in expression_sites(loaded):
        if not site.path:
            continue
        node_span = loaded.span(site.path)
        if not node_span.line <= line <= node_span.end_line:
            continue
        for src, offset in expression_pieces(site):
            rec = recorded(src, site.scope, site.types)
            if rec is None:
                continue
            for start, end, name in rec.names + rec.functions:
                span = value_span(loaded, site.path, offset + start, offset + end)
                if span.line == line and span.column <= column <= span.end_column:
                    t = site.scope.get(name) if (start, end, name) in rec.names else None
                    if t is not None:
                        return f"**{name}**: `{t}`", span
                    if name in FUNCTION_DOCS:
                        return f"**{name}()**: {FUNCTION_DOCS[name]}", span
    return None


def _key(loaded: Loaded, report: FileReport, line: int, column: int) -> tuple[str, Span] | None:
    """A key of the format (or a value whose key explains it): its type and one-line doc."""
    text = report.text
    cursor = locate(text, line, column, report)
    cls = KINDS.get(loaded.kind or "")
    if cursor is None or cls is None:
        return None
    if cursor.role == "key":
        name = rows(text)[line - 1][cursor.word_span.column - 1 : cursor.word_span.end_column - 1]
        path, span = cursor.path + (name,), cursor.word_span
    else:
        path, span = cursor.path, cursor.value_span or cursor.word_span
    if not path or not isinstance(path[-1], str):
        return None
    owner: Any = annotation_at(cls, path[:-1]) if len(path) > 1 else cls
    owner = _model_of(owner)
    key = path[-1]
    if owner is not None:
        info = next((f for n, f in owner.model_fields.items() if key in (n, f.alias)), None)
        if info is not None:
            return f"**{key}**: `{type_label(info.annotation)}`" + (f"\n\n{info.description}" if info.description else ""), span
    if len(path) == 3 and path[0] == "steps":
        if key in STEP_KEYS:
            return f"**{key}**\n\n{STEP_KEYS[key]}", span
        if key.startswith("on_"):
            return f"**{key}**: the step a reply of route `{key[3:]}` goes to", span
        if key.endswith("_prefix"):
            return f"**{key}**: the prefix that selects route `{key[:-7]}` (first match wins)", span
    return None


def _model_of(ann: Any) -> Any:
    if isinstance(ann, type):
        return ann if hasattr(ann, "model_fields") else None
    for a in typing.get_args(ann):
        if isinstance(a, type) and hasattr(a, "model_fields"):
            return a
    return None
