"""Where the cursor is in the YAML structure, read from the live text by indentation.

While an author types, the text is usually not valid YAML (`ent` without its
colon is a syntax error), so the node tree of the last analysis cannot say
where the cursor is. Block YAML's structure is in its indentation: walking up
from the cursor line to the lines that open each enclosing mapping or list
gives the document path of the key or value being typed, which is all
completion needs. Flow collections on the cursor line (`[a, b` / `{type: st`)
are followed too.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from contractstudio.analysis.check import FileReport, Loaded
from contractstudio.editing import row_scan as scan
from contractstudio.editing.text import rows
from contractstudio.findings.diagnostics import Span
from contractstudio.reading.kinds import KIND_LINE
from contractstudio.reading.source import MapNode, document_markers

_DOC_SEP = re.compile(r"^---(?:[ \t]|$)")
_DASH = re.compile(r"-(?: +|$)")
# A plain key runs greedily to the first ':' or '#' (it cannot pass either) and its trailing blanks are stripped in
# code: a lazy key followed by `[ \t]*` tried every split of a run of blanks, quadratic on a long line of spaces.
_KEY = re.compile(r"""(?P<key>"[^"]*"[ \t]*|'[^']*'[ \t]*|[^\s#'"{}\[\],&*!|>%@`-][^:#]*|-[^\s:#][^:#]*):(?=[ \t]|$)""")
_BLOCK_INDICATOR = re.compile(r"^[|>][-+0-9]*[ \t]*(?:#.*)?$")
WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
WORD_AFTER = re.compile(r"^[A-Za-z0-9_\-]*")


@dataclass(frozen=True, slots=True)
class Anchor:
    """Something that opens structure on a line: a list dash or a key."""

    kind: str  # 'dash' | 'key'
    col: int  # 0-based column
    key: str = ""
    value: str = ""  # the inline value after 'key:' (comments stripped)
    value_col: int = 0


def anchors(line: str) -> list[Anchor]:
    """The dashes and the key that open structure on one line (`  - - key: v` -> dash, dash, key)."""
    out: list[Anchor] = []
    pos = len(line) - len(line.lstrip(" "))
    while True:
        m = _DASH.match(line, pos)
        if not m:
            break
        out.append(Anchor("dash", pos))
        pos = m.end()
    m = _KEY.match(line, pos)
    if m:
        key = m.group("key").rstrip(" \t")
        if key[:1] in "\"'":
            key = key[1:-1]
        rest = line[m.end() :]
        value_col = m.end() + len(rest) - len(rest.lstrip(" \t"))
        out.append(Anchor("key", pos, key, _strip_comment(rest).strip(), value_col))
    return out


def word_before(text: str) -> str:
    """The identifier-like word that ends the text (letters, digits, `_`, `-`), found walking back from its end.

    Linear in the word's length: a regex searched for `[...]*$` restarts at every position of a long line (quadratic).
    """
    start = len(text)
    while start and text[start - 1] in WORD_CHARS:
        start -= 1
    return text[start:]


def _strip_comment(text: str) -> str:
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i]
    return text


def _blank(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("#")


@dataclass(slots=True)
class Cursor:
    """The cursor's place: a key being typed in the mapping at `path`, or the value at `path`."""

    line: int  # 1-based
    column: int  # 1-based, the cursor is before this character
    doc_index: int  # which `---` document of the text (0 for the first)
    role: str  # 'key' | 'value'
    path: tuple[Any, ...]  # key: the mapping's path; value: the value's path
    word: str  # the identifier-like text typed before the cursor
    word_span: Span  # the whole word around the cursor (what a completion replaces)
    value_before: str = ""  # value: the scalar's text before the cursor (after the key and any quote)
    value_span: Span | None = None  # value: from the start of the value to the end of the line's value text
    quote: str = ""  # the value's opening quote, if any
    block: bool = False  # the value is a block scalar (| or >)
    siblings: dict[str, str] = field(default_factory=dict)  # keys already in the mapping -> inline values
    needs_space: bool = False  # the cursor is right after 'key:' (a value needs a space first)
    kind: str | None = None  # the document's `kind:` as written in the live text
    rest: str = ""  # the line's text after the word (a key already followed by ':' needs none inserted)
    item_path: tuple[Any, ...] | None = None  # key role on a bare `- `: the path if the item is a scalar


def document_index(lines: Sequence[str], line_index: int, known: FileReport | None = None) -> int:
    """The `---` document a 0-based line belongs to (a leading `---` opens the first one).

    `known`: an analysis of an earlier version of the text. Where the lines above the line's own document are the
    same in both (compared in C), the documents above are counted from it (a bisection); else they are walked.
    """
    lines = scan.Rows.of(lines)
    if known is not None and line_index < len(lines) and not _DOC_SEP.match(lines[line_index]):
        top = _doc_start(lines, line_index)
        earlier = rows(known.text)
        if top <= len(earlier) and tuple(lines[:top]) == earlier[:top]:
            return report_document_index(known, top - 1) if top else 0
    return bisect.bisect_right(_document_starts(lines, line_index + 1), line_index)


def _document_starts(lines: Sequence[str] | tuple[str, ...], end: int) -> list[int]:
    """The 0-based rows (below `end`) of the `---` lines that start a new document: one after content only."""
    starts: list[int] = []
    since = 0  # the row after the last `---`
    for row in scan.rows_down(lines, 0, end, scan.DOCUMENT_MARKER):
        if scan.first_row_down(lines, since, row, scan.CONTENT) is not None:
            starts.append(row)
        since = row + 1
    return starts


@lru_cache(maxsize=4)
def document_starts(text: str) -> tuple[int, ...]:
    """`_document_starts` of a whole analyzed text, worked out once per text (in the analysis worker: see
    editing/live.py): a report's document of a line is then a bisection, not a scan of the lines above it.

    The same rule with `str.find` doing the scanning (a 5 MB text: milliseconds, not a Python loop per line): a
    `---` line starts a document when a line of content (not blank, not a comment) came since the last.
    """
    starts: list[int] = []
    row = previous = 0  # the row and offset where the text since the last `---` line begins
    for at in document_markers(text):
        row += text.count("\n", previous, at)
        if _has_content(text, previous, at):
            starts.append(row)
        end = text.find("\n", at)
        previous = len(text) if end < 0 else end
    return tuple(starts)


def _has_content(text: str, start: int, end: int) -> bool:
    """Whether a line of text[start:end] is neither blank nor a comment (line by line: content comes early)."""
    while start < end:
        stop = text.find("\n", start, end)
        stop = end if stop < 0 else stop
        if not _blank(text[start:stop]):
            return True
        start = stop + 1
    return False


def report_document_index(report: FileReport, line_index: int) -> int:
    """`document_index` of a 0-based line of the report's own text."""
    return bisect.bisect_right(document_starts(report.text), line_index)


def loaded_for(report: FileReport | None, doc_index: int) -> Loaded | None:
    """The analyzed document that is the `doc_index`-th `---` document of the report's text."""
    if report is None:
        return None
    if len(report.documents) == 1 and doc_index == 0:
        return report.documents[0]
    starts = document_starts(report.text)  # once, not per document (see LiveDocument.accept)
    return next((d for d in report.documents if bisect.bisect_right(starts, d.doc.line - 1) == doc_index), None)


def document_at(report: FileReport, line: int) -> Loaded | None:
    """The analyzed document that holds a 1-based line of the report's own text."""
    return loaded_for(report, report_document_index(report, line - 1))


def _doc_start(lines: Sequence[str], line_index: int) -> int:
    return scan.Rows.of(lines).document_start(line_index)


def _walk_up(lines: Sequence[str], start: int, col: int, mode: str, top: int) -> tuple[list[Any], dict[str, str]]:
    """The path of the collection holding a key (mode 'map') or an item (mode 'seq') at `col`, above line `start`."""
    path: list[Any] = []
    siblings: dict[str, str] = {}
    collecting = mode == "map"
    index = 0
    j = start
    found_rows: Iterator[tuple[int | None, int]] = iter(())
    scanning: tuple[str, int] | None = None
    while True:
        if scanning != (mode, col):  # only the rows indented `col` or less can change the walk (row_scan.py)
            seq = mode == "seq"
            pattern = scan.indented_at_most_but_items(col) if seq else scan.indented_at_most(col)
            found_rows, scanning = scan.rows_up(lines, top, j, pattern, scan.item_at(col) if seq else None), (mode, col)
        row, items = next(found_rows)
        index += items  # the items of our list between this row and the last (in C)
        if row is None:
            break
        j = row
        line = lines[row]
        if _blank(line) or _DOC_SEP.match(line):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent > col:
            continue
        found = anchors(line)
        if not found:
            continue  # a line of a multi-line scalar
        at = [a for a in found if a.col == col]
        below = [a for a in found if a.col < col]
        if mode == "map" and at and at[0].kind == "key":
            if collecting:
                siblings.setdefault(at[0].key, at[0].value)
            if below and below[-1].kind == "dash":  # the first key of our list item
                collecting = False
                mode, col, index = "seq", below[-1].col, 0
            continue
        if mode == "seq" and at and at[0].kind == "dash":
            index += 1
            continue
        if mode == "seq" and at and at[0].kind == "key":
            # a compact list (`steps:` then `- id: a` at the same column): this key owns it
            path.insert(0, index)
            below = found[: found.index(at[0]) + 1]
        elif not below:
            continue
        elif mode == "seq":
            path.insert(0, index)
        collecting = False
        parent = below[-1]
        if parent.kind == "dash":  # we are inside an item that starts on this line
            mode, col, index = "seq", parent.col, 0
            continue
        path.insert(0, parent.key)
        mode, col = "map", parent.col
        before = found[: found.index(parent)]
        if before and before[-1].kind == "dash":
            mode, col, index = "seq", before[-1].col, 0
        if col == 0 and mode == "map":
            return path, siblings
    if mode == "seq":
        path.insert(0, index)
    return path, siblings


def _siblings_below(lines: Sequence[str], start: int, col: int, bottom: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for j in scan.rows_down(lines, start + 1, bottom, scan.indented_at_most(col)):  # deeper rows hold nothing at `col`
        line = lines[j]
        if _blank(line):
            continue
        if _DOC_SEP.match(line):
            break
        indent = len(line) - len(line.lstrip(" "))
        found = anchors(line)
        if indent < col:
            break
        for a in found:
            if a.col == col and a.kind == "key":
                out.setdefault(a.key, a.value)
            elif a.col == col and a.kind == "dash":
                return out  # the next item of an enclosing list
    return out


def _block_scalar_owner(lines: Sequence[str], li: int, col: int, top: int) -> tuple[int, Anchor] | None:
    """The key line whose `|` / `>` block scalar contains line li (indented deeper than col), or None."""
    line = lines[li]
    inner = len(line) - len(line.lstrip(" ")) if line.strip() else col
    for j, _ in scan.rows_up(lines, top, li, scan.indented_at_most(inner - 1)) if inner > 0 else ():
        if j is None:
            return None
        above = lines[j]
        if not above.strip():
            continue
        indent = len(above) - len(above.lstrip(" "))
        if indent >= inner:
            continue
        found = anchors(above)
        if found and found[-1].kind == "key" and _BLOCK_INDICATOR.match(found[-1].value or "-"):
            return j, found[-1]
        return None
    return None


def locate(text: str | Sequence[str], line: int, column: int, known: FileReport | None = None) -> Cursor | None:
    """The cursor context at a 1-based position of the live text or its lines (None past the end of the text);
    `known`: an earlier analysis of the text to count the `---` documents above from (`document_index`)."""
    # an editor's lines: no 5 MB split per keystroke; each block of them joined once for all the walks below
    lines = scan.Rows.of(rows(text) if isinstance(text, str) else text)
    li = line - 1
    if not 0 <= li < len(lines):
        return None
    cursor = _locate(lines, line, column, known)
    if cursor is not None:
        raw = lines[li].rstrip("\r")
        cursor.rest = raw[cursor.word_span.end_column - 1 :]
        cursor.kind = _document_kind(lines, _doc_start(lines, li), li, known, cursor.doc_index)
    return cursor


def _document_kind(lines: Sequence[str], top: int, li: int, known: FileReport | None, doc_index: int) -> str | None:
    """The `kind:` of the document whose rows start at `top` (the cursor on row `li`), as the live rows say: the first
    row from `top` on that names it, unless a `---` below the cursor comes first.

    A contract's `kind:` may follow its 32,000 examples, and walking down to it was a regular expression per row, twice
    a key on the screen's thread (completion, then the detail line: 50-70 ms each on the 5 MB examples,
    bench_typing --trace). So the row where the last analysis found the document's `kind` key is read first: a
    `kind:` at the line's start is a key of the document's top mapping, which has one. It is taken when that row
    still says `kind:` and no `---` can lie between the cursor and it (it is above the cursor, or the analyzed text
    was one document). Else the rows are searched in C a block at a time (row_scan.py)."""
    loaded = loaded_for(known, doc_index)
    root = loaded.doc.root if loaded is not None else None
    node = root.key_node("kind") if isinstance(root, MapNode) else None
    if node is not None and known is not None and top <= node.line - 1 < len(lines):
        m = KIND_LINE.match(lines[node.line - 1])
        if m and (node.line - 1 <= li or not document_starts(known.text)):
            return m.group(1)
    for j in scan.rows_down(lines, top, len(lines), scan.KIND_KEY):
        m = KIND_LINE.match(lines[j])
        if m is not None:
            return None if j > li and scan.first_row_down(lines, li + 1, j, scan.DOCUMENT_MARKER) is not None else m.group(1)
    return None


def _locate(lines: Sequence[str], line: int, column: int, known: FileReport | None) -> Cursor | None:
    li = line - 1
    raw = lines[li].rstrip("\r")
    col0 = min(max(column - 1, 0), len(raw))
    before = raw[:col0]
    word = word_before(before)
    after = WORD_AFTER.match(raw[col0:]).group(0)  # type: ignore[union-attr]
    word_span = Span(line, col0 - len(word) + 1, line, col0 + len(after) + 1)
    top = _doc_start(lines, li)
    doc = document_index(lines, li, known)
    bottom = len(lines)  # the lines below are read as far as they are needed: each scan stops at a `---` itself

    owner = _block_scalar_owner(lines, li, col0, top)
    if owner is not None:
        kline, block_key = owner
        map_path, _ = _key_path(lines, kline, block_key, top)
        content = [ln.strip() for ln in lines[kline + 1 : li]] + [before.strip()]
        return Cursor(line, column, doc, "value", map_path + (block_key.key,), word, word_span,
                      value_before="\n".join(content), block=True)

    found = anchors(before)
    key = found[-1] if found and found[-1].kind == "key" else None
    if key is None or col0 < key.value_col:
        # typing a key (maybe the first key of a new list item)
        dashes = [a for a in found if a.kind == "dash"]
        kcol = col0 - len(word)
        if before[: kcol].strip(" -") or (key is not None):
            return None  # inside something we do not follow (a key's own text)
        if dashes:
            path, _ = _walk_up(lines, li, dashes[-1].col, "seq", top)
            path_t = tuple(path)
            siblings = _siblings_below(lines, li, kcol, bottom)
            return Cursor(line, column, doc, "key", path_t, word, word_span, siblings=siblings, item_path=path_t)
        path, siblings = _walk_up(lines, li, kcol, "map", top)
        siblings.update(_siblings_below(lines, li, kcol, bottom))
        return Cursor(line, column, doc, "key", tuple(path), word, word_span, siblings=siblings)

    map_path, siblings = _key_path(lines, li, key, top)
    siblings.update(_siblings_below(lines, li, key.col, bottom))
    value_before = raw[key.value_col : col0]
    value_end = len(_strip_comment(raw[key.value_col :]).rstrip()) + key.value_col
    vspan = Span(line, key.value_col + 1, line, max(value_end, col0) + 1)
    value_path = map_path + (key.key,)
    if value_before[:1] in ("[", "{"):
        return _flow(line, column, doc, value_path, value_before, word, word_span, siblings)
    quote = value_before[:1] if value_before[:1] in ("'", '"') else ""
    return Cursor(line, column, doc, "value", value_path, word, word_span, value_before=value_before[len(quote):],
                  value_span=vspan, quote=quote, siblings=siblings, needs_space=col0 > 0 and raw[col0 - 1] == ":")


def _key_path(lines: Sequence[str], li: int, key: Anchor, top: int) -> tuple[tuple[Any, ...], dict[str, str]]:
    """The path of the mapping that holds the key on line li."""
    before = [a for a in anchors(lines[li]) if a.col < key.col]
    if before and before[-1].kind == "dash":
        path, _ = _walk_up(lines, li, before[-1].col, "seq", top)
        return tuple(path), {}
    path, siblings = _walk_up(lines, li, key.col, "map", top)
    return tuple(path), siblings


def _flow(line: int, column: int, doc: int, path: tuple[Any, ...], text: str, word: str, word_span: Span,
          siblings: dict[str, str]) -> Cursor:
    """A cursor inside `[a, b` or `{k: v, k2: ` on the cursor line."""
    stack: list[list[Any]] = []  # [bracket, path, item index, current key, keys seen]
    quote = ""
    token_start = 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "[{":
            inner = path if not stack else _flow_child(stack[-1])
            stack.append([ch, inner, 0, None, {}])
            token_start = i + 1
        elif ch in "]}" and stack:
            stack.pop()
        elif ch == "," and stack:
            top = stack[-1]
            top[2] += 1
            top[3] = None
            token_start = i + 1
        elif ch == ":" and stack and stack[-1][0] == "{" and (i + 1 == len(text) or text[i + 1] in " \t"):
            top = stack[-1]
            top[3] = text[token_start:i].strip().strip("'\"")
            top[4][top[3]] = ""
            token_start = i + 1
    if not stack:
        return Cursor(line, column, doc, "value", path, word, word_span, value_before=text, siblings=siblings)
    bracket, where, index, key, seen = stack[-1]
    piece = text[token_start:].lstrip()
    q = piece[:1] if piece[:1] in ("'", '"') else ""
    if bracket == "[":
        return Cursor(line, column, doc, "value", tuple(where) + (index,), word, word_span, value_before=piece[len(q):], quote=q)
    if key is None:
        return Cursor(line, column, doc, "key", tuple(where), word, word_span, siblings=dict(seen))
    return Cursor(line, column, doc, "value", tuple(where) + (key,), word, word_span, value_before=piece[len(q):], quote=q,
                  siblings=dict(seen))


def _flow_child(frame: list[Any]) -> tuple[Any, ...]:
    bracket, where, index, key, _ = frame
    return tuple(where) + ((index,) if bracket == "[" else (key,) if key is not None else ())
