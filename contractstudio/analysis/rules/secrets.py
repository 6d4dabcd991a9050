"""YML007: literal credentials in documents (they must come from the environment, never the file).

Detection follows names and shapes everywhere in a document: a value under a credential name
(`api_key`, `X-Auth-Token`, `client_secret`, `password`, ... at any depth, headers and bodies
included), and a token of a well-known shape (`ghp_...`, `xoxb-...`, `AKIA...`, `sk-...`) in
any value or mapping key. The names and shapes are the ones redaction masks (contractstudio.safe_text).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Iterator, Sequence

from contractstudio.analysis.loaded import Loaded
from contractstudio.analysis.rules.registry import Each, rule
from contractstudio.findings.diagnostics import Diagnostic, Span, make
from contractstudio.reading.kinds import KNOWN_KINDS
from contractstudio.reading.source import MapNode, Node, ScalarNode, SeqNode, node_at
from contractstudio.safe_text import TOKEN_SHAPES, literal_credential, secret_name, token_in

# Mappings whose keys are field names and whose values are expressions (`password: input.password`).
_EXPRESSION_MAPS = {"assign", "fallback"}
_MESSAGE = "a literal credential is written in the file; it would leak into exports, traces and version control"
_SHORTEST_TOKEN = 15  # `xoxb-` and ten characters: no shape is shorter, so shorter values skip the search
_HINT = "remove it and name an environment variable instead (llm.api_key_env: OPENAI_API_KEY)"


def _walk(node: Node | None) -> Iterator[tuple[ScalarNode | None, Node, bool]]:
    """(key node, node, whether the node is a field-name -> expression value) for every node, iteratively."""
    stack: list[tuple[ScalarNode | None, Node, bool]] = [(None, node, False)] if node is not None else []
    seen: set[int] = set()
    while stack:
        key, current, expression = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield key, current, expression
        if isinstance(current, MapNode):
            inner = isinstance(key, ScalarNode) and key.value in _EXPRESSION_MAPS
            for k, v in current.pairs:
                if isinstance(k, ScalarNode):
                    yield None, k, False  # a key is text too: a token can be written as a mapping key
                stack.append((k if isinstance(k, ScalarNode) else None, v, inner))
        elif isinstance(current, SeqNode):
            stack.extend((None, item, False) for item in current.items)


def _token_span(node: ScalarNode) -> Span:
    """The token inside a one-line plain scalar, else the whole scalar."""
    m = token_in(node.value)
    if m and node.line == node.end_line and node.end_column - node.column == len(node.value):
        return Span(node.line, node.column + m.start(), node.line, node.column + m.end())
    return node.span


@rule("YML007", "literal-secret", "error", kinds=KNOWN_KINDS)
def literal_secret(doc: Loaded) -> Iterator[Diagnostic]:
    """A literal API key or credential in a file: it would end up in exports and version control.

    A credential-named key with a literal value, or a token of a well-known shape in any value or key.
    """
    source = doc.doc
    if source.scalars is None or source.mappings is None:
        found = _walked(source.root)  # nodes a dialect rewrote, or aliases (a node at several places): walk the tree
    else:
        found = _scanned(source.scalars, source.mappings)
    for node, token in found:
        yield make("YML007", _MESSAGE, doc.file, _token_span(node) if token else node.span, hint=_HINT)


def _in_entry(doc: Loaded, key: str, i: int) -> list[Diagnostic] | None:
    """The credentials in entry i of the top-level list `key` (not its last), from the scalars and mappings on its
    lines; None when the reader's flat lists are not the tree. A finding is about one scalar, its key and the
    mapping it is in, all inside the entry: the same ones the whole scan finds there."""
    source = doc.doc
    seq = node_at(source.root, (key,))
    scalars, mappings = source.scalars, source.mappings
    if scalars is None or mappings is None or not isinstance(seq, SeqNode) or i + 1 >= len(seq.items):
        return None
    first, end = seq.items[i].line, seq.items[i + 1].line
    s0, s1 = (bisect.bisect_left(scalars, line, key=_LINE) for line in (first, end))
    m0, m1 = (bisect.bisect_left(mappings, line, key=_MAP_LINE) for line in (first, end))
    return [make("YML007", _MESSAGE, doc.file, _token_span(node) if token else node.span, hint=_HINT)
            for node, token in _scanned(scalars[s0:s1], mappings[m0:m1])]


_LINE = operator.itemgetter(0)  # a scalar node's first line
_MAP_LINE = operator.attrgetter("line")
# Each entry of a pipeline's steps and a contract's examples: its own credentials (analysis/by_entry.py).
ENTRIES = {"steps": Each(_in_entry), "examples": Each(_in_entry)}


def _walked(root: Node | None) -> Iterator[tuple[ScalarNode, bool]]:
    """(scalar, whether it holds a token) for each credential, visiting each node of the tree once."""
    for key, node, expression in _walk(root):
        if not isinstance(node, ScalarNode) or not isinstance(node.value, str) or not node.value:
            continue
        if len(node.value) >= _SHORTEST_TOKEN and token_in(node.value):
            yield node, True
        elif key is not None and not expression and secret_name(key.value) and literal_credential(node.value):
            yield node, False


_PIECE = 1 << 18  # characters of values searched for tokens in one regular-expression call


def _scanned(scalars: Sequence[ScalarNode], mappings: Sequence[MapNode]) -> Iterator[tuple[ScalarNode, bool]]:
    """The same findings as `_walked`, from the reader's flat lists of a tree in which every node sits once.

    Most scalars are short words: the long ones are searched for token shapes together, in one text
    (NUL cannot occur inside a token, so no match spans two of them), and only those holding a match are
    searched again alone. Names are decided once per distinct key text.
    """
    long = [node for node in scalars if (value := node[5]).__class__ is str and len(value) >= _SHORTEST_TOKEN]
    tokens: set[int] = set()
    ends = list(itertools.accumulate(len(node[5]) + 1 for node in long))  # where each value's NUL falls, joined
    first = 0
    while first < len(long):
        # A piece of about _PIECE characters at a time: one scan of a 5 MB file's values held the interpreter 27 ms
        # while the studio's keys waited for it (the file's first analysis); between pieces other threads run.
        last = max(bisect.bisect_right(ends, (ends[first - 1] if first else 0) + _PIECE), first + 1)
        piece = long[first:last]
        joined = "\0".join([node[5] for node in piece])
        if token_in(joined):
            starts = list(itertools.accumulate((len(node[5]) + 1 for node in piece), initial=0))
            tokens |= {id(piece[bisect.bisect_right(starts, m.start()) - 1]) for m in TOKEN_SHAPES.finditer(joined)}
        first = last
    # keys in pairs are always scalars (the reader drops the others)
    names = {text for text in {key[5] for m in mappings for key, _ in m.pairs} if secret_name(text)}  # type: ignore[index]
    named: set[int] = set()
    if names:  # rare: a file that names a credential somewhere
        expression_maps = {id(v) for m in mappings for k, v in m.pairs if isinstance(k, ScalarNode) and k.value in _EXPRESSION_MAPS}
        for m in mappings:
            if id(m) in expression_maps:
                continue
            for k, v in m.pairs:
                if isinstance(k, ScalarNode) and k.value in names and isinstance(v, ScalarNode) and isinstance(v.value, str) \
                        and v.value and literal_credential(v.value):
                    named.add(id(v))
    if tokens or named:
        for node in scalars:
            if id(node) in tokens:
                yield node, True
            elif id(node) in named:
                yield node, False
