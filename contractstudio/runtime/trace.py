"""The events of a call, kept in order, written and read as JSON Lines, with secrets redacted.

The engine produces events; the CLI prints them, the studio draws them, this
module stores them. Pipelines use the same `Trace` so both kinds of run can be
saved, reopened and replayed the same way.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

REDACTED = "***"
# Secret-looking values that may hide in exception texts or headers, whatever key holds them.
_SECRET_TEXT = re.compile(
    r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{4,}"
    r"|\b(sk|pk|rk)-[A-Za-z0-9_-]{6,}"
    r"|((?:api[_-]?key|authorization|x-api-key)[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+)?[^\s\"',}]+"
)
_SECRET_KEYS = {"api_key", "apikey", "authorization", "x-api-key", "api-key", "proxy-authorization", "password", "secret", "token"}
_known_secrets: set[str] = set()
_PLACEHOLDERS = {"not-needed", "sk-no-key", "no-key-needed", "placeholder", "anything", "changeme"}


def register_secret(value: str | None) -> None:
    """Remember a secret value (an API key in use) so it is redacted wherever it appears."""
    # Short values ("none", "no-key") are placeholders, and replacing them everywhere would garble traces.
    if value and len(value) >= 8 and value.strip().lower() not in _PLACEHOLDERS:
        _known_secrets.add(value)


def register_secrets_in(value: Any) -> None:
    """Register the values held under secret-looking keys (headers such as Authorization) anywhere in `value`."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and k.lower() in _SECRET_KEYS and isinstance(v, str):
                register_secret(v)
                register_secret(re.sub(r"(?i)^\s*(bearer|basic|token)\s+", "", v))
            else:
                register_secrets_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            register_secrets_in(v)


class RedactingFilter(logging.Filter):
    """A log filter that redacts keys from a record's text: litellm, the OpenAI client and httpx log requests."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is left to the logging module
            return True
        clean = _redact_text(text)
        if clean != text:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:  # a traceback quotes exception texts, e.g. an echoed key
            record.exc_text = _redact_text(_FORMATTER.formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = _redact_text(record.stack_info)
        return True


_FORMATTER = logging.Formatter()


_FILTER = RedactingFilter()
_LOGGER_PREFIXES = ("LiteLLM", "litellm", "openai", "httpx", "httpcore", "contractstudio")


def filter_logs() -> None:
    """Put the redacting filter on every logger of the libraries a live call goes through (once each)."""
    manager = logging.Logger.manager
    names = [n for n in list(manager.loggerDict) if n.startswith(_LOGGER_PREFIXES)]
    for name in {*names, *_LOGGER_PREFIXES}:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


def _redact_text(text: str) -> str:
    for secret in tuple(_known_secrets):  # a copy: another thread (the studio's worker) may register a key meanwhile
        if secret in text:
            text = text.replace(secret, REDACTED)

    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1) + REDACTED
        if m.group(3):
            return m.group(3) + REDACTED
        return REDACTED

    return _SECRET_TEXT.sub(sub, text)


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with API keys and Authorization values replaced by ***."""
    if isinstance(value, str):
        return _redact_text(value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, str) and k.lower() in _SECRET_KEYS and v not in (None, ""):
                out[k] = REDACTED
            else:
                out[k] = redact(v)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value


class Event:
    """One thing that happened during a call: `seq`, `t` (seconds since the call started), `stage`, `type`, data."""

    __slots__ = ("seq", "t", "stage", "type", "data")

    def __init__(self, seq: int, t: float, stage: str, type: str, data: dict[str, Any]) -> None:
        self.seq = seq
        self.t = t
        self.stage = stage
        self.type = type
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """The event as one JSON-ready mapping (secrets redacted)."""
        return {"seq": self.seq, "t": round(self.t, 6), "stage": self.stage, "type": self.type, **redact(jsonable(self.data))}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        data = {k: v for k, v in d.items() if k not in ("seq", "t", "stage", "type")}
        return cls(int(d.get("seq", 0)), float(d.get("t", 0.0)), str(d.get("stage", "")), str(d.get("type", "")), data)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def __repr__(self) -> str:
        return f"Event({self.seq}, {self.stage}/{self.type}, {self.data!r:.120})"


# Strict JSON has no NaN or Infinity: a non-finite float is written as one of these strings.
NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_BIG_INT_BITS = 14_000  # near the 4,300 digits Python converts to text by default: checked before converting


def jsonable(value: Any) -> Any:
    """A value that strict JSON can hold: non-finite floats as strings, an integer too long for text described."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else NON_FINITE[repr(value)]
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _BIG_INT_BITS:
        try:
            str(value)
        except ValueError:
            return f"<an integer of about {int(value.bit_length() * math.log10(2)):,} digits>"
        return value
    if value is None or isinstance(value, (str, int, bool)):
        return value
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return jsonable(dump(mode="python"))
    return str(value)



# Line separators that JSON leaves raw but editors, `str.splitlines` and JavaScript break lines at.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


_SURROGATE = re.compile("[\ud800-\udfff]")


def _line(event: dict[str, Any]) -> str:
    """One JSON Lines line: the event on one physical line, whatever its strings hold."""
    text = json.dumps(event, ensure_ascii=False, allow_nan=False)
    if _SURROGATE.search(text):  # a lone surrogate (e.g. from a reply's "\ud800") cannot be written as UTF-8: escape it
        text = json.dumps(event, ensure_ascii=True, allow_nan=False)
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        text = text.translate(_LINE_BREAKS)  # only inside strings, where an escape means the same character
    return text + "\n"


class Trace:
    """The ordered events of one call (or one pipeline run)."""

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.events: list[Event] = list(events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, i: int) -> Event:
        return self.events[i]

    def of_type(self, *types: str) -> list[Event]:
        """The events of the given types, in order."""
        return [e for e in self.events if e.type in types]

    def to_dicts(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.events]

    def to_jsonl(self) -> str:
        """The trace as JSON Lines, one event per line, secrets redacted."""
        return "".join(_line(d) for d in self.to_dicts())

    def write(self, path: str | Path, *, append: bool = False) -> None:
        """Write (or append) the trace as JSON Lines: serialized first, then written atomically (an old trace survives a failure)."""
        text = self.to_jsonl()
        if append:
            with open(path, "a", encoding="utf-8") as f:
                f.write(text)
            return
        from contractstudio.storage.atomic import write_atomic

        write_atomic(Path(path), text)

    @classmethod
    def from_dicts(cls, events: Iterable[dict[str, Any]]) -> Trace:
        """A trace from event mappings (`seq`, `t`, `stage`, `type`, data), e.g. a pipeline run's events."""
        return cls(Event.from_dict(d) for d in events)

    @classmethod
    def read(cls, path: str | Path) -> Trace:
        """Read a JSONL trace; a bad line is reported with its line number."""
        events = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{n}: not a JSON line: {err.msg}") from None
                except RecursionError:
                    raise ValueError(f"{path}:{n}: the line nests too deeply to read") from None
                except ValueError as err:  # e.g. a number of more than 4,300 digits
                    raise ValueError(f"{path}:{n}: not a JSON line: {str(err).split(';')[0]}") from None
                if not isinstance(d, dict):
                    raise ValueError(f"{path}:{n}: an event must be a JSON object")
                try:
                    events.append(Event.from_dict(d))
                except (TypeError, ValueError, OverflowError) as err:  # e.g. "seq": [1] or "t": "soon"
                    raise ValueError(f"{path}:{n}: not an event: {err}") from None
        return cls(events)
