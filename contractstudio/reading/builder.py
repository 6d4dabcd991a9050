"""libyaml's event stream -> our nodes and plain data, in one iterative pass.

Why events and not `yaml.compose`: the composer builds a PyYAML node (and two
marks) per value and calls a Python resolver for every scalar; reading the C
parser's events directly costs half as much, and the nodes we build from them
are the only ones we need. The pass is iterative, so depth is bounded by a
limit we choose, not by Python's recursion limit. Nothing is ever constructed
from a tag: tags are only looked at.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from contractstudio.findings.diagnostics import Diagnostic, Related, Span, make
from contractstudio.reading import codes as _codes  # noqa: F401  (declares the YML codes this module emits)
from contractstudio.reading.nodes import MapNode, ScalarNode, SeqNode, SourceDocument, new_scalar
from contractstudio.reading.portability import (
    Unreadable,
    could_differ,
    describe,
    other_reading,
    same_value,
    tab_findings,
    tagged_reading,
    tagged_reading_11,
)

_CParser: Any = None
try:  # libyaml ships in PyYAML's wheels; the pure-Python parser is a slow but correct fallback.
    from yaml._yaml import CParser
    _CParser = CParser
    _Loader: Any = yaml.CSafeLoader
except ImportError:  # pragma: no cover
    _Loader = yaml.SafeLoader

MAX_DEPTH = 200  # deeper documents are a mistake or an attack
MAX_ALIAS_EXPANSION = 200_000  # nodes that aliases may add by repetition (billion laughs)
MAX_ALIAS_CHARS = 10_000_000  # characters of scalars that aliases may add: one big scalar aliased many times
# Levels below the depth bound that are still parsed (and skipped) to read the rest of the document; deeper, the
# text is abandoned: libyaml checks every open flow level on each token, so skipping 30,000 levels took seconds
# and a megabyte of `[` hours (issue 18). The document with the YML006 is dropped, later ones are not read.
ABANDON_BELOW = 300

_STD = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = f"{_STD}str", f"{_STD}map", f"{_STD}seq"
_VERSIONED_TAGS = {f"{_STD}{t}" for t in ("int", "float", "bool")}  # tags whose reading a %YAML 1.1 header changes
_SCALAR_TAGS = {f"{_STD}{t}" for t in ("str", "int", "float", "bool", "null", "binary", "timestamp")}
_INT = re.compile(r"[-+]?[0-9][0-9_]*$|0o[0-7]+$|0x[0-9a-fA-F]+$")
_MAYBE_NOT_STR = frozenset("-+.0123456789~nNtTfF")
_NUMBERISH = frozenset("-+.0123456789")  # plain scalars other YAML readers may read differently start so
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$")
# YAML 1.2 core forms, exactly (`tRUE` and `.iNf` are text, as for every other 1.2 reader)
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_SPECIAL_FLOAT = {f"{sign}.{word}": float(f"{sign or '+'}inf") for sign in ("", "+", "-") for word in ("inf", "Inf", "INF")}
_SPECIAL_FLOAT.update({f".{word}": float("nan") for word in ("nan", "NaN", "NAN")})
_YAML11_BOOL = frozenset({"yes", "no", "on", "off"})  # what PyYAML and most 1.1 tools read as booleans

_Scalar, _Alias = yaml.ScalarEvent, yaml.AliasEvent
_MapStart, _MapEnd = yaml.MappingStartEvent, yaml.MappingEndEvent
_SeqStart, _SeqEnd = yaml.SequenceStartEvent, yaml.SequenceEndEvent
_DocStart, _DocEnd = yaml.DocumentStartEvent, yaml.DocumentEndEvent


def resolve_plain(text: str) -> Any:
    """YAML 1.2 core schema resolution of a plain scalar."""
    if text and text[0] not in _MAYBE_NOT_STR:
        return text  # fast path: most scalars are words
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    try:
        if _INT.match(text):
            t = text.replace("_", "")
            return int(t, 0) if t[:2] in ("0o", "0x") else int(t)
        if text in _SPECIAL_FLOAT:
            return _SPECIAL_FLOAT[text]
        if _FLOAT.match(text) and any(c.isdigit() for c in text):
            return float(text.replace("_", ""))
    except ValueError:  # e.g. an integer with more digits than Python converts
        return text
    return text


class _Frame:
    __slots__ = ("node", "data", "size", "chars", "key", "is_map", "anchor")

    def __init__(self, node: Any, data: Any, is_map: bool, anchor: str | None) -> None:
        self.node, self.data, self.size, self.chars, self.is_map, self.anchor = node, data, 1, 0, is_map, anchor
        self.key: Any = None  # a mapping's key node, waiting for its value


def _events(text: str) -> tuple[Any, Any]:
    """(get, dispose): libyaml's parser called directly, `get()` returning each event and None at the end.

    One C call per event: `yaml.parse` wraps the same parser in a generator and a second call per event.
    """
    if _CParser is not None:
        parser = _CParser(text)
        return parser.get_event, parser.dispose
    events = yaml.parse(text, Loader=_Loader)  # pragma: no cover - PyYAML without libyaml
    return (lambda: next(events, None)), (lambda: None)


class Builder:
    """Builds the documents of one text (or one chunk of it, at a line offset)."""

    def __init__(self, path: str, diagnostics: list[Diagnostic], line_offset: int = 0, max_depth: int = MAX_DEPTH) -> None:
        self.path = path
        self.diagnostics = diagnostics
        self.offset = line_offset
        self.max_depth = max_depth  # less than MAX_DEPTH for a chunk read on its own at some depth of its document
        self.dropped = False  # a pair of the current document was left out of its mapping (merge key, collection key)
        self.header: Any = None  # where a %YAML 1.1 header is
        self._quoted: list[tuple[int, int]] | None = None

    def _span(self, start: Any, end: Any) -> Span:
        return Span(start.line + 1 + self.offset, start.column + 1, end.line + 1 + self.offset, end.column + 1)

    def _report(self, code: str, message: str, start: Any, end: Any, hint: str | None = None) -> None:
        self.diagnostics.append(make(code, message, self.path, self._span(start, end), hint=hint))

    def _refuse_tag(self, tag: str, start: Any, end: Any) -> None:
        shown = tag.replace(_STD, "!!")
        if "python/" in tag:
            msg = f"unsafe YAML tag '{shown}' could construct Python objects; it is not constructed"
        else:
            msg = f"unknown YAML tag '{shown}'; ContractStudio documents use plain YAML values"
        self._report("YML004", msg, start, end, hint="remove the tag")

    def build(self, text: str, first_index: int) -> list[SourceDocument]:
        """Every complete document of the text; a syntax error ends the stream with YML001."""
        docs: list[SourceDocument] = []
        try:
            self._run(text, first_index, docs)
        except yaml.YAMLError as err:
            self.diagnostics.append(syntax_diagnostic(self.path, err, self.offset))
            return docs
        if self._quoted is not None:
            self.diagnostics.extend(tab_findings(text, self._quoted, self.path, self.offset))
        return docs

    def _other_reading(self, raw: str, value: Any, version: tuple[int, int] | None, start: Any, end: Any) -> None:
        """YML008 where other YAML tools (ruamel.yaml) read a plain scalar differently, or not at all."""
        try:
            theirs = other_reading(raw, version)
        except Unreadable as err:
            self._report("YML008", f"{err}: other YAML tools fail to read it", start, end, hint="quote it if it is text")
            return
        if same_value(value, theirs):
            return
        if version == (1, 1):
            line = self.header.line + 1 + self.offset if self.header is not None else 1
            why = f"the %YAML 1.1 header (line {line}) makes other YAML tools read {describe(theirs)}"
            hint = "remove the %YAML 1.1 header (ContractStudio reads YAML 1.2) or quote the value"
        else:
            why = f"other YAML tools (ruamel.yaml, for one) read {describe(theirs)}"
            hint = "quote it if it is text, or write the number in YAML 1.2's form"
        ours = "text" if isinstance(value, str) else describe(value)
        self._report("YML008", f"'{raw}' is {ours} here, but {why}", start, end, hint=hint)

    def _tagged_11(self, raw: str, tag: str, start: Any, end: Any) -> Any:
        """A tagged number or boolean under a %YAML 1.1 header: our (1.2) value, and YML008 where ruamel's 1.1 differs."""
        try:
            value: Any = tagged_reading(raw, tag)
        except Unreadable:
            value = raw
        try:
            theirs = tagged_reading_11(raw, tag)
        except Unreadable as err:
            self._report("YML008", f"{err}: other YAML tools refuse it or read something else", start, end,
                         hint="fix the value or remove the tag")
            return value
        if not same_value(value, theirs):
            line = self.header.line + 1 + self.offset if self.header is not None else 1
            ours = "not readable as YAML 1.2" if value is raw else describe(value)
            self._report("YML008", f"'{raw}' is {ours} here, but the %YAML 1.1 header (line {line}) makes other YAML tools "
                         f"read {describe(theirs)}", start, end,
                         hint="remove the %YAML 1.1 header (ContractStudio reads YAML 1.2) or write the value in YAML 1.2's form")
        return value

    def _run(self, text: str, first_index: int, docs: list[SourceDocument]) -> None:
        # The hottest loop of every analysis: one pass per event, the common cases inline (a scalar attached
        # to its parent, a pair whose key is new), the rare ones in methods.
        off = self.offset
        stack: list[_Frame] = []
        # An item is (node, data, nodes in it, characters of its scalars): aliases are measured by both.
        # Sizes are counted only inside anchored collections (`anchored` of them are open): nothing else is aliased.
        anchors: dict[str, tuple[Any, Any, int, int]] = {}
        anchored = 0
        root: tuple[Any, Any, int, int] | None = None
        skip = 0  # > 0 while inside a subtree deeper than max_depth
        expansion = chars = 0
        bomb = False
        ev: Any  # libyaml's C events: typed only as the abstract yaml.Event
        node: Any
        version: tuple[int, int] | None = None
        # Only a text with a tab pays for this: where quoted and block scalars are, to find tabs outside them.
        tabs: list[tuple[int, int]] | None = [] if "\t" in text else None
        self._quoted = tabs
        # Every scalar and mapping of the document in document order (flat scans read these, not the tree).
        scalars: list[Any] = []
        mappings: list[Any] = []
        add_scalar, add_mapping = scalars.append, mappings.append
        tuple_new, scalar_class, str_tag = tuple.__new__, ScalarNode, _STR
        maybe_not_str, numberish, yaml11 = _MAYBE_NOT_STR, _NUMBERISH, _YAML11_BOOL
        get, dispose = _events(text)
        try:
            while (ev := get()) is not None:
                cls = ev.__class__
                if cls is _Scalar:
                    if skip:
                        continue
                    sm, em = ev.start_mark, ev.end_mark
                    tag, raw = ev.tag, ev.value
                    if tag is None or tag == "!":
                        style = ev.style
                        if style:
                            value: Any = raw
                            if tabs is not None:
                                tabs.append((sm.index, em.index))  # a tab inside quotes or a block scalar is fine
                        else:
                            style = ""
                            if raw and raw[0] not in maybe_not_str:
                                value = raw  # most scalars are words
                                if version is not None and could_differ(raw, version):
                                    self._other_reading(raw, value, version, sm, em)
                                elif version != (1, 1) and len(raw) <= 3 and raw.lower() in yaml11:
                                    self._report("YML005", f"'{raw}' is a string here, but YAML 1.1 tools read it as a boolean",
                                                 sm, em, hint=f"write \"{raw}\" (quoted) or true/false")
                            else:
                                value = resolve_plain(raw)
                                if (raw[:1] in numberish or version is not None) and could_differ(raw, version):
                                    self._other_reading(raw, value, version, sm, em)
                                elif version != (1, 1) and len(raw) <= 3 and raw.lower() in yaml11:
                                    self._report("YML005", f"'{raw}' is a string here, but YAML 1.1 tools read it as a boolean",
                                                 sm, em, hint=f"write \"{raw}\" (quoted) or true/false")
                        tag = str_tag
                    else:
                        style = ev.style or ""
                        if tag in _SCALAR_TAGS:
                            if version == (1, 1) and tag in _VERSIONED_TAGS:
                                value = self._tagged_11(raw, tag, sm, em)
                            else:
                                try:
                                    value = tagged_reading(raw, tag)
                                except Unreadable as err:
                                    value = raw
                                    self._report("YML008", f"{err}: other YAML tools refuse it or read something else", sm, em,
                                                 hint="fix the value or remove the tag")
                            if tabs is not None and style:
                                tabs.append((sm.index, em.index))
                        else:
                            self._refuse_tag(tag, sm, em)
                            value = None
                    node = tuple_new(scalar_class, (sm.line + 1 + off, sm.column + 1, em.line + 1 + off, em.column + 1,
                                                    tag, value, style, raw))
                    add_scalar(node)
                    if ev.anchor:
                        anchors[ev.anchor] = (node, value, 1, len(raw))
                    if not stack:
                        root = (node, value, 1, len(raw))
                        continue
                    frame = stack[-1]
                    if anchored:
                        frame.size += 1
                        frame.chars += len(raw)
                    if not frame.is_map:
                        frame.node.items.append(node)
                        if frame.data is not None:
                            frame.data.append(value)
                        continue
                    knode = frame.key
                    if knode is None:
                        frame.key = node
                        continue
                    frame.key = None
                    data = frame.data
                    # The common pair: a scalar key seen for the first time in its mapping; the rest in _pair.
                    if knode.__class__ is scalar_class and data is not None and (kdata := knode[5]) not in data and kdata != "<<":
                        frame.node.pairs.append((knode, node))
                        data[kdata] = value
                    else:
                        self._pair(frame, knode, node, value)
                    continue
                if cls is _MapStart or cls is _SeqStart:
                    if skip:
                        skip += 1
                        if skip > ABANDON_BELOW:
                            return  # the rest of the text is never parsed: libyaml's work per token grows with flow depth
                        continue
                    if len(stack) >= self.max_depth:
                        skip = 1
                        self._report("YML006", f"the document nests deeper than {MAX_DEPTH} levels", ev.start_mark, ev.end_mark)
                        continue
                    is_map = cls is _MapStart
                    sm = ev.start_mark
                    if is_map:
                        node = MapNode()
                        node.line, node.column, node.tag = sm.line + 1 + off, sm.column + 1, _MAP
                        add_mapping(node)
                    else:
                        node = SeqNode()
                        node.line, node.column, node.tag = sm.line + 1 + off, sm.column + 1, _SEQ
                    data = {} if is_map else []
                    if ev.tag is not None and ev.tag != "!" and ev.tag != node.tag:
                        self._refuse_tag(ev.tag, sm, ev.end_mark)
                        data = None
                    if ev.anchor:
                        anchored += 1
                    stack.append(_Frame(node, data, is_map, ev.anchor))
                    continue
                if cls is _MapEnd or cls is _SeqEnd:
                    if skip:
                        skip -= 1
                        if skip:
                            continue
                        # the too-deep subtree becomes a null in its parent
                        em = ev.end_mark
                        node = new_scalar(em.line + 1 + off, em.column + 1, em.line + 1 + off, em.column + 2, _STR, None, "", "")
                        item: tuple[Any, Any, int, int] = (node, None, 1, 0)
                    else:
                        frame = stack.pop()
                        node = frame.node
                        em = ev.end_mark
                        node.end_line, node.end_column = em.line + 1 + off, em.column + 1
                        item = (node, frame.data, frame.size, frame.chars)
                        if frame.anchor:
                            anchors[frame.anchor] = item
                            anchored -= 1
                elif cls is _Alias:
                    if skip:
                        continue
                    hit = anchors.get(ev.anchor)
                    if hit is None:
                        self._report("YML001", f"YAML syntax error: undefined alias '*{ev.anchor}'", ev.start_mark, ev.end_mark)
                        sm, em = ev.start_mark, ev.end_mark
                        hit = (new_scalar(sm.line + 1 + off, sm.column + 1, em.line + 1 + off, em.column + 1, _STR, None, "", ""),
                               None, 1, 0)
                    expansion += hit[2]
                    chars += hit[3]
                    if (expansion > MAX_ALIAS_EXPANSION or chars > MAX_ALIAS_CHARS) and not bomb:
                        bomb = True
                        what = f"{MAX_ALIAS_EXPANSION:,} nodes" if expansion > MAX_ALIAS_EXPANSION else f"{MAX_ALIAS_CHARS:,} characters"
                        self._report("YML006", f"aliases expand this document by more than {what}", ev.start_mark, ev.end_mark,
                                     hint="anchors and aliases (&a / *a) must not multiply; write the values out")
                    item = hit
                elif cls is _DocStart:
                    anchors, root, expansion, chars, bomb, anchored, self.dropped = {}, None, 0, 0, False, 0, False
                    scalars, mappings = [], []
                    add_scalar, add_mapping = scalars.append, mappings.append
                    version = ev.version
                    if version is not None and version != (1, 2):
                        self.header = ev.start_mark
                    continue
                elif cls is _DocEnd:
                    if root is not None:
                        rnode, rdata = root[0], root[1]
                        doc = SourceDocument(first_index + len(docs), rnode, None if bomb else rdata, rnode.line)
                        if not anchors and not self.dropped:  # the flat lists are exactly the tree
                            doc.scalars, doc.mappings = scalars, mappings
                        docs.append(doc)
                    root = None
                    continue
                else:
                    continue
                # Attach a finished collection, alias or too-deep null to its parent.
                if not stack:
                    root = item
                    continue
                frame = stack[-1]
                if anchored:
                    frame.size += item[2]
                    frame.chars += item[3]
                if not frame.is_map:
                    frame.node.items.append(item[0])
                    if frame.data is not None:
                        frame.data.append(item[1])
                elif frame.key is None:
                    frame.key = item[0]
                else:
                    knode, frame.key = frame.key, None
                    self._pair(frame, knode, item[0], item[1])
        finally:
            dispose()

    def _pair(self, frame: _Frame, knode: Any, vnode: Any, vdata: Any) -> None:
        if not isinstance(knode, ScalarNode):
            self.dropped = True
            self.diagnostics.append(make("YML001", "a mapping key must be a plain scalar, not a list or mapping", self.path, knode.span))
            return
        kdata = knode.value
        if kdata == "<<" and not knode.style:
            self.dropped = True
            self.diagnostics.append(make("YML004", "merge keys ('<<') are not supported; write the keys out", self.path, knode.span))
            return
        data = frame.data
        if data is not None and kdata in data:
            first = next((k for k, _ in frame.node.pairs if k.value == kdata), knode)
            self.diagnostics.append(make("YML002", f"duplicate key '{kdata}' (first defined at line {first.line})",
                                         self.path, knode.span, hint="remove one of them; YAML keeps only the last"))
        frame.node.pairs.append((knode, vnode))
        if data is not None:
            data[kdata] = vdata


def syntax_diagnostic(path: str, err: yaml.YAMLError, line_offset: int) -> Diagnostic:
    """YML001 at the parser's position, with where the construct started as `related`."""
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
