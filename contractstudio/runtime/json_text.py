"""JSON text by pydantic_core's encoder (about 4x the stdlib's; 10x its indented, pure-Python one) where it writes what
`json.dumps(value, ensure_ascii=False, default=str)` writes, and by the stdlib everywhere else.

The two agree on str-keyed dicts, lists, tuples, strings, ints, bools, None and finite floats, character for character
(indentation, escapes, float digits), except floats under 1e-4, which the stdlib writes as `1e-05` and pydantic_core
as `0.00001`. They differ on bytes, sets, non-str keys, non-finite floats and other objects (the stdlib's `default=str`
against pydantic_core's own serializers), and pydantic_core refuses a lone surrogate: those take the stdlib.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic_core import to_json

_SCALARS = frozenset({str, int, bool, type(None)})
_MAX_DEPTH = 32  # a deeper value takes the stdlib's path (the walk is recursive)


def plain_json(value: Any, *, exact: bool, depth: int = 0) -> bool:
    """Whether both encoders write `value` alike: in meaning, or (`exact`) character for character."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is float:
        return math.isfinite(value) and (not exact or value == 0.0 or abs(value) >= 1e-4)
    if depth > _MAX_DEPTH:
        return False
    # Loops rather than all(<generator>), and a scalar item decided in place: a prompt's value is mostly strings, and
    # a call and a generator per item were most of the walk.
    if kind is dict:
        for k, v in value.items():
            if type(k) is not str:
                return False
            if type(v) not in _SCALARS and not plain_json(v, exact=exact, depth=depth + 1):
                return False
        return True
    if kind is list or kind is tuple:
        for v in value:
            if type(v) not in _SCALARS and not plain_json(v, exact=exact, depth=depth + 1):
                return False
        return True
    return False


def fast_text(value: Any, *, indent: int | None = None) -> str | None:
    """pydantic_core's JSON text of a value `plain_json` accepted (compact, or indented); None for a lone surrogate."""
    try:
        return to_json(value, indent=indent).decode("utf-8")
    except (ValueError, UnicodeError):
        return None


def dumps(value: Any, *, indent: int | None = None) -> str:
    """Exactly `json.dumps(value, ensure_ascii=False, default=str, indent=indent)`, compact (`,` and `:`) without an
    indent: the text of a prompt, whose every character the reply cache's key holds."""
    if plain_json(value, exact=True):
        text = fast_text(value, indent=indent)
        if text is not None:
            return text
    return json.dumps(value, ensure_ascii=False, default=str, indent=indent,
                      separators=(",", ":") if indent is None else None)
