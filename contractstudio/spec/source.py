"""YAML text -> nodes with exact spans, per document; duplicate keys and unsafe tags found.

This is the path live diagnostics take on every edit, so it composes with
libyaml's C parser (PyYAML's CSafeLoader, nodes and marks only: nothing is
ever constructed from a tag) and converts the node graph into small slotted
nodes of our own. Scalars are resolved with the YAML 1.2 core schema, so
`on`, `yes`, `no` stay strings (and are reported), as modern YAML intends.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from contractstudio.analysis.diagnostics import Diagnostic, Related, Span, make

try:  # libyaml is bundled in PyYAML's wheels; the pure loader is a slow but correct fallback.
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

MAX_DEPTH = 200  # deeper documents are a mistake or an attack; the converter is recursive
MAX_EXPANDED_NODES = 200_000  # alias expansion bound (billion laughs)

_STD = "tag:yaml.org,2002:"
_SAFE_TAGS = {f"{_STD}{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq", "binary", "timestamp")}
_INT = re.compile(r"[-+]?[0-9][0-9_]*$|0o[0-7]+$|0x[0-9a-fA-F]+$")
_MAYBE_NOT_STR = set("-+.0123456789~nNtTfF")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
_SPECIAL_FLOAT = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}
_YAML11_BOOL = {"yes", "no", "on", "off", "y", "n"}


class Node:
    """A YAML node with its 1-based span (end exclusive)."""

    __slots__ = ("line", "column", "end_line", "end_column", "tag")

    line: int
    column: int
    end_line: int
    end_column: int
    tag: str

    @property
    def span(self) -> Span:
        return Span(self.line, self.column, self.end_line, self.end_column)


class ScalarNode(Node):
    __slots__ = ("value", "style", "text")

    def __init__(self) -> None:
        self.value: Any = None
        self.style: str = ""
        self.text: str = ""


class MapNode(Node):
    __slots__ = ("pairs", "index")

    def __init__(self) -> None:
        self.pairs: list[tuple[Node, Node]] = []
        # key value (hashable) -> (key node, value node); the last occurrence wins, as in YAML loaders.
        self.index: dict[Any, tuple[Node, Node]] = {}

    def get(self, key: Any) -> Node | None:
        hit = self.index.get(key)
        return hit[1] if hit else None

    def key_node(self, key: Any) -> Node | None:
        hit = self.index.get(key)
        return hit[0] if hit else None


class SeqNode(Node):
    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[Node] = []


@dataclass(slots=True)
class SourceDocument:
    """One `---` document of a file: its root node and plain data."""

    index: int
    root: Node | None
    data: Any
    line: int  # first line of the document

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


class _Reader:
    """Converts one composed PyYAML node graph into our nodes, with checks."""

    def __init__(self, path: str, diagnostics: list[Diagnostic]) -> None:
        self.path = path
        self.diagnostics = diagnostics
        self.memo: dict[int, tuple[Node, Any, int]] = {}
        self.too_deep = False

    def convert(self, node: yaml.Node, depth: int = 0) -> tuple[Node, Any, int]:
        """Return (our node, plain value, expanded node count)."""
        seen = self.memo.get(id(node))
        if seen is not None:  # an alias: share the converted node, count its expansion
            return seen
        if depth > MAX_DEPTH:
            if not self.too_deep:
                self.too_deep = True
                self._report("YML006", f"the document nests deeper than {MAX_DEPTH} levels", node)
            out: Node = ScalarNode()
            self._place(out, node)
            return out, None, 1
        if isinstance(node, yaml.MappingNode):
            result = self._mapping(node, depth)
        elif isinstance(node, yaml.SequenceNode):
            result = self._sequence(node, depth)
        else:
            result = self._scalar(node)
        self.memo[id(node)] = result
        return result

    def _place(self, out: Node, node: yaml.Node) -> None:
        out.line = node.start_mark.line + 1
        out.column = node.start_mark.column + 1
        out.end_line = node.end_mark.line + 1
        out.end_column = node.end_mark.column + 1
        out.tag = node.tag

    def _report(self, code: str, message: str, node: yaml.Node, hint: str | None = None) -> None:
        span = Span(node.start_mark.line + 1, node.start_mark.column + 1, node.end_mark.line + 1, node.end_mark.column + 1)
        self.diagnostics.append(make(code, message, self.path, span, hint=hint))

    def _check_tag(self, node: yaml.Node, implicit_std: str) -> bool:
        """True when the node's tag is safe; reports YML004 otherwise."""
        tag = node.tag
        if tag == implicit_std or tag in _SAFE_TAGS:
            return True
        shown = tag.replace(_STD, "!!")
        if "python/" in tag:
            msg = f"unsafe YAML tag '{shown}' could construct Python objects; it is not constructed"
        else:
            msg = f"unknown YAML tag '{shown}'; ContractStudio documents use plain YAML values"
        self._report("YML004", msg, node, hint="remove the tag")
        return False

    def _mapping(self, node: yaml.MappingNode, depth: int) -> tuple[Node, Any, int]:
        out = MapNode()
        self._place(out, node)
        if not self._check_tag(node, f"{_STD}map"):
            return out, None, 1
        data: dict[Any, Any] = {}
        size = 1
        for k, v in node.value:
            if k.tag == f"{_STD}merge" or (isinstance(k, yaml.ScalarNode) and k.value == "<<" and not k.style):
                self._report("YML004", "merge keys ('<<') are not supported; write the keys out", k)
                continue
            kn, kv, ks = self.convert(k, depth + 1)
            vn, vv, vs = self.convert(v, depth + 1)
            size += ks + vs
            try:
                hash(kv)
            except TypeError:
                self._report("YML001", "a mapping key must be a plain scalar, not a list or mapping", k)
                continue
            if kv in out.index:
                first = out.index[kv][0]
                self.diagnostics.append(
                    make(
                        "YML002",
                        f"duplicate key '{kv}' (first defined at line {first.line})",
                        self.path,
                        kn.span,
                        hint="remove one of them; YAML keeps only the last",
                    )
                )
            out.pairs.append((kn, vn))
            out.index[kv] = (kn, vn)
            data[kv] = vv
        return out, data, size

    def _sequence(self, node: yaml.SequenceNode, depth: int) -> tuple[Node, Any, int]:
        out = SeqNode()
        self._place(out, node)
        if not self._check_tag(node, f"{_STD}seq"):
            return out, None, 1
        data: list[Any] = []
        size = 1
        for item in node.value:
            n, v, s = self.convert(item, depth + 1)
            out.items.append(n)
            data.append(v)
            size += s
        return out, data, size

    def _scalar(self, node: yaml.ScalarNode) -> tuple[Node, Any, int]:
        out = ScalarNode()
        self._place(out, node)
        out.style = node.style or ""
        out.text = node.value
        if not self._check_tag(node, f"{_STD}str"):
            out.value = None
            return out, None, 1
        if node.style:  # quoted and block scalars are strings unless explicitly tagged
            out.value = _explicit(node.value, node.tag) if node.tag != f"{_STD}str" else node.value
        else:
            out.value = _resolve_plain(node.value, node.tag)
            if node.value.lower() in _YAML11_BOOL and node.tag in (f"{_STD}str", f"{_STD}bool"):
                self._report(
                    "YML005",
                    f"'{node.value}' is a string here, but YAML 1.1 tools read it as a boolean",
                    node,
                    hint=f"write \"{node.value}\" (quoted) or true/false",
                )
        return out, out.value, 1


def _explicit(text: str, tag: str) -> Any:
    if tag in (f"{_STD}int", f"{_STD}float", f"{_STD}bool", f"{_STD}null"):
        return _resolve_plain(text, "")
    return text


def _resolve_plain(text: str, tag: str) -> Any:
    """YAML 1.2 core schema resolution of a plain scalar."""
    if text and text[0] not in _MAYBE_NOT_STR:
        return text  # fast path: most scalars are words
    low = text.lower()
    if text == "" or text == "~" or low == "null":
        return None
    if low == "true":
        return True
    if low == "false":
        return False
    try:
        if _INT.match(text):
            t = text.replace("_", "")
            return int(t, 0) if t[:2] in ("0o", "0x") else int(t)
        if low in _SPECIAL_FLOAT:
            return _SPECIAL_FLOAT[low]
        if _FLOAT.match(text) and any(c.isdigit() for c in text):
            return float(text.replace("_", ""))
    except ValueError:  # e.g. an integer with more digits than Python converts
        return text
    return text


def _syntax_diagnostic(path: str, err: yaml.YAMLError, line_offset: int) -> Diagnostic:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    context = getattr(err, "context", None)
    message = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    line = (mark.line + 1 + line_offset) if mark else 1 + line_offset
    column = (mark.column + 1) if mark else 1
    related = []
    ctx_mark = getattr(err, "context_mark", None)
    if ctx_mark is not None and ctx_mark is not mark and context:
        related.append(Related(path, ctx_mark.line + 1 + line_offset, ctx_mark.column + 1, f"{context} started here"))
    return make("YML001", message, path, Span(line, column, line, column + 1), related=related)


_DOC_START = re.compile(r"^---(?:[ \t]|$)", re.M)


def _compose(text: str, path: str, line_offset: int, diagnostics: list[Diagnostic], first_index: int) -> list[SourceDocument]:
    docs: list[SourceDocument] = []
    stream = yaml.compose_all(text, Loader=_Loader)
    while True:
        try:
            root = next(stream)
        except StopIteration:
            break
        except yaml.YAMLError as err:
            diagnostics.append(_syntax_diagnostic(path, err, line_offset))
            break
        if root is None:
            continue
        reader = _Reader(path, diagnostics)
        node, data, size = reader.convert(root)
        if size > MAX_EXPANDED_NODES:
            diagnostics.append(
                make("YML006", f"aliases expand this document to more than {MAX_EXPANDED_NODES:,} nodes", path, node.span,
                     hint="anchors and aliases (&a / *a) must not multiply; write the values out")
            )
            node, data = None, None
        if line_offset and node is not None:
            _shift(node, line_offset, set())
        docs.append(SourceDocument(first_index + len(docs), node, data, (node.line if node else 1 + line_offset)))
    return docs


def _shift(node: Node, offset: int, seen: set[int]) -> None:
    if id(node) in seen:
        return
    seen.add(id(node))
    node.line += offset
    node.end_line += offset
    if isinstance(node, MapNode):
        for k, v in node.pairs:
            _shift(k, offset, seen)
            _shift(v, offset, seen)
    elif isinstance(node, SeqNode):
        for item in node.items:
            _shift(item, offset, seen)


def read_source(text: str, path: str = "<text>") -> SourceFile:
    """Parse YAML text into documents with positions; never raises for bad input."""
    # Building ~10^5 small objects with no cycles: the cyclic GC would only rescan
    # them over and over (a third of the time on big files), so it pauses here.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _read_source(text, path)
    finally:
        if enabled:
            gc.enable()


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
    diagnostics: list[Diagnostic] = []
    try:
        docs = _compose(text, path, 0, diagnostics, 0)
        failed = any(d.code == "YML001" for d in diagnostics)
    except RecursionError:
        docs, failed = [], True
        diagnostics.append(make("YML006", "the document nests too deeply to parse", path, Span(1, 1, 1, 2)))
    if failed and _DOC_START.search(text):
        # Recover the other documents of a multi-document file: one broken
        # document must not hide the diagnostics of the rest.
        diagnostics, docs = _compose_chunks(text, path)
    source.documents = docs
    source.diagnostics = diagnostics
    return source


def _compose_chunks(text: str, path: str) -> tuple[list[Diagnostic], list[SourceDocument]]:
    starts = [0] + [m.start() for m in _DOC_START.finditer(text) if m.start() > 0]
    diagnostics: list[Diagnostic] = []
    docs: list[SourceDocument] = []
    for i, begin in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        chunk = text[begin:end]
        offset = text.count("\n", 0, begin)
        try:
            docs.extend(_compose(chunk, path, offset, diagnostics, len(docs)))
        except RecursionError:
            diagnostics.append(make("YML006", "the document nests too deeply to parse", path, Span(offset + 1, 1, offset + 1, 2)))
    return diagnostics, docs


def inner_span(node: Node, start: int, end: int, source_text: str | None = None) -> Span:
    """The span of characters [start, end) of a scalar's value inside the file.

    Exact for plain and single-line quoted scalars (the common case for
    expressions); for block scalars the value's lines are mapped to the file's
    lines below the indicator; otherwise the whole scalar is returned.
    """
    if not isinstance(node, ScalarNode):
        return node.span
    value = node.text
    if node.style in ("", "'", '"') and node.line == node.end_line and "\\" not in (value if node.style == '"' else ""):
        if node.style == "'" and "''" in source_text_slice(source_text, node):
            return node.span
        shift = 0 if node.style == "" else 1
        col = node.column + shift
        return Span(node.line, col + start, node.line, col + max(end, start + 1))
    if node.style in ("|", ">") and source_text is not None:
        lines = source_text.splitlines()
        before = value[:start]
        line_no = node.line + 1 + before.count("\n")  # content starts below the indicator line
        if 0 < line_no <= len(lines):
            content = lines[line_no - 1]
            indent = len(content) - len(content.lstrip(" "))
            col = indent + 1 + len(before.rsplit("\n", 1)[-1])
            return Span(line_no, col, line_no, col + max(1, end - start))
    return node.span


def source_text_slice(text: str | None, node: Node) -> str:
    """The raw text of a single-line node, or '' when unknown."""
    if text is None or node.line != node.end_line:
        return ""
    lines = text.splitlines()
    if not 0 < node.line <= len(lines):
        return ""
    return lines[node.line - 1][node.column - 1 : node.end_column - 1]
