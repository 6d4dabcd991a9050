"""YML007: literal credentials in documents (they must come from the environment, never the file)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from contractstudio.analysis.check import KNOWN_KINDS, Context, Loaded, analyzer
from contractstudio.findings.diagnostics import Diagnostic, make
from contractstudio.reading.source import MapNode, Node, ScalarNode, SeqNode

_SECRET_KEY = re.compile(r"^(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|password|bearer)$", re.I)
# Shapes of real provider keys: OpenAI/Anthropic/Groq/Google/HF/AWS style.
_SECRET_VALUE = re.compile(r"\b(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}|gsk_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_\-]{30,}|hf_[A-Za-z0-9]{30,}|AKIA[0-9A-Z]{16})\b")


def _walk(node: Node | None) -> Iterator[tuple[Node | None, Node]]:
    stack: list[tuple[Node | None, Node]] = [(None, node)] if node is not None else []
    seen: set[int] = set()
    while stack:
        key, current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield key, current
        if isinstance(current, MapNode):
            stack.extend((k, v) for k, v in current.pairs)
        elif isinstance(current, SeqNode):
            stack.extend((None, item) for item in current.items)


# One search over the text rules out almost every file before any node is visited.
_ANYWHERE = re.compile(r"(?i)\b(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|password|bearer)\b|" + _SECRET_VALUE.pattern)


@lru_cache(maxsize=4)
def _mentions_secrets(text: str) -> bool:
    """Whether the file's text could hold a credential: searched once per file, not once per document."""
    return _ANYWHERE.search(text) is not None


@analyzer(*KNOWN_KINDS)
def literal_secrets(doc: Loaded, ctx: Context) -> Iterator[Diagnostic]:
    """A credential-looking key with a literal value, or a value shaped like a provider key."""
    if not _mentions_secrets(doc.text):
        return
    for key, node in _walk(doc.doc.root):
        if not isinstance(node, ScalarNode) or not isinstance(node.value, str) or not node.value:
            continue
        named = isinstance(key, ScalarNode) and isinstance(key.value, str) and _SECRET_KEY.match(key.value)
        if named or _SECRET_VALUE.search(node.value):
            yield make(
                "YML007",
                "a literal credential is written in the file; it would leak into exports and version control",
                doc.file,
                node.span,
                hint="remove it and name an environment variable instead (llm.api_key_env: OPENAI_API_KEY)",
            )
