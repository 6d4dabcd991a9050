"""The events of a contracted call: one class per event type, and the one list of stages.

The engine makes these; the CLI prints them, the studio draws them, the trace
stores them, eval aggregates them. Each class names its type as written in a
trace file (`TYPE`), and its fields are the event's data in the order they are
written, so a trace's JSON Lines are what they were before events were typed:

    stage_start StageStart        llm_request  ModelRequest     retry_wait        RetryWait
    stage_end   StageEnd          llm_response ModelReply       transport_error   TransportFailure
    condition   ConditionChecked  parsed       ReplyParsed      model_error       ModelFailure
    act_value   ActValue          forward      Forwarded        replay_divergence ReplayDivergence
    result      CallResult        validation_error ValidationFailure  remedy_exhausted RemedyExhausted
    structure_fallback StructureFallback    early_stop        EarlyStop

A type this module does not know (a pipeline run's `step_start`, typed in pipeline_events.py,
a later version's new event) is read as a `PlainEvent` holding its data as it came. Reading checks
each known field's type, so a hand-edited trace is refused with the field it got
wrong instead of failing later inside a replay or a drawing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from contractstudio.runtime.event_fields import checked_field, event_layout, field_annotations

STAGES: tuple[str, ...] = ("input", "pre", "act", "generate", "post", "forward", "finalize")
"""The stages of a call, in the order they run: breakpoints, perf tables and timelines use this order."""

_HEAD = ("seq", "t", "stage", "type")


@dataclass(slots=True, eq=False, repr=False)
class Event:
    """One thing that happened during a call: `seq`, `t` (seconds since the call started), `stage`, and its data."""

    seq: int = 0
    t: float = 0.0
    stage: str = ""
    extra: dict[str, Any] | None = None  # keys a trace file had that this version does not know: kept, written back

    TYPE: ClassVar[str] = ""
    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset()  # written only when set (as the engine always did)

    @property
    def type(self) -> str:
        """The type as written in a trace (`llm_request`, `stage_end`, ...)."""
        return self.TYPE

    @property
    def data(self) -> dict[str, Any]:
        """The event's data as a trace line holds it (a new mapping: changing it changes nothing)."""
        out: dict[str, Any] = {}
        omitted = self.OMITTED_WHEN_DEFAULT
        for name, default in event_layout(type(self)):
            value = getattr(self, name)
            if name in omitted and value == default:
                continue
            out[name] = value
        if self.extra:
            out.update(self.extra)
        return out

    def get(self, key: str, default: Any = None) -> Any:
        """One value of the data by its trace key (generic views; typed code reads the attributes)."""
        return self.data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Event:
        """The event a trace line holds, as its own class; ValueError names a field of the wrong type."""
        seq, t, stage, kind = int(d.get("seq", 0)), float(d.get("t", 0.0)), str(d.get("stage", "")), str(d.get("type", ""))
        cls = EVENT_TYPES.get(kind)
        data = {k: v for k, v in d.items() if k not in _HEAD}
        if cls is None:
            return PlainEvent(seq, t, stage, kind=kind, payload=data)
        values: dict[str, Any] = {}
        for name, annotation in field_annotations(cls):
            if name in data:
                values[name] = checked_field(kind, name, annotation, data.pop(name))
        return cls(seq, t, stage, data or None, **values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.seq}, {self.stage}/{self.type}, {self.data!r:.120})"


@dataclass(slots=True, eq=False, repr=False)
class PlainEvent(Event):
    """An event of a type without a class here (a pipeline run's steps, a newer version's events): its data as it came."""

    kind: str = ""
    payload: dict[str, Any] | None = None

    @property
    def type(self) -> str:
        return self.kind

    @property
    def data(self) -> dict[str, Any]:
        if self.payload is None:
            self.payload = {}
        return self.payload


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class StageStart(Event):
    """A stage begins; the input stage names the contract, the model and the input, generate and post the attempt."""

    TYPE: ClassVar[str] = "stage_start"

    attempt: int | None = None
    contract: str | None = None
    model: str | None = None
    value: Any = None

    @property
    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.attempt is not None:
            out["attempt"] = self.attempt
        if self.contract is not None:
            out["contract"] = self.contract
        if self.model is not None:
            out["model"] = self.model
        if self.contract is not None or self.value is not None:  # the input stage records its value, null included
            out["value"] = self.value
        if self.extra:
            out.update(self.extra)
        return out


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class StageEnd(Event):
    """A stage ends: whether it went well, and how long it took."""

    TYPE: ClassVar[str] = "stage_end"

    ok: bool = True
    duration_s: float = 0.0


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class ConditionChecked(Event):
    """One pre or post condition evaluated: whether it applied, passed, and its rendered message when it failed."""

    TYPE: ClassVar[str] = "condition"
    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset({"raised_at"})

    id: str | None = None
    index: int = 0
    expression: str = ""
    applies: bool = True
    passed: bool = True
    message: str | None = None
    raised_at: str | None = None  # `FILE:LINE` that raised, when the condition is Python code (a class's pre / post)

    @property
    def failed(self) -> bool:
        """It applied and did not pass."""
        return self.applies and not self.passed

    @property
    def name(self) -> str:
        """`stage.id`, or `stage[index]` for a condition without an id."""
        return f"{self.stage}.{self.id}" if self.id else f"{self.stage}[{self.index}]"


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class ModelRequest(Event):
    """The exact messages about to be sent to the model (a session pauses here: the reply or messages may be edited)."""

    TYPE: ClassVar[str] = "llm_request"
    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset({"errors", "edited", "structured_output", "structure_shape"})

    attempt: int = 0
    purpose: str = "generate"  # generate, remedy_pre, remedy_post
    model: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    transport_retry: int = 0
    errors: list[str] | None = None  # a remedy request: the error texts it tells the model
    edited: bool = False  # the messages were edited in the debugger before they were sent
    # the structure asked for: json_schema, json_object or off (written when one was asked for, or fallen back from);
    # the exact `response_format` sent is in `params`
    structured_output: str | None = None
    # at an OpenAI-compatible server: the request shape the schema was sent in, and why that one (runtime/structured.py)
    structure_shape: str | None = None

    @property
    def remedy(self) -> bool:
        """A remedy request (not the first generate), on its first transport try."""
        return self.purpose.startswith("remedy") and not self.transport_retry


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class ModelReply(Event):
    """The model's raw reply (whole, or cut past the trace's limit with its real length) and what it cost."""

    TYPE: ClassVar[str] = "llm_response"
    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset({"text_chars", "truncated", "edited", "chunk_ends",
                                                                 "chunk_s", "model_version", "system_fingerprint",
                                                                 "finish_reason"})

    attempt: int = 0
    text: str = ""
    text_chars: int | None = None
    truncated: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    edited: bool = False  # written in the debugger instead of asking the model
    # a streamed reply: where each chunk ended (characters into the text) and when it came (seconds after the
    # request was sent); a replay streams the text in the same chunks, at the same times
    chunk_ends: list[int] | None = None
    chunk_s: list[float] | None = None
    model_version: str | None = None  # the model that answered, where the provider names it
    system_fingerprint: str | None = None  # the provider's backend configuration, where it gives one
    finish_reason: str | None = None  # why the model stopped, where the server says it (a reply cut early: none)

    @property
    def first_token_s(self) -> float | None:
        """Seconds from the request to the reply's first chunk (a streamed reply), else None."""
        return self.chunk_s[0] if self.chunk_s else None

    @property
    def chars(self) -> int:
        """The reply's real length (a runaway reply's text is cut in the trace)."""
        return self.text_chars if self.text_chars is not None else len(self.text)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class EarlyStop(Event):
    """A streamed reply cut while the model was still writing: a clause its prefix already broke (`clause`, the
    error the remedy sends), `position` characters into the reply, after `tokens` tokens and `seconds`; what the
    rest would have cost, when the model knew it (a scripted or replayed reply: `saved_tokens`, `saved_s`)."""

    TYPE: ClassVar[str] = "early_stop"
    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset({"saved_tokens", "saved_s"})

    attempt: int = 0
    clause: str = ""
    message: str = ""
    position: int = 0
    chars: int = 0  # the reply's length when it was cut
    tokens: int = 0
    seconds: float = 0.0
    saved_tokens: int | None = None
    saved_s: float | None = None


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class ReplyParsed(Event):
    """The reply's JSON, valid for the output type (omitted for a runaway reply: the output is in the result)."""

    TYPE: ClassVar[str] = "parsed"
    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset({"omitted", "text_chars"})

    attempt: int = 0
    output: Any = None
    omitted: bool = False
    text_chars: int | None = None


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class ValidationFailure(Event):
    """Errors of a value: `where` is type, pre, post, act or finalize; a session may edit them before a remedy."""

    TYPE: ClassVar[str] = "validation_error"

    where: str = "type"
    errors: list[str] = field(default_factory=list)
    attempt: int = 0


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class RetryWait(Event):
    """A wait before a remedy attempt or a transport retry (`waited`: slept, or only computed)."""

    TYPE: ClassVar[str] = "retry_wait"
    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset({"retry", "attempt"})

    kind: str = "remedy"  # remedy or transport
    retry: int | None = None  # transport: the retry number
    attempt: int | None = None  # remedy: the attempt number
    seconds: float = 0.0
    waited: bool = True


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class TransportFailure(Event):
    """A request that got no reply (rate limit, timeout, connection, 5xx, ...), and whether the engine gives up."""

    TYPE: ClassVar[str] = "transport_error"

    exception: str = ""
    kind: str = ""
    status: int | None = None
    message: str = ""
    retry: int = 0
    retryable: bool = False
    gave_up: bool = False


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class ModelFailure(Event):
    """The model could not answer at all (a scripted model out of replies, a replay out of its recording)."""

    TYPE: ClassVar[str] = "model_error"

    message: str = ""


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class ReplayDivergence(Event):
    """A replayed request differs from the recorded one: which message, and where."""

    TYPE: ClassVar[str] = "replay_divergence"

    message: str = ""


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class StructureFallback(Event):
    """The provider refused the structure asked for (or answered 400 about it): the call asks in the next mode, or
    (`to_shape`) in the same mode in the server's next request shape."""

    TYPE: ClassVar[str] = "structure_fallback"
    OMITTED_WHEN_DEFAULT: ClassVar[frozenset[str]] = frozenset({"to_shape"})

    from_mode: str = ""
    to_mode: str = ""
    reason: str = ""
    to_shape: str | None = None


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class RemedyExhausted(Event):
    """A remedy loop used all its attempts (`graceful`: the fallback answers without an error)."""

    TYPE: ClassVar[str] = "remedy_exhausted"

    loop: str = ""
    attempts: int = 0
    graceful: bool = False


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class ActValue(Event):
    """The act stage's value (the intermediate), as JSON."""

    TYPE: ClassVar[str] = "act_value"

    value: Any = None


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class Forwarded(Event):
    """What the call returns: the output, the fallback, a raise, or a Python contract's own forward."""

    TYPE: ClassVar[str] = "forward"

    successful: bool = False
    used: str = ""  # output, fallback, raise, forward


@dataclass(slots=True, eq=False, kw_only=True, repr=False)
class CallResult(Event):
    """The call's result: success, the output, the counts and every error."""

    TYPE: ClassVar[str] = "result"

    successful: bool = False
    output: Any = None
    llm_calls: int = 0
    remedy_attempts: int = 0
    errors: list[str] = field(default_factory=list)
    raised: bool = False


EVENT_TYPES: dict[str, type[Event]] = {cls.TYPE: cls for cls in (
    StageStart, StageEnd, ConditionChecked, ModelRequest, ModelReply, ReplyParsed, ValidationFailure, RetryWait,
    TransportFailure, ModelFailure, ReplayDivergence, RemedyExhausted, ActValue, Forwarded, CallResult, StructureFallback,
    EarlyStop)}
"""Every typed event class by the type written in a trace."""

E = TypeVar("E", bound=Event)

Row = tuple  # (class, seq, t, stage, the class's data values in its fields' order, trailing defaults left out)
"""An event as the engine records it during a call: a plain tuple, made an `Event` only when something reads it (a
stepping session, the trace's readers and writers). A call nobody reads the events of builds none."""


def built(row: Row) -> Event:
    """The event a row records: its class, with the row's values for its first data fields (the rest default)."""
    cls, seq, t, stage, values = row
    layout = event_layout(cls)
    if len(values) > len(layout):
        raise TypeError(f"{cls.__name__} has {len(layout)} data fields, a row gave {len(values)} values")
    event = cls(seq, t, stage)
    for (name, _default), value in zip(layout, values, strict=False):  # the trailing defaults stay
        setattr(event, name, value)
    return event
