"""The names every face agrees on: the document kinds ContractStudio analyzes and the native format's name.

Kept free of imports beyond `re` so that the CLI's parser, the language server's start-up and the studio's
first screen can use them without loading a reader. Whether a whole file is ours is `reading.files.ownership`;
the dialects read are `reading/dialect_registry.py`'s.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

KNOWN_KINDS = ("contract", "agent", "pipeline", "tools")
NATIVE = "contractstudio"
KIND_LINE = re.compile(r"^kind:[ \t]*['\"]?([A-Za-z_]+)", re.M)  # a top-level `kind:` (column 1)


def _kind_lines(text: str) -> Iterator[re.Match[str]]:
    """The `kind:` lines at column 1, in order: `str.find` finds the lines that start with `kind:`, and the pattern is
    tried there only. Its multi-line `^` made the regex engine try every character of the text (30-50 ms on a 5 MB
    file, which the studio's workspace poll read every 5 s)."""
    at = 0 if text.startswith("kind:") else text.find("\nkind:") + 1 or -1
    while at >= 0:
        m = KIND_LINE.match(text, at)  # `at` starts a line, where the pattern's `^` holds
        if m:
            yield m
        at = text.find("\nkind:", at) + 1 or -1


def top_kinds(text: str) -> list[str]:
    """Every top-level `kind:` value of a YAML text, in order, without parsing it."""
    return [m.group(1) for m in _kind_lines(text)]


def first_kind(text: str) -> str | None:
    """The first top-level `kind:` value of a YAML text, or None."""
    return next((m.group(1) for m in _kind_lines(text)), None)


__all__ = ["KIND_LINE", "KNOWN_KINDS", "NATIVE", "first_kind", "top_kinds"]
