"""A reply as it streams in: its text so far, when each chunk came, and the clause that stopped it early.

The engine (asking.py) hands a `ReplyStream` to its driver with a request it wants streamed: when the output has a
clause decidable on a prefix (prefix_watch.py) or someone watches the reply grow (the studio's debugger). A model
that streams (live, a scripted scenario with `stream`, a replay of a streamed recording) gives it each chunk
through `take`, and stops as soon as `take` says so: the watch found a clause already broken, so the rest of the
reply is never waited for nor paid for. A call with neither a watch nor a listener is not streamed at all (a whole
reply costs less to read than its chunks), and the work per chunk is one append and one `feed`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol


class EarlyStopped(Protocol):
    """What stopped a reply (prefix_watch.EarlyViolation): the clause, the error the remedy sends, where in the reply."""

    clause: str
    message: str
    position: int


class Watch(Protocol):
    """A prefix watch (prefix_watch.PrefixWatch): a violation as soon as the reply so far decides one, else None."""

    def feed(self, reply_so_far: str) -> Any: ...


WatchFor = Callable[[Any, str], "Watch | None"]


def default_watch_for(plan: Any, mode: str) -> Watch | None:
    """The watch of an output's clauses decidable on a prefix, in this structure mode (None: nothing to watch)."""
    from contractstudio.runtime.prefix_watch import watch_for  # the analyzer's classification, loaded when asked

    found: Watch | None = watch_for(plan, mode)
    return found


class ReplyStream:
    """One streamed reply: the text so far, each chunk's end (characters) and time (seconds after the request was
    sent), the violation that stopped it, and (when the model knows it: scripted, replayed) what the rest held."""

    __slots__ = ("text", "ends", "times", "watch", "listener", "clock", "started", "stopped", "rest_tokens", "rest_s")

    def __init__(self, watch: Watch | None, listener: Callable[[ReplyStream], None] | None,
                 clock: Callable[[], float]) -> None:
        self.watch = watch
        self.listener = listener
        self.clock = clock
        self.begin()

    def begin(self) -> None:
        """The request is being sent now (a model calls this before it sends: the chunks' times start here)."""
        self.text = ""
        self.ends: list[int] = []
        self.times: list[float] = []
        self.started = self.clock()
        self.stopped: EarlyStopped | None = None
        self.rest_tokens: int | None = None  # the tokens the reply would still have sent, when the model knows
        self.rest_s: float | None = None  # and the seconds they would have taken

    def take(self, delta: str, at: float | None = None) -> bool:
        """One chunk of the reply (`at`: its recorded time, for a replay); False: stop the stream now."""
        if not delta:
            return True
        text = self.text = self.text + delta
        self.ends.append(len(text))
        self.times.append(self.clock() - self.started if at is None else at)
        if self.listener is not None:
            self.listener(self)
        if self.watch is not None:
            found = self.watch.feed(text)
            if found is not None:
                self.stopped = found
                return False
        return True

    @property
    def first_token_s(self) -> float | None:
        """Seconds from the request to the first chunk of text (None before any)."""
        return self.times[0] if self.times else None


# Pieces about the size of a model's tokens: a word with the space before it, a digit, a punctuation mark.
_PIECES = re.compile(r"\s*[^\W\d_]{1,8}|\s*\d|\s*[^\w\s]|\s*_|\s+")


def token_pieces(text: str) -> list[str]:
    """`text` cut into pieces about the size of a model's tokens (how a scripted reply streams)."""
    return _PIECES.findall(text)


def stream_pieces(pieces: list[str], sink: ReplyStream, times: list[float] | None = None) -> tuple[str, int]:
    """Give `pieces` to `sink` until it stops; (the text it took, the pieces sent). When it stops early, the sink
    learns how many pieces (and, with recorded `times`, seconds) the rest would have taken."""
    for index, piece in enumerate(pieces):
        if not sink.take(piece, None if times is None else times[index]):
            sent = index + 1
            sink.rest_tokens = len(pieces) - sent
            if times is not None:
                sink.rest_s = max(times[-1] - times[index], 0.0)
            return sink.text, sent
    return sink.text, len(pieces)
