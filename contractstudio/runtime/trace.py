"""The events of a call, kept in order, written and read as JSON Lines, with secrets redacted.

The engine produces events (runtime/events.py: one class per type); the CLI prints
them, the studio draws them, this module stores them. Pipelines use the same `Trace` so both kinds of run can be
saved, reopened and replayed the same way.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from contractstudio.reading.replies import strict_json
from contractstudio.runtime.events import E, Event, Row, StageStart, built, event_layout

# Redaction lives in contractstudio.safe_text (shared with the analyzer's YML007); these names stay importable here.
from contractstudio.safe_text import REDACTED, redact, redact_text, redacted_key, register_secret, register_secrets_in

__all__ = ["REDACTED", "Event", "NotATrace", "Trace", "filter_logs", "recorded_start", "redact", "register_secret",
           "register_secrets_in"]


class RedactingFilter(logging.Filter):
    """A log filter that redacts keys from a record's text: litellm, the OpenAI client and httpx log requests."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is left to the logging module
            return True
        clean = redact_text(text)
        if clean != text:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:  # a traceback quotes exception texts, e.g. an echoed key
            record.exc_text = redact_text(_FORMATTER.formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
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


def redacted_json(value: Any) -> Any:
    """`redact(jsonable(value))` in one walk: what a trace line holds of a value (the hot path of writing traces)."""
    if isinstance(value, str):
        return redact_text(value)
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is int:
        return value if value.bit_length() <= _BIG_INT_BITS else jsonable(value)
    if kind is float:
        return value if math.isfinite(value) else NON_FINITE[repr(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key, named = redacted_key(k if type(k) is str else str(k))
            v = redacted_json(v)
            out[key] = REDACTED if named and v not in (None, "") and not isinstance(v, (dict, list)) else v
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        return [redacted_json(v) for v in value]
    return redact(jsonable(value))


def _field_names() -> frozenset[str]:
    from dataclasses import fields

    from contractstudio.runtime.events import EVENT_TYPES

    names = {f.name for cls in EVENT_TYPES.values() for f in fields(cls)} | {"attempt", "contract", "model", "value"}
    return frozenset(n for n in names if redacted_key(n) == (n, False))  # (none names a credential: checked, not assumed)


_FIELD_NAMES = _field_names()  # the events' own keys: no redaction can change them


def _event_dict(e: Event) -> dict[str, Any]:
    """One event as a trace line holds it: `redacted_json` of its data, skipping the events' own keys and plain values."""
    out: dict[str, Any] = {"seq": e.seq, "t": round(e.t, 6), "stage": e.stage, "type": e.type}
    plan = _PLANS.get(type(e), _UNPLANNED)
    if plan is _UNPLANNED:
        plan = _plan(type(e))
    if plan is None:  # a class with its own `data` (StageStart, a PlainEvent)
        for k, v in e.data.items():
            _put(out, k, v)
        return out
    for name, default, omitted in plan:  # the fields as `Event.data` lists them, without building that mapping first
        v = getattr(e, name)
        if omitted and v == default:
            continue
        kind = type(v)
        if kind is str:
            v = redact_text(v)
        elif kind is float:  # times and costs: most events have one
            if not math.isfinite(v):
                v = NON_FINITE[repr(v)]
        elif v is not None and kind is not bool and kind is not int:
            v = redacted_json(v)
        elif kind is int and v.bit_length() > _BIG_INT_BITS:
            v = jsonable(v)
        out[name] = v
    if e.extra:
        for k, v in e.extra.items():
            _put(out, k, v)
    return out


def _put(out: dict[str, Any], k: Any, v: Any) -> None:
    """One data item into a trace line, redacted (its key too, unless it is one of the events' own)."""
    kind = type(v)
    if kind is str:
        v = redact_text(v)
    elif v is not None and kind is not bool and kind is not int:
        v = redacted_json(v)
    elif kind is int and v.bit_length() > _BIG_INT_BITS:
        v = jsonable(v)
    if k not in _FIELD_NAMES:  # a key of a pipeline's or a newer version's event
        key, named = redacted_key(k if type(k) is str else str(k))
        out[key] = REDACTED if named and v not in (None, "") and not isinstance(v, (dict, list)) else v
    else:
        out[k] = v


_UNPLANNED: Any = object()
_PLANS: dict[type, tuple[tuple[str, Any, bool], ...] | None] = {}


def _plan(cls: type[Event]) -> tuple[tuple[str, Any, bool], ...] | None:
    """(field, default, omitted when default) of a class whose data is `Event.data`'s own walk of its fields; None for a
    class with a `data` of its own. Only the events' own keys are planned (a field named like a credential is not)."""
    plan: tuple[tuple[str, Any, bool], ...] | None = None
    if cls.data is Event.data:
        omitted = cls.OMITTED_WHEN_DEFAULT
        plan = tuple((name, default, name in omitted) for name, default in event_layout(cls))
        if any(name not in _FIELD_NAMES for name, _d, _o in plan):
            plan = None
    _PLANS[cls] = plan
    return plan


class TraceLines(list[dict[str, Any]]):
    """A trace's events as `to_dicts` makes them: plain JSON (string keys, finite floats, no bytes or sets), so a
    results line can hand them to a fast encoder without walking them again (evaluation/results.py)."""

    __slots__ = ()


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
    """The ordered events of one call (or one pipeline run).

    A call records its events as rows (runtime/events.py's `Row`) in `pending`, after the events already built; the
    first read of `events` (iterating, indexing, writing) builds them in order, once. So a call whose trace nobody
    reads builds no event objects, and every reader sees the same events as if they had been built as they happened.
    """

    def __init__(self, events: Iterable[Event] = ()) -> None:
        self.ready: list[Event] = list(events)  # the events built so far
        self.pending: list[Row | Event] = []  # recorded after `ready`, not built yet (an Event here is kept as it is)
        self._building = threading.Lock()  # the studio draws a trace (UI thread) while a worker steps its call

    @property
    def events(self) -> list[Event]:
        """Every event, in order (the rows recorded so far built now)."""
        if self.pending:
            with self._building:  # one reader builds; a row the call records meanwhile stays pending
                pending = self.pending
                count = len(pending)
                self.ready.extend(e if isinstance(e, Event) else built(e) for e in pending[:count])
                del pending[:count]
        return self.ready

    @events.setter
    def events(self, events: list[Event]) -> None:
        with self._building:
            self.ready[:] = events  # in place: a running call appends to these lists
            self.pending.clear()

    def event_of(self, item: Row | Event) -> Event:
        """The event a recorded row became (built now, with every row before it), or the event itself."""
        if isinstance(item, Event):
            return item
        events = self.events
        seq = item[1]
        if 0 < seq <= len(events) and events[seq - 1].seq == seq:  # a row's seq is its place in the trace
            return events[seq - 1]
        raise LookupError(f"no event {seq} in this trace (its events were changed while the call ran)")

    def last(self) -> Row | Event | None:
        """The last event recorded (a row until read), or None."""
        with self._building:
            return self.pending[-1] if self.pending else self.ready[-1] if self.ready else None

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.ready) + len(self.pending)

    def __getitem__(self, i: int) -> Event:
        return self.events[i]

    def of_type(self, *types: str) -> list[Event]:
        """The events of the given types (as written in a trace), in order."""
        return [e for e in self.events if e.type in types]

    def of(self, kind: type[E]) -> list[E]:
        """The events of one class, in order: `trace.of(ModelRequest)`."""
        return [e for e in self.events if isinstance(e, kind)]

    def to_dicts(self) -> list[dict[str, Any]]:
        """Each event as one JSON-ready mapping, secrets redacted: a trace line's content."""
        return TraceLines(_event_dict(e) for e in self.events)

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
        try:
            return cls._read(path)
        except UnicodeDecodeError:  # check's words for bytes that are not text, not the codec's
            raise ValueError(f"{path}: the file is not UTF-8 text") from None

    @classmethod
    def _read(cls, path: str | Path) -> Trace:
        events = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:  # the one bounded JSON reader: NaN/Infinity, deep nesting, huge numbers, lone surrogates refused
                    d = strict_json(line)
                except ValueError as err:
                    raise ValueError(f"{path}:{n}: not a JSON line: {err}") from None
                if not isinstance(d, dict):
                    raise ValueError(f"{path}:{n}: an event must be a JSON object")
                try:
                    events.append(Event.from_dict(d))
                except (TypeError, ValueError, OverflowError) as err:  # e.g. "seq": [1] or "t": "soon"
                    raise ValueError(f"{path}:{n}: not an event: {err}") from None
        return cls(events)


class NotATrace(ValueError):
    """A file that is not a trace at all (not one that merely records no input)."""


START_LINE_CAP = 1 << 20  # a first event longer than this is no trace this version wrote


def recorded_start(path: str | Path) -> StageStart | None:
    """A trace's recorded start: its first event when that is the `input` stage_start (contract, model, value), else
    None. Only that line is read, within a cap, so listing traces costs one line each; NotATrace says why a file is none.
    """
    from contractstudio.reading.json_lines import lines_of

    try:
        with open(path, "rb") as f:
            for line in lines_of(f, START_LINE_CAP, errors="strict"):
                if line.text is not None and not line.text.strip():
                    continue
                data = line.value()
                if not isinstance(data, dict):
                    raise ValueError(f"{path}:{line.number}: an event must be a JSON object")
                first = Event.from_dict(data)
                return first if isinstance(first, StageStart) and first.stage == "input" else None
    except UnicodeDecodeError as err:  # check's words for bytes that are not text
        raise NotATrace(f"{path} is not a trace: the file is not UTF-8 text (byte {err.start})") from None
    except (OSError, ValueError, TypeError, OverflowError) as err:
        raise NotATrace(f"{path} is not a trace: {getattr(err, 'strerror', None) or err}") from None
    return None
