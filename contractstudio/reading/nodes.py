"""YAML nodes with exact 1-based spans (end exclusive), documents and files, and path queries.

Scalars are the bulk of every file, so a scalar node is a tuple (built in C,
no per-attribute work); mappings and sequences are small slotted objects whose
key index is built only when someone looks a key up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from contractstudio.findings.diagnostics import Diagnostic, Related, Span
from contractstudio.reading.line_starts import LineStarts


class Node:
    """A YAML node: `line`, `column`, `end_line`, `end_column` (1-based) and `tag`."""

    __slots__ = ()
    line: int
    column: int
    end_line: int
    end_column: int
    tag: str

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)


class ScalarNode(tuple, Node):
    """A scalar: its resolved `value`, quoting `style` ('' plain, '"', "'", '|', '>') and raw `text`."""

    __slots__ = ()
    line = property(itemgetter(0))
    column = property(itemgetter(1))
    end_line = property(itemgetter(2))
    end_column = property(itemgetter(3))
    tag = property(itemgetter(4))
    value = property(itemgetter(5))
    style = property(itemgetter(6))
    text = property(itemgetter(7))

    def __repr__(self) -> str:
        return f"ScalarNode({self.value!r} @ {self.line}:{self.column})"


_tuple_new = tuple.__new__


def new_scalar(line: int, column: int, end_line: int, end_column: int, tag: str, value: Any, style: str, text: str) -> ScalarNode:
    """A scalar node (tuple construction in C: this is the hot path of every edit)."""
    return _tuple_new(ScalarNode, (line, column, end_line, end_column, tag, value, style, text))


class MapNode(Node):
    """A mapping: `pairs` of (key node, value node) in order; `get` / `key_node` by key value."""

    __slots__ = ("line", "column", "end_line", "end_column", "tag", "pairs", "_index")

    def __init__(self) -> None:
        self.pairs: list[tuple[Node, Node]] = []
        self._index: dict[Any, tuple[Node, Node]] | None = None
        self.end_line = self.end_column = 0

    @property
    def index(self) -> dict[Any, tuple[Node, Node]]:
        """Key value -> (key node, value node); the last occurrence wins, as in YAML loaders."""
        if self._index is None or len(self._index) > len(self.pairs):
            self._index = {k.value: (k, v) for k, v in self.pairs if isinstance(k, ScalarNode)}
        return self._index

    def get(self, key: Any) -> Node | None:
        hit = self.index.get(key)
        return hit[1] if hit else None

    def key_node(self, key: Any) -> Node | None:
        hit = self.index.get(key)
        return hit[0] if hit else None


class SeqNode(Node):
    """A sequence: `items` in order."""

    __slots__ = ("line", "column", "end_line", "end_column", "tag", "items")

    def __init__(self) -> None:
        self.items: list[Node] = []
        self.end_line = self.end_column = 0


@dataclass(slots=True)
class SourceDocument:
    """One `---` document of a file: its root node and plain data (for a dialect, the native reading of it)."""

    index: int
    root: Node | None
    data: Any
    line: int  # first line of the document
    dialect: str = "contractstudio"  # the format the document was read as (reading/dialects)
    # What the document's format cannot express, and why: rules say "not checkable" instead of guessing.
    unsupported: dict[str, str] = field(default_factory=dict)
    # Every scalar (keys included) and every mapping of the tree under `root`, each once, in document order:
    # a rule that looks at each of them scans these lists instead of walking the tree. None when the lists
    # would not be exactly the tree: nodes rewritten by a dialect reader, aliases (a node at several
    # places), pairs the reader dropped (merge keys, collection keys).
    scalars: Sequence[ScalarNode] | None = field(default=None, repr=False, compare=False)
    mappings: Sequence[MapNode] | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> str | None:
        if isinstance(self.root, MapNode):
            k = self.root.get("kind")
            if isinstance(k, ScalarNode) and isinstance(k.value, str):
                return k.value
        return None


@dataclass(slots=True)
class SourceFile:
    """A parsed file: its text, documents and the YML diagnostics found while reading it."""

    path: str
    text: str
    documents: list[SourceDocument] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Other files read with this one (a dialect's `extends:` bases), placed after its last line.
    includes: list[Included] = field(default_factory=list)
    # Made from an earlier reading by reading one entry again (reading/reread.py): which, and how the lines moved.
    edited: Edited | None = field(default=None, repr=False, compare=False)
    # Where its lines start, set only on a text reading/reread.py can read in parts (no tab, NUL or directive: the
    # chunk it reads again is checked for them), and carried by it to the next version of the text.
    line_starts: LineStarts | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Edited:
    """One entry of a one-document reading read again after an edit; everything else is the earlier reading's."""

    path: tuple[Any, ...]  # the document path of the entry read again
    first: int  # its first line, the same in both texts
    end: int  # the line after it in the earlier text; from there on every node moved by `delta` lines
    delta: int  # lines the edit added (negative: removed)


@dataclass(slots=True)
class Included:
    """Another file read as part of a file: its nodes sit at lines `first_line`.. of the including file.

    Like a source map: rules see one file, and every position past the file's own
    lines is moved back to the included file (with `via`, the lines that included it).
    """

    path: str  # the included file as the user would name it
    text: str
    first_line: int  # the line number its line 1 has while it is analyzed with the including file
    lines: int
    via: tuple[Related, ...]  # the `extends:` lines that brought it in, nearest first

    def holds(self, line: int) -> bool:
        return self.first_line <= line < self.first_line + self.lines


def node_at(root: Node | None, path: tuple[Any, ...] | list[Any]) -> Node | None:
    """The node at a key/index path, or None when the path leaves the tree."""
    node = root
    for part in path:
        if isinstance(node, MapNode):
            node = node.get(part)
        elif isinstance(node, SeqNode) and isinstance(part, int) and 0 <= part < len(node.items):
            node = node.items[part]
        else:
            return None
    return node


def key_at(root: Node | None, path: tuple[Any, ...] | list[Any]) -> Node | None:
    """The key node of the last path part when it is a mapping key, else the node itself."""
    if not path:
        return root
    parent = node_at(root, path[:-1])
    if isinstance(parent, MapNode):
        return parent.key_node(path[-1])
    return node_at(root, path)


def nearest(root: Node | None, path: tuple[Any, ...] | list[Any], *, key: bool = False) -> Node | None:
    """The deepest node that exists along a path (its key node when `key`)."""
    path = tuple(path)
    while path:
        found = key_at(root, path) if key else node_at(root, path)
        if found is not None:
            return found
        path = path[:-1]
    return root
