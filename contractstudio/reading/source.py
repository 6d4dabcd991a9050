"""YAML text -> documents of nodes with exact spans; duplicate keys, unsafe tags and bombs found.

This is the path live diagnostics take on every edit. `reading/builder.py` reads
libyaml's event stream (nothing is ever constructed from a tag) into the nodes
of `reading/nodes.py`. Scalars are resolved with the YAML 1.2 core schema, so
`on`, `yes`, `no` stay strings (and are reported), as modern YAML intends.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

from contractstudio import collector
from contractstudio.collector import paused_gc
from contractstudio.findings.diagnostics import Span, make
from contractstudio.reading import codes as _codes  # noqa: F401  (declares the YML codes this module emits)
from contractstudio.reading.builder import MAX_ALIAS_EXPANSION, MAX_DEPTH, Builder, resolve_plain  # noqa: F401
from contractstudio.reading.nodes import (  # noqa: F401  (re-exported: the public node API)
    MapNode,
    Node,
    ScalarNode,
    SeqNode,
    SourceDocument,
    SourceFile,
    key_at,
    nearest,
    node_at,
)

_DOC_START = re.compile(r"^---(?:[ \t]|$)", re.M)


def read_source(text: str, path: str = "<text>") -> SourceFile:
    """Parse YAML text into documents with positions; never raises for bad input."""
    with paused_gc():
        return _read_source(text, path)


def _read_source(text: str, path: str) -> SourceFile:
    if text.startswith("\ufeff"):
        text = text[1:]
    source = SourceFile(path=path, text=text)
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        source.diagnostics.append(
            make("YML001", "the file contains NUL bytes: it is binary, not YAML text", path, Span(line, 1, line, 2))
        )
        return source
    diagnostics: list = []
    docs = Builder(path, diagnostics).build(text, 0)
    if any(d.code == "YML001" for d in diagnostics) and _DOC_START.search(text):
        # Recover the other documents of a multi-document file: one broken
        # document must not hide the diagnostics of the rest.
        diagnostics, docs = [], []
        for offset, chunk in document_chunks(text):
            docs.extend(Builder(path, diagnostics, offset).build(chunk, len(docs)))
    source.documents = docs
    source.diagnostics = diagnostics
    return source


def document_markers(text: str) -> list[int]:
    """The offsets of the lines that start with a `---` marker (then a blank or the line's end): `_DOC_START`'s
    matches, found with `str.find` (a multi-line `^` makes the regex engine try every character of the text)."""
    found = [0] if _DOC_START.match(text) else []
    at, end = 0, len(text)
    while at < end:
        # A piece at a time: one search of 5 MB holds the interpreter for 5 ms while the studio's keys wait (its
        # worker asks per key); between pieces the other threads get their turn.
        stop = min(at + _PIECE, end)
        hit = text.find("\n---", at, stop + 3)  # a marker that starts in this piece is found here, whole
        if hit < 0:
            at = stop
            continue
        if text[hit + 4 : hit + 5] in ("", " ", "\t", "\n"):
            found.append(hit + 1)
        at = hit + 4
    return found


def document_chunks(text: str) -> list[tuple[int, str]]:
    """The text cut before every `---` line: (0-based line of the chunk's start, chunk), in order.

    A `---` at the start of a line always starts a document (inside a quoted or flow scalar it is a syntax error),
    so each chunk read on its own at its line gives the documents the whole text gives there, unless the text has
    a directive (`%YAML`), which applies across the cut.
    """
    starts = [0] + [at for at in document_markers(text) if at > 0]
    chunks: list[tuple[int, str]] = []
    offset = 0
    for i, begin in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        offset += text.count("\n", starts[i - 1] if i else 0, begin)  # from the previous start: linear in the file
        chunks.append((offset, text[begin:end]))
    return chunks


def read_value(text: str, name: str = "<value>") -> Any:
    """One YAML or JSON value (a call's input), read like a document: the same reader, the same limits.

    Depth, alias expansion (nodes and characters) and tags are bounded as in a
    document, so a hostile input is a ValueError naming its position, never a hang.
    """
    document = read_one(text, name)
    return document.data if document is not None else None


def read_one(text: str, name: str = "<value>") -> SourceDocument | None:
    """The one document of a text (None when empty), with its nodes; raises ValueError as `read_value` does."""
    source = read_source(text, name)
    errors = [d for d in source.diagnostics if d.severity == "error"]
    if errors:
        d = errors[0]
        if d.code == "YML001":
            problem = d.message.removeprefix("YAML syntax error: ")
            raise ValueError(f"{name}:{d.line}:{d.column}: the input is not valid YAML or JSON: {problem}")
        raise ValueError(f"{name}:{d.line}:{d.column}: the input is refused: {d.message}")
    if len(source.documents) > 1:
        raise ValueError(f"{name}:{source.documents[1].line}:1: the input holds {len(source.documents)} YAML documents; "
                         "it must be one value")
    return source.documents[0] if source.documents else None


def inner_span(node: Node, start: int, end: int, source_text: str | None = None) -> Span:
    """The span of characters [start, end) of a single-line scalar's value inside the file.

    Exact for plain and quoted scalars on one line (the common case for
    expressions); anything else gets the whole scalar. Multi-line values are
    mapped by `analysis.positions.value_span`, which rebuilds YAML's folding.
    """
    if not isinstance(node, ScalarNode) or node.line != node.end_line or node.style not in ("", "'", '"'):
        return node.span
    if node.style == '"' and "\\" in source_text_slice(source_text, node):
        return node.span  # escapes shift columns
    if node.style == "'" and "''" in source_text_slice(source_text, node):
        return node.span
    col = node.column + (0 if node.style == "" else 1)
    return Span(node.line, col + start, node.line, col + max(end, start + 1))


# Where `str.splitlines` breaks a line besides "\n" (and "\r\n"): a text with none of them has the same lines cut at "\n".
_OTHER_BREAKS = ("\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
# A long text is split a piece at a time: one split of 5 MB holds the interpreter for 15-20 ms, and the studio's
# screen, whose keys wait for it, splits in an analysis worker (editing/live.py). A piece takes about half a millisecond.
_PIECE = 1 << 18


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int
    currsize: int


class _KeptPerText:
    """`split(text)` for the last `size` texts, as `functools.lru_cache` keeps them, with the rows of a text no longer
    kept let go a piece at a time (`collector.let_go`): freed at once, a 5 MB text's rows held the interpreter 10-15 ms
    in the studio's analysis worker while a key waited."""

    def __init__(self, split: Callable[[str], tuple[str, ...]], size: int) -> None:
        self._split, self._size = split, size
        self._kept: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()  # the analysis worker and the screen's thread both ask
        self._hits = self._misses = 0
        self.__doc__, self.__wrapped__ = split.__doc__, split

    def __call__(self, text: str) -> tuple[str, ...]:
        with self._lock:
            got = self._kept.pop(text, None)
            if got is not None:
                self._kept[text] = got  # the newest again
                self._hits += 1
                return got
        got = self._split(text)
        with self._lock:
            self._misses += 1
            self._kept[text] = got
            evicted = [self._kept.pop(next(iter(self._kept))) for _ in range(len(self._kept) - self._size)]
        while evicted:
            collector.let_go(evicted.pop())
        return got

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, self._size, len(self._kept))

    def cache_clear(self) -> None:
        with self._lock:
            self._kept.clear()


def _text_rows(text: str) -> tuple[str, ...]:
    """The text's lines cut at "\n" only (an editor's rows), once per text."""
    if len(text) <= _PIECE:
        return tuple(text.split("\n"))
    found: list[str] = []
    start = 0
    while True:
        cut = text.find("\n", start + _PIECE)
        if cut < 0:
            found += text[start:].split("\n")
            return tuple(found)
        found += text[start:cut].split("\n")
        start = cut + 1


text_rows = _KeptPerText(_text_rows, 2)  # the shown analysis's text and the next: a 5 MB text's rows are ~10 MB


def _text_lines(text: str) -> tuple[str, ...]:
    """`text.splitlines()`, split once per text: positions are asked for per finding, and a file may hold thousands.
    A text whose only line breaks are "\n" (nearly all) shares its rows' split."""
    if any(b in text for b in _OTHER_BREAKS):
        return tuple(text.splitlines())
    rows = text_rows(text)
    return rows[:-1] if rows[-1] == "" else rows  # splitlines has no empty line after a final "\n"


text_lines = _KeptPerText(_text_lines, 4)


def source_text_slice(text: str | None, node: Node) -> str:
    """The raw text of a single-line node, or '' when unknown."""
    if text is None or node.line != node.end_line:
        return ""
    lines = text_lines(text)
    if not 0 < node.line <= len(lines):
        return ""
    return lines[node.line - 1][node.column - 1 : node.end_column - 1]
