"""From a raw reply to a validated value: JSON extraction (fenced blocks count) and readable type errors.

Error texts name the field path, the bad value and the constraint, because
they are sent back to the model in a remedy and shown to the user.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from contractstudio.spec.types import TypeSystem, parse_type

MAX_ERRORS = 20  # error lines per validation: a reply with thousands of bad items must not flood the remedy
MAX_JSON_DEPTH = 200  # nesting of a reply: pydantic stops serializing at about 255, Python's JSON reader at about 1,000
_DEEP = f"the reply nests arrays/objects more than {MAX_JSON_DEPTH} levels deep; no output type needs that"
_JSON_KIND = {dict: "a JSON object", list: "a JSON array", str: "a string", bool: "a boolean", int: "a number",
              float: "a number", type(None): "null"}

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)(?:```|\Z)", re.S)


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_error(err: json.JSONDecodeError, text: str) -> str:
    body = text.rstrip()
    cut = (err.pos >= len(body) - 1 or err.msg.startswith("Unterminated string")
           or body.count("{") > body.count("}") or body.count("[") > body.count("]"))
    where = f"line {err.lineno}, column {err.colno}"
    joined = f"{err.msg} {where}" if err.msg.endswith(" at") else f"{err.msg} at {where}"
    hint = "; the JSON ends early (was the reply cut off, e.g. by max_tokens?)" if cut else ""
    return f"the reply is not valid JSON: {joined}{hint}"


class _NotJSONNumber(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NotJSONNumber(name)


def _loads(text: str) -> Any:
    """Strict JSON: NaN and Infinity (which Python's reader accepts) are not JSON, and would make the trace invalid JSON."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except _NotJSONNumber as err:
        raise json.JSONDecodeError(f"{err} is not a JSON number (write a number, or null)", text, max(text.find(str(err)), 0)) from None


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


def extract_json(text: str) -> tuple[Any, str | None]:
    """The JSON value in a reply (bare, in a ```json fence, or the outermost {...}); or an error text."""
    value, problem = _extract(text)
    if problem is None and _too_deep(text, value):
        return None, _DEEP
    return value, problem


def _extract(text: str) -> tuple[Any, str | None]:
    stripped = text.strip()
    if not stripped:
        return None, "the reply is empty: expected one JSON object"
    try:
        return _loads(stripped), None
    except json.JSONDecodeError as err:
        first_error = _json_error(err, stripped)
    except RecursionError:  # json's C reader gives up on deep nesting; a reply must never crash the call
        return None, _DEEP
    fences = _FENCE.findall(stripped)
    fences.sort(key=lambda f: f[0].lower() != "json")  # a ```json block first, then any other fence
    for _lang, body in fences:
        body = body.strip()
        try:
            return _loads(body), None
        except json.JSONDecodeError as err:
            first_error = _json_error(err, body)
            break
        except RecursionError:
            return None, _DEEP
    start, end = stripped.find("{"), stripped.rfind("}")
    if not fences and 0 <= start < end:
        try:
            return _loads(stripped[start:end + 1]), None
        except (json.JSONDecodeError, RecursionError):
            pass
    return None, first_error


def _path(root: str, loc: tuple[Any, ...]) -> str:
    out = root
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def format_errors(err: ValidationError, root: str) -> list[str]:
    """One line per pydantic error: path, the bad value, what was expected, the constraint."""
    lines = []
    errors = err.errors(include_url=False)
    for e in errors[:MAX_ERRORS]:
        path = _path(root, tuple(e.get("loc") or ()))
        kind = e.get("type", "")
        msg = e.get("msg", "invalid")
        if kind == "missing":
            lines.append(f"{path}: required field is missing")
            continue
        if kind in ("model_type", "dict_type", "model_attributes_type"):
            got = _JSON_KIND.get(type(e.get("input")), type(e.get("input")).__name__)
            expected = (e.get("ctx") or {}).get("class_name")
            lines.append(f"{path} = {_short(e.get('input'))}: expected a JSON object"
                         f"{f' ({expected})' if expected else ''}, got {got}")
            continue
        if kind == "extra_forbidden":
            lines.append(f"{path} = {_short(e.get('input'))}: this field is not declared "
                         "(constraint: extra: forbid, only the declared fields are allowed)")
            continue
        ctx = {k: v for k, v in (e.get("ctx") or {}).items() if k not in ("error", "class_name")}
        text = f"{path} = {_short(e.get('input'))}: {msg}"
        if ctx:
            text += " (constraint: " + ", ".join(f"{k}={_short(v, 40)}" for k, v in ctx.items()) + ")"
        lines.append(text)
    if len(errors) > MAX_ERRORS:
        lines.append(f"... and {len(errors) - MAX_ERRORS} more errors (only the first {MAX_ERRORS} are listed)")
    return lines


class Shape:
    """A type of the contract (input, intermediate, output) as something values are validated against."""

    __slots__ = ("types", "type_name", "root", "model", "adapter")

    def __init__(self, types: TypeSystem, type_name: str, root: str) -> None:
        self.types = types
        self.type_name = type_name
        self.root = root
        self.model: type[BaseModel] | None = None
        self.adapter: TypeAdapter[Any] | None = None
        if types.declared(type_name):
            self.model = types.model(type_name)
        else:
            self.adapter = TypeAdapter(types.annotation(parse_type(type_name)))

    def validate(self, value: Any) -> tuple[Any, list[str]]:
        """The validated value, or None and the error texts."""
        try:
            if self.model is not None:
                if isinstance(value, self.model):
                    return value, []
                if isinstance(value, BaseModel):
                    value = value.model_dump(by_alias=True)
                return self.model.model_validate(value), []
            assert self.adapter is not None
            return self.adapter.validate_python(value), []
        except ValidationError as err:
            return None, format_errors(err, self.root)

    def dump(self, value: Any) -> Any:
        """A validated value as plain JSON data."""
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json", by_alias=True)
        if self.adapter is not None:
            return self.adapter.dump_python(value, mode="json")
        return value

    def schema_text(self) -> str:
        """The type described for a prompt: fields, types, descriptions and constraints."""
        if self.model is not None:
            return self.types.schema_text(self.type_name)
        return f"a JSON value of type {self.type_name}"
