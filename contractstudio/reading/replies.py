"""JSON out of a model's reply: bare, in a ```json fence, or the outermost {...}; strict, and bounded in depth.

The analyzer (scenario responses) and the runtime (every reply) read replies with this one parser.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAX_JSON_DEPTH = 200  # nesting of a reply: pydantic stops serializing at about 255, Python's JSON reader at about 1,000
_DEEP = f"the reply nests arrays/objects more than {MAX_JSON_DEPTH} levels deep; no output type needs that"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# the blanks after the language belong to it (`[ \t]*` twice around an empty language tried every split: quadratic)
_FENCE = re.compile(r"```[ \t]*(?:([A-Za-z0-9_-]+)[ \t]*)?\r?\n(.*?)(?:```|\Z)", re.S)


CUT_HINT = "; the JSON ends early (was the reply cut off, e.g. by max_tokens?)"


def _json_error(err: json.JSONDecodeError, text: str) -> str:
    body = text.rstrip()
    cut = (err.pos >= len(body) - 1 or err.msg.startswith("Unterminated string")
           or body.count("{") > body.count("}") or body.count("[") > body.count("]"))
    where = f"line {err.lineno}, column {err.colno}"
    joined = f"{err.msg} {where}" if err.msg.endswith(" at") else f"{err.msg} at {where}"
    hint = CUT_HINT if cut else ""
    return f"the reply is not valid JSON: {joined}{hint}"


class _NotJSONNumber(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NotJSONNumber(name)


class _RepeatedKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return found


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)  # made once: json.loads makes one per call with an option
# A reply's objects name each key once: Python's reader would keep the last of a repeated key, so a value already
# written could still be replaced, and no clause could be decided before the reply ends (runtime/prefix_watch.py).
_REPLY_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_keys)


def _loads(text: str, *, reply: bool = False) -> Any:
    """Strict JSON: NaN and Infinity (which Python's reader accepts) are not JSON, and would make the trace invalid JSON;
    in a `reply`, a key repeated in one object is refused too."""
    try:
        if type(text) is str and not text.startswith("\ufeff"):  # json.loads's own checks, which say a BOM is one
            return (_REPLY_DECODER if reply else _DECODER).decode(text)
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys if reply else None)
    except _RepeatedKey as err:
        key = str(err)
        at = text.rfind(json.dumps(key, ensure_ascii=False))
        raise json.JSONDecodeError(f"the key {json.dumps(key, ensure_ascii=False)} is repeated in one object "
                                   "(write each key once)", text, max(at, 0)) from None
    except _NotJSONNumber as err:
        raise json.JSONDecodeError(f"{err} is not a JSON number (write a number, or null)", text, max(text.find(str(err)), 0)) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer longer than Python converts to a number: no output type needs one
        raise json.JSONDecodeError(f"a number is too long (more than {sys.get_int_max_str_digits():,} digits)", text, 0) from None


def strict_json(text: str) -> Any:
    """One JSON value read with the limits of a reply or an input; raises ValueError saying why it is refused.

    NaN and Infinity are refused (they are not JSON and would make a trace invalid), an integer longer than
    Python prints is refused, and so is nesting past MAX_JSON_DEPTH (pydantic and the trace writer cannot take it),
    and so is a lone surrogate escape (`"\\ud800"`: no UTF-8 writer, digest or model request can carry it).
    """
    try:
        value = _loads(text)
    except json.JSONDecodeError as err:
        where = f"column {err.colno}" if err.lineno == 1 else f"line {err.lineno}, column {err.colno}"
        raise ValueError(f"{err.msg} ({where})") from None
    except RecursionError:
        raise ValueError(f"it nests arrays/objects more than {MAX_JSON_DEPTH} levels deep") from None
    if _too_deep(text, value):
        raise ValueError(f"it nests arrays/objects more than {MAX_JSON_DEPTH} levels deep")
    if has_surrogate_escape(text):
        refuse_lone_surrogates(value)
    return value


def has_surrogate_escape(text: str) -> bool:
    """Whether a JSON text has a `\\uD800`-`\\uDFFF` escape (only then can a parsed string hold a lone surrogate)."""
    return _SURROGATE_ESCAPE.search(text) is not None


def refuse_lone_surrogates(value: Any) -> None:
    """Raise when a string holds half a surrogate pair: valid JSON, but not text (UTF-8, a digest, a trace cannot hold it)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as err:
        code = ord(err.object[err.start])
        raise ValueError(f"a string holds a lone surrogate (\\u{code:04x}), which is not text") from None


def _too_deep(text: str, value: Any) -> bool:
    """Whether a parsed reply nests deeper than MAX_JSON_DEPTH (walked only when the text has that many brackets)."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return False
    return nests_too_deep(value)


def nests_too_deep(value: Any, depth: int = 1) -> bool:
    """Whether a JSON-like value (dicts, lists, tuples) nests deeper than MAX_JSON_DEPTH."""
    kind = type(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list or kind is tuple:
        items = value
    else:
        return False
    if depth > MAX_JSON_DEPTH:
        return True
    for item in items:
        kind = type(item)
        if (kind is dict or kind is list or kind is tuple) and nests_too_deep(item, depth + 1):
            return True
    return False


STRICT_SETTING = "json_reply: strict"  # the contract setting that makes a reply one JSON document or nothing


def extract_json(text: str, *, strict: bool = False) -> tuple[Any, str | None]:
    """The JSON value in a reply (bare, in a ```json fence, or the outermost {...}); or an error text.

    `strict` (a contract's `json_reply: strict`): only a reply that is one JSON document, blank space around it
    aside; a fence or text around the JSON is refused, and the error says which, for the remedy to tell the model."""
    value, problem = _strict(text) if strict else _extract(text)
    if problem is None and _too_deep(text, value):
        return None, _DEEP
    if problem is None and has_surrogate_escape(text):
        try:
            refuse_lone_surrogates(value)
        except ValueError as err:
            return None, f"the reply is not valid JSON text: {err}"
    return value, problem


def _whole(stripped: str) -> tuple[Any, str | None, bool]:
    """The reply read as one JSON document: (value, problem, settled), settled when no extraction can change it."""
    if not stripped:
        return None, "the reply is empty: expected one JSON object", True
    try:
        return _loads(stripped, reply=True), None, True
    except json.JSONDecodeError as err:
        return None, _json_error(err, stripped), False
    except RecursionError:  # json's C reader gives up on deep nesting; a reply must never crash the call
        return None, _DEEP, True


def _strict(text: str) -> tuple[Any, str | None]:
    stripped = text.strip()
    value, problem, settled = _whole(stripped)
    if settled:
        return value, problem
    found, lenient = _extract(stripped)
    if lenient is not None:
        return None, problem
    what = "wraps it in a ``` fence" if _FENCE.search(stripped) else "has text before or after the JSON"
    return None, (f"the reply holds JSON but {what} (such as 'Here is my answer: ...'); this contract takes only a "
                  f"JSON document, nothing around it ({STRICT_SETTING}): reply with the JSON alone")


def _extract(text: str) -> tuple[Any, str | None]:
    stripped = text.strip()
    value, first_error, settled = _whole(stripped)
    if settled:
        return value, first_error
    fences = _FENCE.findall(stripped)
    fences.sort(key=lambda f: f[0].lower() != "json")  # a ```json block first, then any other fence
    for _lang, body in fences:
        body = body.strip()
        try:
            return _loads(body, reply=True), None
        except json.JSONDecodeError as err:
            first_error = _json_error(err, body)
            break
        except RecursionError:
            return None, _DEEP
    start, end = stripped.find("{"), stripped.rfind("}")
    if not fences and 0 <= start < end:
        try:
            return _loads(stripped[start:end + 1], reply=True), None
        except (json.JSONDecodeError, RecursionError):
            pass
    return None, first_error


def first_json_fence(text: str) -> int | None:
    """Where the body of the first ```json fence of a reply begins: the lenient reader tries that fence before any
    other, and once its opening line is complete no later text changes which fence that is; None when none is open."""
    for match in _FENCE.finditer(text):
        if (match.group(1) or "").lower() == "json":
            return match.start(2)
    return None
