"""What other YAML readers make of a scalar, where it is not what the analyzer reads, and tabs they refuse (YML008).

The analyzer reads YAML 1.2's core schema. Export checks a file with ruamel.yaml, whose resolver
also turns `0b101`, `-0x1F` and `0o1_7` into numbers, leaves `.5e3` a string, honours a `%YAML 1.1`
header (`n` becomes false, `017` becomes 15), and whose constructors fail on `!!int abc`, an
invalid date or an integer of more than 4,300 digits. These functions say where the two differ,
so that `check` reports it before an export is attempted (the regular expressions are ruamel's).
Only scalars that can be numbers or booleans get here: plain words never do.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import datetime
import math
import re
import sys
from typing import Any

from contractstudio.findings.diagnostics import Diagnostic, Span, make

STD = "tag:yaml.org,2002:"
_FLOAT_12 = re.compile(r"""[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN)""", re.X)
_INT_12 = re.compile(r"[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+")
_DECIMAL = re.compile(r"[-+]?[0-9][0-9_]*")
_FLOAT_11 = re.compile(r"""[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN)""", re.X)
_INT_11 = re.compile(r"""[-+]?0b[0-1_]+|[-+]?0?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+""", re.X)
_BOOL_12 = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_BOOL_11 = {**_BOOL_12, **{w: True for w in ("y", "Y", "yes", "Yes", "YES", "on", "On", "ON")},
            **{w: False for w in ("n", "N", "no", "No", "NO", "off", "Off", "OFF")}}
_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_TIMESTAMP = re.compile(r"""([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})
    (?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+]([0-9]{1,2})(?::([0-9]{2}))?))?)?""", re.X)
_NUMBER_START = frozenset("-+.0123456789")


class Unreadable(ValueError):
    """The other reader fails on this scalar (its message says why)."""


# Plain numbers every YAML 1.2 reader agrees on: a short decimal without leading zeros or underscores (most numbers
# of a file). Short, because a long one can pass the digits other readers convert (sys.get_int_max_str_digits).
_AGREED_12 = re.compile(r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?")


def could_differ(raw: str, version: tuple[int, int] | None) -> bool:
    """Cheap test: can this plain scalar read differently? (Most scalars are words, or plain numbers, and never do.)"""
    if not raw:
        return False
    if version is None:
        return raw[0] in _NUMBER_START and _AGREED_12.fullmatch(raw) is None
    return raw[0] in _NUMBER_START or (version == (1, 1) and raw in _BOOL_11)


def other_reading(raw: str, version: tuple[int, int] | None) -> Any:
    """The value ruamel.yaml gives a plain scalar in a document of this YAML version; raises Unreadable."""
    try:
        return _other_reading(raw, version)
    except Unreadable:
        raise
    except ValueError:
        raise Unreadable(f"'{_short(raw)}' looks like a number that cannot be converted") from None


def _other_reading(raw: str, version: tuple[int, int] | None) -> Any:
    if version == (1, 1):
        if raw in _BOOL_11:
            return _BOOL_11[raw]
        if raw[:1] in _NUMBER_START and _FLOAT_11.fullmatch(raw):
            return _float(raw)
        if raw[:1] in _NUMBER_START and _INT_11.fullmatch(raw):
            return _int(raw, yaml11=True)
    else:
        if raw in _BOOL_12:
            return _BOOL_12[raw]
        if raw[:1] in _NUMBER_START and _FLOAT_12.fullmatch(raw):
            return _float(raw)
        if raw[:1] in _NUMBER_START and _INT_12.fullmatch(raw):
            return _int(raw, yaml11=False)
    return None if raw in _NULL else raw


def tagged_reading(raw: str, tag: str) -> Any:
    """The value of an explicitly tagged scalar (`!!int 12`), or Unreadable when the text does not fit its tag."""
    try:
        return _tagged_reading(raw, tag)
    except Unreadable:
        raise
    except ValueError:
        raise Unreadable(f"'{_short(raw)}' does not fit its tag !!{tag.removeprefix(STD)}") from None


def tagged_reading_11(raw: str, tag: str) -> Any:
    """What ruamel.yaml makes of an explicitly tagged number or boolean under a `%YAML 1.1` header; raises Unreadable.

    Its YAML 1.1 constructors read `!!int 017` as octal 15, `!!bool yes` as true and `!!float 1:30` as 90.0, where
    the analyzer (YAML 1.2) reads 17, refuses `yes` and refuses `1:30`; a float is never octal (`!!float 017` is 17.0).
    """
    name = tag.removeprefix(STD)
    try:
        if name == "int" and _INT_11.fullmatch(raw) and raw.strip("+-_"):
            return _int(raw, yaml11=True)
        if name == "bool" and raw in _BOOL_11:
            return _BOOL_11[raw]
        if name == "float":  # ruamel's 1.1 float: sexagesimal or whatever float() reads; never octal or hex
            return _float(raw)
    except ValueError:
        raise Unreadable(f"'{_short(raw)}' does not fit its tag !!{name}") from None
    return _tagged_reading(raw, tag)


def _tagged_reading(raw: str, tag: str) -> Any:
    name = tag.removeprefix(STD)
    if name == "str":
        return raw
    if name == "null":
        if raw not in _NULL:
            raise Unreadable(f"'{raw}' is not null (!!null)")
        return None
    if name == "bool":
        if raw not in _BOOL_12:
            raise Unreadable(f"'{raw}' is not a YAML 1.2 boolean (!!bool: true or false)")
        return _BOOL_12[raw]
    if name == "int":
        if not _INT_12.fullmatch(raw) or raw.strip("+-_") == "":
            raise Unreadable(f"'{_short(raw)}' is not an integer (!!int)")
        return _int(raw, yaml11=False)
    if name == "float":
        if not (_FLOAT_12.fullmatch(raw) or _DECIMAL.fullmatch(raw)) or raw.strip("+-_.") == "":
            raise Unreadable(f"'{_short(raw)}' is not a number (!!float)")
        return _float(raw)
    if name == "binary":
        try:
            base64.b64decode("".join(raw.split()), validate=True)
        except (binascii.Error, ValueError):
            raise Unreadable(f"'{_short(raw)}' is not base64 (!!binary)") from None
        return raw
    if name == "timestamp":
        _check_timestamp(raw)
        return raw
    return raw


def _int(raw: str, yaml11: bool) -> int:
    text = raw.replace("_", "")
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    if text.startswith("0b"):
        return sign * int(text[2:], 2)
    if text.startswith("0x"):
        return sign * int(text[2:], 16)
    if text.startswith("0o"):
        return sign * int(text[2:], 8)
    if yaml11 and ":" in text:
        return sign * _sexagesimal(text)
    if yaml11 and len(text) > 1 and text.startswith("0"):
        return sign * int(text, 8)
    limit = sys.get_int_max_str_digits()
    if limit and len(text) > limit:
        raise Unreadable(f"an integer of {len(text):,} digits (YAML tools convert at most {limit:,})")
    return sign * int(text or "0")


def _float(raw: str) -> float:
    text = raw.replace("_", "").lower()
    if text.endswith((".inf", ".nan")):
        value = math.inf if text.endswith("inf") else math.nan
        return -value if text.startswith("-") else value
    if ":" in text:
        sign = -1.0 if text.startswith("-") else 1.0
        whole, dot, frac = text.lstrip("+-").partition(".")  # 1:30 has no fraction; 1:30.5 has one
        return sign * (_sexagesimal(whole) + (float("0." + (frac or "0")) if dot else 0.0))
    return float(text)


def _sexagesimal(text: str) -> int:
    value = 0
    for part in text.split(":"):
        value = value * 60 + int(part)
    return value


def _check_timestamp(raw: str) -> None:
    m = _TIMESTAMP.fullmatch(raw)
    if m is None:
        raise Unreadable(f"'{_short(raw)}' is not a timestamp (!!timestamp: YYYY-MM-DD)")
    year, month, day, hour, minute, second = (int(g) if g else 0 for g in m.groups()[:6])
    try:
        datetime.datetime(year, month, day, hour, minute, second)
    except ValueError as err:
        raise Unreadable(f"'{_short(raw)}' is not a valid date (!!timestamp; {err})") from None


def same_value(ours: Any, theirs: Any) -> bool:
    """Equal values of the same YAML type (True is not 1, 1.0 is not 1, NaN is NaN)."""
    if type(ours) is bool or type(theirs) is bool:
        return type(ours) is type(theirs) and ours == theirs
    if isinstance(ours, float) and isinstance(theirs, float) and math.isnan(ours) and math.isnan(theirs):
        return True
    return _kind(ours) == _kind(theirs) and ours == theirs


def _kind(value: Any) -> str:
    for kind in (str, int, float):
        if isinstance(value, kind):
            return kind.__name__
    return "null" if value is None else type(value).__name__


def describe(value: Any) -> str:
    """A value as YAML would show it (true, null, 15, 'text')."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the text '{_short(value)}'"
    return _short(repr(value))


def _short(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text):,} characters)"


# ----------------------------------------------------------------- tabs


def tab_findings(text: str, quoted: list[tuple[int, int]], path: str, line_offset: int = 0) -> list[Diagnostic]:
    """YML008 for a tab outside quotes, block scalars and comments: libyaml allows it, ruamel.yaml fails on it.

    `quoted`: the (start, end) offsets of the text's quoted and block scalars (sorted here).
    """
    found: list[Diagnostic] = []
    quoted.sort()
    starts = [a for a, _ in quoted]
    reported: set[int] = set()
    at = text.find("\t")
    while at >= 0:
        i = bisect.bisect_right(starts, at) - 1
        inside = i >= 0 and quoted[i][0] <= at < quoted[i][1]
        line_start = text.rfind("\n", 0, at) + 1
        line = text.count("\n", 0, at)
        if not inside and line not in reported and not _in_comment(text, line_start, at, quoted, starts):
            reported.add(line)
            column = at - line_start + 1
            span = Span(line + 1 + line_offset, column, line + 1 + line_offset, column + 1)
            found.append(make("YML008", "a tab outside quotes: other YAML tools (ruamel.yaml, for one) "
                              "cannot read it, though libyaml can", path, span, hint="use spaces, or quote the value"))
        at = text.find("\t", at + 1)
    return found


def _in_comment(text: str, line_start: int, at: int, quoted: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether position `at` is inside a `# comment` on its line (a `#` after a space, outside quotes)."""
    hash_at = text.find("#", line_start, at)
    while hash_at >= 0:
        i = bisect.bisect_right(starts, hash_at) - 1
        in_quotes = i >= 0 and quoted[i][0] <= hash_at < quoted[i][1]
        if not in_quotes and (hash_at == line_start or text[hash_at - 1] in " \t"):
            return True
        hash_at = text.find("#", hash_at + 1, at)
    return False
