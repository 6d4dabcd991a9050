"""The index of every name in one document, kept per entry of its long list so that an edit collects one entry again.

A 5 MB one-document file is mostly one long list (a pipeline's `steps`, a contract's `examples`:
analysis/by_entry.py). Its index keeps each entry's occurrences apart (a block, with the line its entry started on
when they were collected); what lies outside the list is small and is collected with every index. After an
analysis per entry (by_entry records which entry in the new analysis's memo, `EntryEdit`), the entries that no edit
touched since the last index keep their blocks: their lines move with their entry's first line, read from the new
document's nodes when a lookup asks; only the edited entries are collected again (`after`). Names that other
entries use (a step id in another step's `next:`) are found through `holders`: each name's entries, updated by the
edited entries' old and new names.

Lookups (`at`, `named`) shift only what they return; iterating gives every occurrence (outside first, then the
entries in order), as the whole collection gives it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from contractstudio.analysis.by_entry import ENTRY_EDIT, LISTS, EntryEdit
from contractstudio.analysis.check import Loaded
from contractstudio.findings.diagnostics import Span
from contractstudio.reading.kinds import NATIVE
from contractstudio.reading.nodes import Node, SeqNode, node_at

MEMO_KEY = "editing.occurrences"  # where a document's index is kept (analysis/facts.py `memo`)
_LINE = attrgetter("line")

Identity = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One place that declares (`definition`) or names a thing."""

    kind: str  # step | type | field | router | action | tool | policy | task | param
    name: str
    span: Span  # exactly the characters of the name
    definition: bool
    owner: str = ""  # field: its declared type; param: its tool
    path: tuple[Any, ...] = ()  # document path of the node that holds it

    @property
    def identity(self) -> Identity:
        return (self.kind, self.name, self.owner)


Block = tuple[int, tuple[Occurrence, ...]]  # an entry's first line when collected, and its occurrences


def _moved(o: Occurrence, delta: int) -> Occurrence:
    if not delta:
        return o
    s = o.span
    return Occurrence(o.kind, o.name, Span(s.line + delta, s.column, s.end_line + delta, s.end_column), o.definition,
                      o.owner, o.path)


class Symbols:
    """Every occurrence of one document: `outside` the long list `key`, and one block per entry of it (`items`)."""

    __slots__ = ("outside", "key", "items", "blocks", "holders", "_by_line", "_by_identity")

    def __init__(self, outside: list[Occurrence], key: str = "", items: list[Node] | None = None,
                 blocks: list[Block] | None = None, holders: dict[Identity, frozenset[int]] | None = None) -> None:
        self.outside = outside
        self.key = key  # "" when the document was collected whole (everything is `outside`)
        self.items = items or []
        self.blocks = blocks or []
        if holders is None:
            found: dict[Identity, set[int]] = {}
            for k, (_, occs) in enumerate(self.blocks):
                for o in occs:
                    found.setdefault(o.identity, set()).add(k)
            holders = {ident: frozenset(ks) for ident, ks in found.items()}
        self.holders = holders
        self._by_line: dict[int, list[Occurrence]] = {}
        self._by_identity: dict[Identity, list[Occurrence]] = {}
        for o in outside:
            self._by_line.setdefault(o.span.line, []).append(o)
            self._by_identity.setdefault(o.identity, []).append(o)

    def after(self, outside: list[Occurrence], items: list[Node], fresh: dict[int, tuple[Occurrence, ...]]) -> Symbols:
        """This index after edits within entries `fresh` (each entry's occurrences collected again from `items`)."""
        blocks = list(self.blocks)
        holders = dict(self.holders)  # the sets are replaced, never changed: this index keeps its own
        for k, occs in fresh.items():
            old = {o.identity for o in blocks[k][1]}
            new = {o.identity for o in occs}
            for ident in old - new:
                left = holders[ident] - {k}
                if left:
                    holders[ident] = left
                else:
                    del holders[ident]
            for ident in new - old:
                holders[ident] = holders.get(ident, frozenset()) | {k}
            blocks[k] = (items[k].line, occs)
        return Symbols(outside, self.key, items, blocks, holders)

    def _shift(self, k: int) -> int:
        return self.items[k].line - self.blocks[k][0]

    def at(self, line: int, column: int) -> Occurrence | None:
        """The occurrence under a 1-based position (the end of a name counts: the cursor just after it)."""
        for o in self._by_line.get(line, ()):
            if o.span.column <= column <= o.span.end_column:
                return o
        k = bisect_right(self.items, line, key=_LINE) - 1
        if k < 0:
            return None
        delta = self._shift(k)
        for o in self.blocks[k][1]:
            s = o.span
            if s.line + delta == line and s.column <= column <= s.end_column:
                return _moved(o, delta)
        return None

    def named(self, identity: Identity) -> list[Occurrence]:
        """Every occurrence of one thing, outside the list first, then by entry."""
        found = list(self._by_identity.get(identity, ()))
        for k in sorted(self.holders.get(identity, ())):
            delta = self._shift(k)
            found += [_moved(o, delta) for o in self.blocks[k][1] if o.identity == identity]
        return found

    def __iter__(self) -> Iterator[Occurrence]:
        yield from self.outside
        for k, (_, occs) in enumerate(self.blocks):
            delta = self._shift(k)
            for o in occs:
                yield _moved(o, delta)

    def __len__(self) -> int:
        return len(self.outside) + sum(len(occs) for _, occs in self.blocks)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Symbols) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


# Entries edited since the last index, beyond which the document is collected whole again.
MAX_EDITED = 16


def carried(memo: dict[str, Any], key: str, entries: int) -> tuple[Symbols, set[int]] | None:
    """The last index this analysis comes from through analyses per entry of list `key`, and the entries edited
    since; None when there is none (a whole analysis since, another list, a list of another length)."""
    edited: set[int] = set()
    edit = memo.get(ENTRY_EDIT)
    while isinstance(edit, EntryEdit) and edit.key == key:
        edited |= edit.indices
        if len(edited) > MAX_EDITED:
            return None
        base = edit.before.get(MEMO_KEY)
        if isinstance(base, Symbols):
            return (base, edited) if base.key == key and len(base.blocks) == entries else None
        edit = edit.before.get(ENTRY_EDIT)
    return None


def list_key(loaded: Loaded) -> str:
    """The long list whose entries are collected apart: a native document's only (a dialect's nodes, an inherited
    step's, are not in the order of their lines); "" for none."""
    if loaded.doc.dialect != NATIVE or getattr(loaded.source, "includes", None):
        return ""
    return LISTS.get(loaded.kind or "", "")


def collects_whole(loaded: Loaded) -> bool:
    """Whether collecting the symbols of `loaded` is a pass over the whole document: none collected yet, and none to
    carry over from an earlier analysis's index (`carried`)."""
    if MEMO_KEY in loaded.memo:
        return False
    key = list_key(loaded)
    seq = node_at(loaded.doc.root, (key,)) if key else None
    return not isinstance(seq, SeqNode) or carried(loaded.memo, key, len(seq.items)) is None
