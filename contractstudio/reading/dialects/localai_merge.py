"""LocalAI-RAG's `extends:` merge, done on nodes as their loader does it on data: mappings by key, steps by id,
the child winning; every value keeps the node (and so the place) it was written at.
"""

from __future__ import annotations

from contractstudio.reading.dialects.synth import mapping, sequence
from contractstudio.reading.nodes import MapNode, Node, ScalarNode, SeqNode


def without(node: MapNode, key: str) -> MapNode:
    """The mapping without one key (the same node when it has none)."""
    if node.get(key) is None and node.key_node(key) is None:
        return node
    return mapping(((k, v) for k, v in node.pairs if not (isinstance(k, ScalarNode) and k.value == key)), node)


def _merge(parent: Node, child: Node) -> Node:
    """Mappings merge key by key (the child's keys win, new ones come last); anything else: the child replaces."""
    if not (isinstance(parent, MapNode) and isinstance(child, MapNode)):
        return child
    index = child.index
    pairs = [(index[k.value][0], _merge(v, index[k.value][1])) if isinstance(k, ScalarNode) and k.value in index else (k, v)
             for k, v in parent.pairs]
    mine = {k.value for k, _ in parent.pairs if isinstance(k, ScalarNode)}
    pairs += [(k, v) for k, v in child.pairs if not (isinstance(k, ScalarNode) and k.value in mine)]
    return mapping(pairs, child)


def _value(node: MapNode, key: str) -> Node | None:
    """A key's value by scanning the pairs: a step has a handful, and building its index for one look-up costs more."""
    found = None
    for k, v in node.pairs:
        if type(k) is ScalarNode and k.value == key:
            found = v  # the last one wins, as in YAML loaders
    return found


def _sid(step: Node) -> str | None:
    if isinstance(step, MapNode):
        value = _value(step, "id")
        if isinstance(value, ScalarNode) and value.value:
            return str(value.value)
    return None


def _merge_steps(parent: Node | None, child: Node | None) -> SeqNode:
    """Steps merge by id: the parent's order, a child step of the same id merged into it, new child steps appended."""
    mine = [(_sid(s), s) for s in parent.items if isinstance(s, MapNode)] if isinstance(parent, SeqNode) else []
    theirs = [(_sid(s), s) for s in child.items] if isinstance(child, SeqNode) else []
    by_id = {sid: s for sid, s in theirs if sid}
    known = {sid for sid, _ in mine}
    out: list[Node] = [_merge(s, by_id[sid]) if sid in by_id else s for sid, s in mine]
    # LocalAI-RAG drops child steps without an id silently; they are kept so that the reader reports them.
    out += [s for sid, s in theirs if sid not in known]
    at = child if isinstance(child, SeqNode) else parent
    return sequence(out, at)  # type: ignore[arg-type]


def merge_pipeline(parent: MapNode, child: MapNode) -> MapNode:
    """A child pipeline merged onto its base: settings and other keys by key, steps by id, `extends` dropped."""
    merged = _merge(parent, without(child, "extends"))
    assert isinstance(merged, MapNode)
    if parent.get("steps") is None and child.get("steps") is None:
        return merged
    steps = _merge_steps(parent.get("steps"), child.get("steps"))
    key: Node = child.key_node("steps") or parent.key_node("steps") or steps
    return mapping(((key, steps) if isinstance(k, ScalarNode) and k.value == "steps" else (k, v) for k, v in merged.pairs), merged)
