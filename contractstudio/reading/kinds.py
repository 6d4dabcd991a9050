"""The names every face agrees on: the document kinds ContractStudio analyzes and the native format's name.

Kept free of imports beyond `re` so that the CLI's parser, the language server's start-up and the studio's
first screen can use them without loading a reader. Whether a whole file is ours is `reading.files.ownership`;
the dialects read are `reading/dialect_registry.py`'s.
"""

from __future__ import annotations

import re

KNOWN_KINDS = ("contract", "agent", "pipeline", "tools")
NATIVE = "contractstudio"
KIND_LINE = re.compile(r"^kind:[ \t]*['\"]?([A-Za-z_]+)", re.M)  # a top-level `kind:` (column 1)


def top_kinds(text: str) -> list[str]:
    """Every top-level `kind:` value of a YAML text, in order, without parsing it."""
    return KIND_LINE.findall(text)


__all__ = ["KIND_LINE", "KNOWN_KINDS", "NATIVE", "top_kinds"]
