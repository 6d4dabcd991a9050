"""A pipeline as a step graph: reachability, all-paths state dataflow, one witness path.

The graph has a virtual START (before the entry step) and END (after every
`end: true` step). The rules (analysis/rules/pipeline_*.py, routing.py), `graph`, `simulate` and the
studio all build on `StepGraph`; its layout for drawings is analysis/graph_layout.py,
rendering lives in reports/graphs.py.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from contractstudio.documents.actions import ActionSpec, action_catalog
from contractstudio.documents.models import Pipeline, Step
from contractstudio.findings.close_names import CloseNames

# A NUL character cannot appear in a YAML plain or single-quoted scalar, so no step id
# a user writes collides with these; renderers show them as "start" and "end".
START = "\0start"
END = "\0end"
VIRTUAL_LABELS = {START: "start", END: "end"}


class Route(NamedTuple):
    """One outgoing edge of a step as written: `next`, `on_<route>` or `end: true`."""

    key: str  # 'next', 'on_bm25', 'end'
    label: str  # 'next', the route's prefix ('[BM25:]'), 'other', 'end'
    target: str  # a step id (maybe unknown) or END
    step: Step  # a tuple, not a dataclass: one per edge, and tuples are the cheapest to build

    @property
    def src(self) -> tuple[Any, ...]:
        """Document path of the value that names the target (computed only for diagnostics)."""
        return self.step.src + (self.key,)


def config(step: Step) -> dict[str, Any]:
    """A step's configuration keys without copying them (read-only use)."""
    return step.__pydantic_extra__ or {}  # what `model_extra` returns, without its property call (asked per step by many rules)


@dataclass(slots=True)
class StepGraph:
    """The steps of one pipeline and the edges between them."""

    pipeline: Pipeline
    catalog: dict[str, ActionSpec]
    steps: dict[str, Step]  # first step of each id, in file order
    routes: dict[str, list[Route]]
    entry: str | None  # the entry step when it exists
    succ: dict[str, list[str]] = field(default_factory=dict)  # START/END included, known targets only
    pred: dict[str, list[str]] = field(default_factory=dict)
    _reach: set[str] | None = None
    _names: CloseNames | None = None

    @classmethod
    def build(cls, pipeline: Pipeline) -> StepGraph:
        """The graph of a (possibly partly broken) pipeline; unknown targets get no edge."""
        steps: dict[str, Step] = {}
        for step in pipeline.steps:
            steps.setdefault(step.id, step)
        entry = pipeline.entry_step_id if pipeline.entry_step_id in steps else None
        catalog = action_catalog(pipeline)
        routes = {sid: routes_of(step, catalog.get(step.action)) for sid, step in steps.items()}
        for sid, step in steps.items():  # a step that jumps back to the step that sent control to it (merge -> fork)
            spec = catalog.get(step.action)
            if spec is not None and spec.returns_to:
                routes[sid] += [Route("action", "back", t, step) for t, s in steps.items() if s.action == spec.returns_to]
        sg = cls(pipeline, catalog, steps, routes, entry)
        succ: dict[str, list[str]] = {START: [entry] if entry else [], END: []}
        pred: dict[str, list[str]] = {sid: [] for sid in steps}
        pred[START], pred[END] = [], []
        if entry:
            pred[entry].append(START)
        for sid, rs in routes.items():
            out: list[str] = []
            for r in rs:
                t = r.target
                if (t in pred and t != START) and t not in out:
                    out.append(t)
                    pred[t].append(sid)
            succ[sid] = out
        sg.succ, sg.pred = succ, pred
        return sg

    def with_step(self, pipeline: Pipeline, old: Step, new: Step) -> StepGraph:
        """The same graph for `pipeline`, the model this one's was with step `old` replaced by `new`, which routes and
        reads as `old` did (the caller knows: analysis/loaded_pipeline.py's `carry`)."""
        steps, routes = self.steps, self.routes
        if steps.get(old.id) is old:  # the first step of its id: the one the graph holds
            steps, routes = dict(steps), dict(routes)
            steps[new.id] = new
            routes[new.id] = [r._replace(step=new) for r in routes[new.id]]
        return StepGraph(pipeline, self.catalog, steps, routes, self.entry, self.succ, self.pred, self._reach, self._names)

    def with_edges(self, pipeline: Pipeline, steps: dict[str, Step], routes: dict[str, list[Route]],
                   succ: dict[str, list[str]], pred: dict[str, list[str]], same_ids: bool) -> StepGraph:
        """This graph with other steps and edges (analysis/graph_patch.py); its ids' index kept when they are the same."""
        return StepGraph(pipeline, self.catalog, steps, routes, self.entry, succ, pred, None, self._names if same_ids else None)

    def names(self) -> CloseNames:
        """The step ids indexed for 'did you mean' (PIP101, PIP102 ask it of every unknown target)."""
        if self._names is None:
            self._names = CloseNames(self.steps)
        return self._names

    def action(self, sid: str) -> ActionSpec | None:
        """The contract of a step's action (None for an unknown action)."""
        return self.catalog.get(self.steps[sid].action)

    def reachable(self) -> set[str]:
        """Steps reachable from the entry (empty when there is no valid entry)."""
        if self._reach is None:
            self._reach = _walk(START, self.succ) - {START, END}
        return self._reach

    def reaching_end(self) -> set[str]:
        """Steps from which some `end: true` step is reachable; a cycle without an exit is not."""
        return _walk(END, self.pred) - {START, END}


def strongly_connected(nodes: Iterable[str], succ: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of the graph `nodes` spans (Tarjan's algorithm, iterative)."""
    order = list(nodes)
    members = set(order)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in order:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        # Each frame is a node and the iterator over its successors inside `members`: no recursion limit on long chains.
        frames = [(root, iter([t for t in succ.get(root, ()) if t in members]))]
        while frames:
            node, targets = frames[-1]
            for t in targets:
                if t not in index:
                    index[t] = low[t] = len(index)
                    stack.append(t)
                    on_stack.add(t)
                    frames.append((t, iter([u for u in succ.get(t, ()) if u in members])))
                    break
                if t in on_stack:
                    low[node] = min(low[node], index[t])
            else:
                frames.pop()
                if frames:
                    parent = frames[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    found.append(component)
    return found


def routes_of(step: Step, spec: ActionSpec | None = None) -> list[Route]:
    """The outgoing edges a step writes: `next`, its `on_*` keys, its action's branch keys, `end: true`."""
    out: list[Route] = []
    if isinstance(step.next, str):
        out.append(Route("next", "next", step.next, step))
    raw = config(step)
    router = spec is not None and spec.routing == "prefix"
    for key, value in raw.items():
        if key[:3] == "on_" and isinstance(value, str):
            route = key[3:]
            prefix = raw.get(route + "_prefix") if router else None
            out.append(Route(key, prefix if isinstance(prefix, str) else route, value, step))
    for key in spec.branches if spec is not None else ():
        value = raw.get(key)
        if isinstance(value, str):
            out.append(Route(key, key, value, step))
    if step.end:
        out.append(Route("end", "end", END, step))
    return out


def _walk(start: str, edges: dict[str, list[str]]) -> set[str]:
    seen = {start}
    stack = [start]
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def reverse_postorder(sg: StepGraph) -> list[str]:
    """Reachable nodes (START first) in reverse postorder of an iterative DFS in file order."""
    # A flat stack of nodes plus exit markers (1-tuples) is about twice as fast on deep
    # chains as a stack of (node, iterator) pairs.
    order: list[str] = []
    seen: set[str] = set()
    succ = sg.succ
    stack: list[Any] = [START]
    while stack:
        node = stack.pop()
        if type(node) is tuple:
            order.append(node[0])
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node,))
        stack.extend(k for k in reversed(succ[node]) if k not in seen)
    order.reverse()
    return order


# ----------------------------------------------------------------- dataflow


@dataclass(slots=True)
class StateFlow:
    """Which state fields are set on EVERY path into each reachable step (a must-analysis).

    Fields are bits of an int; each `requires_any_state` group gets a bit of its
    own, set by any step that sets one of its fields, so "one of these on every
    path" is decided exactly (not only "the same one on every path").
    """

    bits: dict[str, int]  # field or group key -> bit mask
    gen: dict[str, int]  # step -> mask it sets
    known: dict[str, int]  # reachable step -> mask set on every path into it
    inputs: int

    def mask(self, fields: Iterable[str]) -> int:
        """The bit of one field, or the group bit of several."""
        names = tuple(fields)
        return self.bits.get(names[0] if len(names) == 1 else _group_key(names), 0)

    def names(self, mask: int) -> list[str]:
        """Field names (not groups) in a mask."""
        return sorted(n for n, b in self.bits.items() if mask & b and not n.startswith("any:"))


def _group_key(group: Iterable[str]) -> str:
    return "any:" + "|".join(sorted(group))


def state_flow(sg: StepGraph) -> StateFlow:
    """Forward must-dataflow: intersection over predecessors, reverse postorder until stable."""
    bits: dict[str, int] = {}

    def bit(name: str) -> int:
        b = bits.get(name)
        if b is None:
            b = bits[name] = 1 << len(bits)
        return b

    groups: list[tuple[str, ...]] = []
    for action in dict.fromkeys(step.action for step in sg.steps.values()):
        spec = sg.catalog.get(action)
        if spec is None:
            continue
        for f in (*spec.requires_state, *spec.ensures_state):
            bit(f)
        for g in spec.requires_any_state:
            if len(g) > 1 and _group_key(g) not in bits:
                bit(_group_key(g))
                groups.append(g)
            for f in g:
                bit(f)
    for f in sg.pipeline.inputs:
        bit(f)
    group_masks = [(bits[_group_key(g)], sum(bits[f] for f in g)) for g in groups]
    everything = (1 << len(bits)) - 1

    def with_groups(mask: int) -> int:
        for gbit, members in group_masks:
            if mask & members:
                mask |= gbit
        return mask

    gen: dict[str, int] = {}
    by_action: dict[str, int] = {}
    for sid, step in sg.steps.items():
        mask = by_action.get(step.action)
        if mask is None:
            spec = sg.catalog.get(step.action)
            # An unknown action is reported once (PIP106); assuming it sets everything
            # keeps that one mistake from cascading into PIP201s downstream.
            mask = everything if spec is None else with_groups(sum(bits[f] for f in set(spec.ensures_state)))
            by_action[step.action] = mask
        spec = sg.catalog.get(step.action)
        if spec is not None and spec.ensures_from:  # fields this step's own configuration says it sets
            named = {bits[f] for f in spec.ensured_by(step) if f in bits}
            if named:
                mask = with_groups(mask | sum(named))
        gen[sid] = mask
    inputs = with_groups(sum(bits[f] for f in set(sg.pipeline.inputs)))

    # Iterate over integer positions in reverse postorder; position 0 is START.
    order = [n for n in reverse_postorder(sg) if n != END]
    pos = {n: i for i, n in enumerate(order)}
    preds = [[pos[p] for p in sg.pred[n] if p in pos] for n in order]
    gens = [0] + [gen[n] for n in order[1:]]
    out = [everything] * len(order)
    out[0] = inputs
    into = [everything] * len(order)
    # Without a retreating edge (no loop) one pass in reverse postorder is already exact.
    retreating = any(p >= i for i, ps in enumerate(preds) for p in ps)
    changed = True
    while changed:
        changed = False
        for i in range(1, len(order)):
            acc = everything
            for p in preds[i]:
                acc &= out[p]
            if acc != into[i]:
                into[i] = acc
                changed = True
            out[i] = acc | gens[i]
        changed = changed and retreating
    known = {order[i]: into[i] for i in range(1, len(order))}
    return StateFlow(bits, gen, known, inputs)


class Requirement(NamedTuple):
    """One state requirement of a step's action: a field, or a group of fields one of which must be set."""

    step: Step
    fields: tuple[str, ...]  # one field, or a `requires_any_state` group
    mask: int  # its bit in the StateFlow
    set_elsewhere: bool  # an input or some OTHER step sets it (a step needing what only it sets fails on its first run)
    on_every_path: bool | None  # set on every path from the entry into the step; None when the step is unreachable


def requirements(sg: StepGraph, flow: StateFlow) -> list[Requirement]:
    """Every state requirement of every step (first step of each id, file order), with what the dataflow knows of it."""
    ids = list(sg.steps)
    before, after = [flow.inputs], [0]  # what the inputs and the steps before / after each position set
    for sid in ids:
        before.append(before[-1] | flow.gen[sid])
    for sid in reversed(ids):
        after.append(after[-1] | flow.gen[sid])
    after.reverse()
    needs_of: dict[str, list[tuple[tuple[str, ...], int]]] = {}
    found: list[Requirement] = []
    for i, (sid, step) in enumerate(sg.steps.items()):
        needs = needs_of.get(step.action)
        if needs is None:
            spec = sg.catalog.get(step.action)
            groups = [] if spec is None else [(f,) for f in spec.requires_state] + list(spec.requires_any_state)
            needs = needs_of[step.action] = [(tuple(g), flow.mask(g)) for g in groups]
        if not needs:
            continue
        ever = before[i] | after[i + 1]
        known = flow.known.get(sid)
        for group, mask in needs:
            found.append(Requirement(step, group, mask, bool(ever & mask), None if known is None else bool(known & mask)))
    return found


def unset_paths(sg: StepGraph, flow: StateFlow, mask: int) -> dict[str, str]:
    """Parents of a BFS from the entry through steps that set nothing in `mask`.

    Following parents from any step it reached gives one shortest path from the
    entry on which the field is never set. One BFS per field serves every step
    that needs it, so a file with many PIP201s stays linear.
    """
    if sg.entry is None or flow.inputs & mask:
        return {}
    parent: dict[str, str] = {sg.entry: ""}
    queue = deque([sg.entry])
    gen = flow.gen
    while queue:
        node = queue.popleft()
        if gen[node] & mask:
            continue  # reached, but the field is set after it: no witness goes through it
        for nxt in sg.succ[node]:
            if nxt not in parent and nxt != END:
                parent[nxt] = node
                queue.append(nxt)
    return parent


def witness_path(parents: dict[str, str], target: str) -> list[str]:
    """The path from the entry to `target` in an `unset_paths` tree ([] when it did not reach it)."""
    if target not in parents:
        return []
    path = [target]
    while parents[path[-1]]:
        path.append(parents[path[-1]])
    return path[::-1]


def path_without(sg: StepGraph, flow: StateFlow, target: str, mask: int) -> list[str]:
    """One shortest path from the entry to `target` on which no step before it sets anything in `mask`."""
    return witness_path(unset_paths(sg, flow, mask), target)
