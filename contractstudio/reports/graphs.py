"""Step graphs as text (80-column terminals), Mermaid and Graphviz DOT.

All three read the same `layout()`: steps in layer order, edges labelled with
their routing prefixes, the entry and the end marked. The text form lists each
layer's steps with their outgoing routes rather than drawing boxes: routers
fan out to many targets, and a listing stays readable at any width.
"""

from __future__ import annotations

import json

from contractstudio.analysis.graph_layout import GraphLayout, layout
from contractstudio.analysis.step_graph import END, START, StepGraph
from contractstudio.documents.actions import CALL_MODEL
from contractstudio.safe_text import printable, shown_lines

LABEL_WIDTH = 22  # route labels wider than this push their arrow right instead of wrapping


def render_text(sg: StepGraph) -> str:
    """The step graph for a terminal: one block per step, layer by layer, routes as labelled arrows."""
    lay = layout(sg)
    back = {(e.source, e.target) for e in lay.edges if e.back}
    reach = sg.reachable()
    entry = sg.entry or "?"
    lines = [f"pipeline {sg.pipeline.name or '?'}: {len(sg.steps)} steps, entry {entry}", ""]
    digits = len(str(len(lay.layers)))
    for depth, row in enumerate(lay.layers):
        for node in row:
            num = f"{depth:>{digits}}"
            if node == START:
                lines.append(f"{num}  start ──▶ {entry}")
                continue
            if node == END:
                lines.append(f"{num}  end")
                continue
            step = sg.steps[node]
            head = f"{num}  {node}  [{step.action}]"
            prompt = step.raw.get("prompt")
            if step.action == CALL_MODEL and isinstance(prompt, str):
                head += f" prompt {prompt}"
            marks = [m for m, on in (("entry", node == sg.entry), ("end", step.end),
                                     ("unreachable", sg.entry is not None and node not in reach)) if on]
            if marks:
                head += f"  ({', '.join(marks)})"
            lines.append(head)
            routes = sg.routes[node]
            if not routes:
                lines.append(" " * (digits + 4) + "(no next, on_* or end: a dead end)")
            width = min(LABEL_WIDTH, max((len(r.label) for r in routes), default=0))
            for r in routes:
                pad = "─" * max(2, width - len(r.label) + 2)
                target = "end" if r.target == END else r.target
                note = ""
                if r.target != END and r.target not in sg.steps:
                    note = "  (no such step)"
                elif (node, r.target) in back:
                    note = "  ↺ loop"
                lines.append(" " * (digits + 4) + f"{r.label} {pad}▶ {target}{note}")
    return shown_lines(lines)


def visible(text: str) -> str:
    """Control characters (a newline in a routing prefix) as visible escapes: Mermaid and DOT are line-based."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _mermaid_text(text: str) -> str:
    return visible(text).replace('"', "#quot;")


def render_mermaid(sg: StepGraph) -> str:
    """A Mermaid flowchart: routers as diamonds, prefixes on the edges, start and end as circles."""
    lay = layout(sg)
    ids = {n.id: f"n{i}" for i, n in enumerate(lay.nodes)}
    lines = ["flowchart TD"]
    for n in lay.nodes:
        nid = ids[n.id]
        if n.kind in ("start", "end"):
            lines.append(f"  {nid}(({_mermaid_text(n.label)}))")
            continue
        text = _mermaid_text(f"{n.label}<br/>{n.action}")
        lines.append(f'  {nid}{{"{text}"}}' if n.kind == "router" else f'  {nid}["{text}"]')
    for e in lay.edges:
        arrow = "-.->" if e.back else "-->"
        label = e.label
        lines.append(f'  {ids[e.source]} {arrow}|"{_mermaid_text(label)}"| {ids[e.target]}' if label
                     else f"  {ids[e.source]} {arrow} {ids[e.target]}")
    for n in lay.nodes:
        if n.entry:
            lines.append(f"  style {ids[n.id]} stroke-width:3px")
    return "\n".join(lines)


def _dot(text: str) -> str:
    return json.dumps(visible(text))  # a JSON string is a valid DOT quoted string


def _dot_ids(sg: StepGraph) -> dict[str, str]:
    """DOT node names: step ids as written; 'start'/'end' for the virtual nodes unless a step took them."""
    ids = {sid: sid for sid in sg.steps}
    for node, name in ((START, "start"), (END, "end")):
        while name in sg.steps:
            name = "_" + name
        ids[node] = name
    return ids


def render_dot(sg: StepGraph) -> str:
    """A Graphviz digraph: routers as diamonds, prefixes as edge labels, loops dashed."""
    lay = layout(sg)
    ids = _dot_ids(sg)
    lines = [f"digraph {_dot(sg.pipeline.name or 'pipeline')} {{", "  rankdir=TB;", "  node [shape=box, fontname=\"Helvetica\"];"]
    for n in lay.nodes:
        if n.kind in ("start", "end"):
            lines.append(f"  {_dot(ids[n.id])} [label={_dot(n.label)}, shape=circle];")
            continue
        attrs = [f"label={_dot(n.label)[:-1]}\\n{_dot(n.action or '')[1:]}"]  # the one line break is DOT's own
        if n.kind == "router":
            attrs.append("shape=diamond")
        if n.entry:
            attrs.append("penwidth=3")
        if n.ends:
            attrs.append("peripheries=2")
        lines.append(f"  {_dot(ids[n.id])} [{', '.join(attrs)}];")
    for e in lay.edges:
        attrs = []
        if e.label:
            attrs.append(f"label={_dot(e.label)}")
        if e.back:
            attrs.append("style=dashed")
        tail = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"  {_dot(ids[e.source])} -> {_dot(ids[e.target])}{tail};")
    lines.append("}")
    return "\n".join(lines)


# For terminals whose encoding has no box-drawing characters (e.g. a cp1252 console).
ASCII = str.maketrans({"─": "-", "▶": ">", "↺": "@"})


def for_terminal(text: str, encoding: str | None) -> str:
    """The text with terminal controls escaped (names come from files), and ASCII arrows where the terminal has none."""
    text = printable(text, lines=True)
    try:
        text.encode(encoding or "utf-8")
        return text
    except (UnicodeEncodeError, LookupError):
        return text.translate(ASCII).encode(encoding or "ascii", "replace").decode(encoding or "ascii")


RENDERERS = {"text": render_text, "mermaid": render_mermaid, "dot": render_dot}


def render(sg: StepGraph, fmt: str = "text") -> str:
    """Render in one of RENDERERS' formats."""
    return RENDERERS[fmt](sg)


__all__ = ["END", "START", "GraphLayout", "for_terminal", "render", "render_dot", "render_mermaid", "render_text"]
