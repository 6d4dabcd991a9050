"""A contract's prompt is fixed text (CON105): per-call data belongs in the input, which the model receives as JSON."""

from __future__ import annotations

import re
from collections.abc import Iterator

from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.positions import value_span
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.findings.diagnostics import Diagnostic, make

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}

# `{name}`, `{input.query}`, `{{ var }}`: placeholders of the usual template engines (not JSON examples).
_PLACEHOLDER = re.compile(r"\{\{?\s*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\]{}]*\])*\s*\}\}?")


@rule("CON105", "prompt-not-fixed", "warning", kinds=("contract",))
def prompt_not_fixed(doc: LoadedContract) -> Iterator[Diagnostic]:
    """A prompt with `{...}` placeholders: per-call data belongs in the input."""
    prompt = doc.contract.prompt or ""
    for m in _PLACEHOLDER.finditer(prompt):
        span = value_span(doc, ("prompt",), m.start(), m.end())
        yield make("CON105", f"the prompt has a placeholder '{m.group(0)}': the prompt is fixed text, per-call data belongs "
                   "in the input", doc.file, span, hint="move the value into the input type; the model receives the input as JSON")
