"""An edited text read again from its previous reading: only the entry the edit is in is parsed.

Per keystroke, the studio and the language server read the whole file again; most of that work
rebuilds nodes the edit cannot have changed. In a block collection, each entry (a key with its
value, or a list item) starts on a line of its own at the collection's column, and what comes
before and after it does not depend on the entry's inside. So when an edit lies within the lines
of one entry, and the entry's new text, read on its own by the same `Builder` at its line offset,
is again exactly one entry starting at the same place, the new document is the previous one with
that entry replaced: the nodes after it are moved by the lines the edit added or removed, and the
ends of the entry's last collections are set to the token that follows it (what they end at in
the whole text). The deepest entry holding the edit is tried first, then the ones around it (a
new sibling typed inside an entry makes it two entries; its parent is still one).

The result is the reading `read_source` gives (tests/test_incremental.py checks random edits of
every sample and fixture against it). Anything the shortcut cannot be sure of is read whole:
several documents, anchors or aliases, dropped pairs, tabs, a %YAML header, a previous reading with
any finding but per-node ones (YML005, YML008, a refused tag), a syntax error or too deep a nesting
in the entry's text, a duplicate or merge key, an edit outside every entry or across two, flow
collections, document markers or directives in the entry's text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import replace
from operator import attrgetter, itemgetter
from typing import Any, cast

from contractstudio.findings.diagnostics import Diagnostic, Related
from contractstudio.reading.builder import MAX_DEPTH, Builder
from contractstudio.reading.line_starts import LineStarts
from contractstudio.reading.nodes import Edited, MapNode, Node, ScalarNode, SeqNode, SourceDocument, SourceFile
from contractstudio.reading.source import text_rows
from contractstudio.reading.spliced import Spliced

MAX_TRIES = 3  # entries tried, deepest first, before the text is read whole
_MARKERS = re.compile(r"^(?:---|\.\.\.)(?:[ \t\r\n]|$)|^%", re.M)  # document markers and directives
_LINE = itemgetter(0)  # a scalar node's first line
_tuple_new = tuple.__new__


def reread(previous: SourceFile, text: str) -> SourceFile | None:
    """The reading of `text` from `previous` (the reading of an earlier version of it), or None: read it whole."""
    if text.startswith("\ufeff"):
        text = text[1:]
    old = previous.text
    if text == old or len(previous.documents) != 1 or previous.includes:
        return None
    doc = previous.documents[0]
    if doc.scalars is None or doc.mappings is None or doc.data is None or not isinstance(doc.root, (MapNode, SeqNode)):
        return None
    if not all(_per_node(d) for d in previous.diagnostics):
        return None
    if previous.line_starts is None:  # a text not made here: looked at whole, once (a reading made here carries them)
        if "\x00" in old or "\t" in old or _directive(old):
            return None
        previous.line_starts = LineStarts.of(text_rows(old))  # the rows the last analysis split
    starts = previous.line_starts
    prefix = _common_prefix(old, text)
    suffix = _common_suffix(old, text, prefix)
    edits = [(prefix, len(old) - suffix)]
    # Where a typed or erased text repeats what is next to it, the edit can be placed further left: a line
    # break typed after a line's end is also one typed before the next line's first token (that one moves).
    left_suffix = _common_suffix(old, text, 0)
    left_prefix = min(prefix, len(old) - left_suffix, len(text) - left_suffix)
    if left_prefix != prefix:
        edits.append((left_prefix, len(old) - left_suffix))
    for edit in edits:
        candidates = _entries(doc.root, old, starts, edit)
        for ancestors, coll, index in reversed(candidates[-MAX_TRIES:]):
            found = _splice(previous, doc, text, starts, ancestors, coll, index, edit)
            if found is not None:
                return found
    return None


def _directive(text: str) -> bool:
    """Whether a line starts with `%` (a %YAML header changes how every scalar reads: the text is read whole).

    Two substring searches, not a multi-line regex: `re` holds the GIL for its whole scan, 50 ms on 5 MB, while the
    screen's thread waits to draw a key (bench/bench_entry_edit.py)."""
    return text.startswith("%") or "\n%" in text


def _per_node(d: Diagnostic) -> bool:
    """A reading finding about one node alone, which an edit elsewhere leaves as it is (only moved).

    YML008 is one once tabs (found over the whole text, after the rest) and a %YAML header (which the
    findings name by its line) are ruled out.
    """
    return d.code in ("YML005", "YML008") or (d.code == "YML004" and d.message.startswith(("unknown YAML tag", "unsafe YAML tag")))


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # slices compared in C: a binary search beats a character loop in Python
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, prefix: int) -> int:
    lo, hi = 0, min(len(a), len(b)) - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


# ----------------------------------------------------------------- where the edit is


def _entries(root: Node, text: str, starts: LineStarts, edit: tuple[int, int]) -> list[tuple[list[tuple[Node, int]], Node, int]]:
    """(ancestors as (collection, index of the entry leading down), collection, entry index) of each entry
    that holds the whole edit and can be read alone, outermost first.

    Per collection only the entry holding the edit and the one after it are looked at (found by their lines):
    the work does not grow with the collection (32,000 examples)."""
    found: list[tuple[list[tuple[Node, int]], Node, int]] = []
    ancestors: list[tuple[Node, int]] = []
    node: Node = root
    end = len(text)  # the offset where the current collection's lines end
    edit_line = starts.line_of(edit[0])
    while isinstance(node, (MapNode, SeqNode)):
        if _flow(node, text, starts):
            break
        count = _count(node)
        i = bisect.bisect_right(range(count), edit_line, key=lambda j, node=node: _first_line(node, j)) - 1  # type: ignore[misc]
        if i < 0:
            break  # before the first entry: the collection's own key line, or what precedes the document
        if not all(_dash_on_line(node, j, text, starts) for j in (i, i + 1) if j < count):
            break  # an item that starts on the line after its dash: where its entry begins is not its line
        stop = starts[_first_line(node, i + 1) - 1] if i + 1 < count else end
        if edit[1] > stop or (edit[0] == stop and stop != len(text)):
            break  # the edit reaches into the next entry
        if _alone(node, i, text, starts):
            found.append((list(ancestors), node, i))
        ancestors.append((node, i))
        node = node.pairs[i][1] if isinstance(node, MapNode) else node.items[i]
        end = stop
    return found


def _flow(coll: Node, text: str, starts: LineStarts) -> bool:
    """Whether a collection is a flow one (`{...}`, `[...]`): its entries do not start lines."""
    at = starts[coll.line - 1] + coll.column - 1
    return text[at : at + 1] in ("{", "[")


def _count(coll: Node) -> int:
    return len(coll.pairs) if isinstance(coll, MapNode) else len(cast(SeqNode, coll).items)


def _dash_on_line(coll: Node, i: int, text: str, starts: LineStarts) -> bool:
    """Whether item i of a block sequence has its dash on its own first line (a mapping's entries always do)."""
    if isinstance(coll, MapNode):
        return True
    dash = starts[cast(SeqNode, coll).items[i].line - 1] + coll.column - 1
    return text[dash : dash + 1] == "-"


def _alone(coll: Node, i: int, text: str, starts: LineStarts) -> bool:
    """Whether entry i starts its line: only spaces before its key or its dash (a chunk from the line start is that entry)."""
    if isinstance(coll, MapNode):
        key = coll.pairs[i][0]
        if key.column != coll.column:
            return False
        line = key.line
    else:
        line = coll.items[i].line  # type: ignore[attr-defined]
    begin = starts[line - 1]
    return text[begin : begin + coll.column - 1].strip(" ") == ""


# ----------------------------------------------------------------- the entry read again


def _splice(previous: SourceFile, doc: SourceDocument, text: str, starts: LineStarts, ancestors: list[tuple[Node, int]],
            coll: Node, i: int, edit: tuple[int, int]) -> SourceFile | None:
    """The new reading with entry i of `coll` read again from `text`, or None when its new text is not one such entry."""
    old = previous.text
    chain = ancestors + [(coll, i)]
    datas = _path_data(doc.data, chain)
    if datas is None:
        return None
    is_map = isinstance(coll, MapNode)
    line0 = _first_line(coll, i)
    begin = starts[line0 - 1]
    stop0 = starts[_first_line(coll, i + 1) - 1] if i + 1 < _count(coll) else _region_end(ancestors, old, starts)
    stop1 = stop0 + len(text) - len(old)
    if not begin <= edit[0] <= edit[1] <= stop0 or stop1 < begin:
        return None
    at_end = stop0 == len(old)
    if text[stop1 - 1 : stop1] != "\n":
        # Not at the end: the entry's last line now runs on into the next one. At the end: without a last line
        # break, libyaml ends the collections at different places by their indentation; with one, all at the end.
        return None
    chunk = text[begin:stop1]
    if "\x00" in chunk or "\t" in chunk or _MARKERS.search(chunk):
        return None
    found: list[Diagnostic] = []
    docs = Builder(previous.path, found, line0 - 1, MAX_DEPTH - len(ancestors)).build(chunk, 0)
    if len(docs) != 1 or any(d.code in ("YML001", "YML006") for d in found):
        return None
    part = docs[0]
    stand_in = part.root  # the collection, holding only the new entry
    if part.scalars is None or part.mappings is None or type(stand_in) is not type(coll) or part.data is None:
        return None
    if (stand_in.line, stand_in.column) != (line0, coll.column):
        return None  # the entry's first token moved, and what ends before it with it
    entry: Any
    if is_map:
        assert isinstance(stand_in, MapNode) and isinstance(coll, MapNode)
        if len(stand_in.pairs) != 1:
            return None
        key, old_key = stand_in.pairs[0][0], coll.pairs[i][0]
        assert isinstance(key, ScalarNode) and isinstance(old_key, ScalarNode)
        if key.value != old_key.value and key.value in datas[-1]:
            return None  # a duplicate key: its finding names the other one's line
        entry, entry_data = stand_in.pairs[0], part.data[key.value]
        entry_maps = part.mappings[1:]  # the first is the stand-in
    else:
        assert isinstance(stand_in, SeqNode)
        if len(stand_in.items) != 1:
            return None
        entry, entry_data, entry_maps = stand_in.items[0], part.data[0], part.mappings
    entry_scalars = part.scalars
    after = line0 + chunk.count("\n")  # the line after the entry, in the new text
    if not at_end:
        # Read alone, the entry's last collections end where the chunk ends; in the whole text they end at
        # the token after it, which is indented on that line.
        indent = _INDENT.match(text, stop1).end() - stop1  # type: ignore[union-attr]
        if indent:
            _ended(entry, (after, 1), (after, indent + 1))
    delta = after - (starts.line_of(stop0) if not at_end else line0 + old.count("\n", begin, stop0))
    shift = _Shift(delta)
    stream_end = (stand_in.end_line, stand_in.end_column) if at_end else None
    # The collection and each one around it, rebuilt around the new entry; the entries after it moved by `delta` lines.
    replaced: dict[int, Node] = {}
    child, child_data = entry, entry_data
    for depth in range(len(chain) - 1, -1, -1):
        node, index = chain[depth]
        node_data = datas[depth]
        copy: Node
        if isinstance(node, MapNode):
            copy = MapNode()
            old_key, old_value = node.pairs[index]
            new_pair = child if depth == len(chain) - 1 else (old_key, child)
            copy.pairs = node.pairs[:index] + [new_pair] + shift.pairs(node.pairs[index + 1:])
            assert isinstance(old_key, ScalarNode) and isinstance(new_pair[0], ScalarNode)  # the reader keeps scalar keys only
            was_key, new_key = old_key.value, new_pair[0].value
            data: Any
            if new_key == was_key:
                data = dict(node_data)  # copied in C: the same keys in the same order
                data[was_key] = child_data
            else:
                data = {(new_key if k == was_key else k): (child_data if k == was_key else v) for k, v in node_data.items()}
        else:
            assert isinstance(node, SeqNode)
            copy = SeqNode()
            copy.items = node.items[:index] + [child] + shift.nodes(node.items[index + 1:])
            data = list(node_data)
            data[index] = child_data
        copy.line, copy.column, copy.tag = node.line, node.column, node.tag
        copy.end_line, copy.end_column = stream_end if stream_end is not None else (node.end_line + delta, node.end_column)
        replaced[id(node)] = copy
        child, child_data = copy, data
    root = child
    # The reader's flat lists: before the entry (with the rebuilt collections), the entry's own, after it (moved).
    assert doc.scalars is not None and doc.mappings is not None
    end_line = starts.line_of(stop0)
    s0 = bisect.bisect_left(doc.scalars, line0, key=_LINE)
    s1 = len(doc.scalars) if at_end else bisect.bisect_left(doc.scalars, end_line, key=_LINE)
    m0 = bisect.bisect_left(doc.mappings, line0, key=_MAP_LINE)
    while m0 < len(doc.mappings) and id(doc.mappings[m0]) in replaced:
        m0 += 1  # the collection starts on its first entry's line
    m1 = len(doc.mappings) if at_end else bisect.bisect_left(doc.mappings, end_line, key=_MAP_LINE)
    new_doc = SourceDocument(doc.index, root, child_data, root.line)
    scalars, mappings = Spliced.of(doc.scalars), Spliced.of(doc.mappings)
    new_doc.scalars = scalars.spliced(s0, len(scalars) if delta else s1, [*entry_scalars, *(shift.scalars if delta else ())])
    mappings = mappings.spliced(m0, len(mappings) if delta else m1, [*entry_maps, *(shift.mappings if delta else ())])
    for node, _ in chain:  # the mappings around the entry (before it in the list), each in its copy's place
        if isinstance(node, MapNode):
            at = bisect.bisect_left(mappings, node.line, key=_MAP_LINE)
            while mappings[at] is not node:
                at += 1
            mappings = mappings.spliced(at, at + 1, [cast(MapNode, replaced[id(node)])])
    new_doc.mappings = mappings
    kept = [d for d in previous.diagnostics if d.line < line0]
    moved = [] if at_end else [_moved(d, delta) for d in previous.diagnostics if d.line >= end_line]
    edited = None if at_end else Edited(tuple(_key(node, index) for node, index in chain), line0, end_line, delta)
    # The new text's line starts: the entry's lines from the chunk, the ones after it moved (at the end: made anew if asked).
    new_starts = None
    if not at_end:
        breaks = [begin]
        at = chunk.find("\n")
        while at >= 0 and begin + at + 1 < stop1:
            breaks.append(begin + at + 1)
            at = chunk.find("\n", at + 1)
        new_starts = starts.replaced(line0 - 1, end_line - 1, breaks, len(text) - len(old))
    return SourceFile(previous.path, text, [new_doc], kept + found + moved, edited=edited, line_starts=new_starts)


def _key(node: Node, index: int) -> Any:
    """The document path part that leads to entry `index` of a collection: its key, or its index."""
    return cast(ScalarNode, node.pairs[index][0]).value if isinstance(node, MapNode) else index


_INDENT = re.compile(r" *")


def _first_line(coll: Node, i: int) -> int:
    """The first line of entry i: its key's, or its item's."""
    return coll.pairs[i][0].line if isinstance(coll, MapNode) else cast(SeqNode, coll).items[i].line


_MAP_LINE = attrgetter("line")


def _region_end(ancestors: list[tuple[Node, int]], text: str, starts: LineStarts) -> int:
    """Where a collection's last entry ends: at the next entry of the nearest collection around it that has one, or the end."""
    for node, index in reversed(ancestors):
        if index + 1 < _count(node):
            return starts[_first_line(node, index + 1) - 1]
    return len(text)


def _path_data(data: Any, chain: list[tuple[Node, int]]) -> list[Any] | None:
    """The plain data of each collection on the path (None when a refused tag left one out)."""
    out = []
    for node, index in chain:
        if data is None:
            return None
        out.append(data)
        if isinstance(node, MapNode):
            key = node.pairs[index][0]
            data = data.get(key.value) if isinstance(data, dict) and isinstance(key, ScalarNode) else None
        else:
            data = data[index] if isinstance(data, list) and index < len(data) else None
    return out


def _ended(entry: Any, was: tuple[int, int], now: tuple[int, int]) -> None:
    """Move the ends of the entry's last collections (one per level: its value, that value's last entry, ...) from `was` to `now`.

    libyaml ends a block collection at the next token; a block scalar's end is the start of the line
    after it, wherever the next token is, so scalars keep theirs.
    """
    node = entry[1] if isinstance(entry, tuple) and not isinstance(entry, ScalarNode) else entry
    while isinstance(node, (MapNode, SeqNode)) and (node.end_line, node.end_column) == was:
        node.end_line, node.end_column = now  # built by this reading alone: nobody else holds it yet
        last = (node.pairs[-1][1] if isinstance(node, MapNode) and node.pairs
                else node.items[-1] if isinstance(node, SeqNode) and node.items else None)
        if last is None:
            break
        node = last


def _moved(d: Diagnostic, delta: int) -> Diagnostic:
    if not delta:
        return d
    related = tuple(Related(r.file, r.line + delta, r.column, r.message) for r in d.related)
    return replace(d, line=d.line + delta, end_line=d.end_line + delta, related=related)


class _Shift:
    """Copies of subtrees moved down by `delta` lines, their scalars and mappings listed in document order."""

    def __init__(self, delta: int) -> None:
        self.delta = delta
        self.scalars: list[ScalarNode] = []
        self.mappings: list[MapNode] = []

    def pairs(self, pairs: list[tuple[Node, Node]]) -> list[tuple[Node, Node]]:
        """Each pair moved (the list itself when nothing moves: a letter typed leaves every line where it was)."""
        return [self.pair(p) for p in pairs] if self.delta else pairs

    def nodes(self, nodes: list[Node]) -> list[Node]:
        return [self.node(n) for n in nodes] if self.delta else nodes

    def pair(self, pair: tuple[Node, Node]) -> tuple[Node, Node]:
        if not self.delta:
            return pair
        key = self.node(pair[0])
        return key, self.node(pair[1])

    def node(self, node: Node) -> Node:
        d = self.delta
        if not d:
            return node
        if isinstance(node, ScalarNode):
            moved = _tuple_new(ScalarNode, (node[0] + d, node[1], node[2] + d, *node[3:]))
            self.scalars.append(moved)
            return moved
        copy: Node
        if isinstance(node, MapNode):
            copy = MapNode()
            self.mappings.append(copy)
            copy.pairs = [self.pair(p) for p in node.pairs]
        else:
            assert isinstance(node, SeqNode)
            copy = SeqNode()
            copy.items = [self.node(n) for n in node.items]
        copy.line, copy.column, copy.tag = node.line + d, node.column, node.tag
        copy.end_line, copy.end_column = node.end_line + d, node.end_column
        return copy
