"""A step graph laid out in layers: plain data that every drawing reads (text, Mermaid, DOT, the studio).

Longest-path layers over the forward edges (back edges close loops and are
drawn upward); columns by the mean column of each node's predecessors.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from contractstudio.analysis.step_graph import END, START, VIRTUAL_LABELS, StepGraph


@dataclass(frozen=True, slots=True)
class LayoutNode:
    """A node placed on a grid: `layer` is its row (START is 0), `order` its column in the row."""

    id: str
    label: str  # what to print: the step id, 'start' or 'end'
    kind: str  # 'start' | 'end' | 'step' | 'router'
    action: str | None
    layer: int
    order: int
    entry: bool = False
    ends: bool = False  # an `end: true` step
    reachable: bool = True


@dataclass(frozen=True, slots=True)
class LayoutEdge:
    """An edge with its routing labels; `back` edges close a loop (drawn upward)."""

    source: str
    target: str
    labels: tuple[str, ...]
    back: bool = False

    @property
    def label(self) -> str:
        return ", ".join(lb for lb in self.labels if lb not in ("next", "end"))


@dataclass(slots=True)
class GraphLayout:
    """A layered layout of a step graph, plain data for the CLI renderers and the studio."""

    name: str
    nodes: list[LayoutNode]
    edges: list[LayoutEdge]
    layers: list[list[str]]  # node ids per layer, in column order

    def node(self, node_id: str) -> LayoutNode:
        return next(n for n in self.nodes if n.id == node_id)


def _back_edges(sg: StepGraph) -> set[tuple[str, str]]:
    """Edges that close a cycle in a DFS from START, then from each step never reached."""
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for root in (START, *sg.steps):
        if root in state:
            continue
        state[root] = 1
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            node, i = stack[-1]
            nexts = sg.succ[node]
            if i < len(nexts):
                stack[-1] = (node, i + 1)
                child = nexts[i]
                mark = state.get(child)
                if mark == 1:
                    back.add((node, child))
                elif mark is None:
                    state[child] = 1
                    stack.append((child, 0))
            else:
                state[node] = 2
                stack.pop()
    return back


def layout(sg: StepGraph) -> GraphLayout:
    """Longest-path layers over the forward edges; columns by the mean column of predecessors."""
    back = _back_edges(sg)
    nodes = [START, *sg.steps, END]
    indeg = {n: 0 for n in nodes}
    for n in nodes:
        for m in sg.succ[n]:
            if (n, m) not in back:
                indeg[m] += 1
    layer = {n: 0 for n in nodes}
    queue = deque(n for n in nodes if indeg[n] == 0)
    while queue:  # Kahn's order over the DAG of forward edges
        n = queue.popleft()
        for m in sg.succ[n]:
            if (n, m) in back:
                continue
            layer[m] = max(layer[m], layer[n] + 1)
            indeg[m] -= 1
            if indeg[m] == 0:
                queue.append(m)
    for sid in sg.steps:  # a step nothing leads to sits right under START
        layer[sid] = max(layer[sid], 1)
    layer[END] = max([layer[s] for s in sg.steps] + [0]) + 1
    rows: dict[int, list[str]] = {}
    for n in nodes:
        rows.setdefault(layer[n], []).append(n)
    column: dict[str, float] = {}
    position = {n: i for i, n in enumerate(nodes)}
    for depth in sorted(rows):
        row = rows[depth]

        def weight(n: str) -> tuple[float, int]:
            cols = [column[p] for p in sg.pred[n] if p in column and (p, n) not in back]
            return (sum(cols) / len(cols) if cols else float(position[n]), position[n])

        row.sort(key=weight)
        for i, n in enumerate(row):
            column[n] = float(i)
    reach = sg.reachable()
    placed: list[LayoutNode] = []
    for depth in sorted(rows):
        for i, n in enumerate(rows[depth]):
            if n in (START, END):
                placed.append(LayoutNode(n, VIRTUAL_LABELS[n], VIRTUAL_LABELS[n], None, depth, i))
                continue
            step = sg.steps[n]
            spec = sg.catalog.get(step.action)
            kind = "router" if spec is not None and spec.routing else "step"
            placed.append(LayoutNode(n, n, kind, step.action, depth, i, n == sg.entry, step.end, n in reach))
    edges: list[LayoutEdge] = []
    for n in nodes:
        for m in sg.succ[n]:
            labels = tuple(r.label for r in sg.routes.get(n, ()) if r.target == m)
            edges.append(LayoutEdge(n, m, labels, (n, m) in back))
    return GraphLayout(sg.pipeline.name, placed, edges, [rows[d] for d in sorted(rows)])
