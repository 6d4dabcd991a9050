"""The server's side of the stdio stream: `Content-Length` framed JSON-RPC messages, read within bounds.

pygls' own loop believes the header: `Content-Length: 1000000000000` made it allocate the body (MemoryError),
10**30 overflowed, and a header it could not parse made it read the next message's header as a body line,
and so on: alive, deaf and silent. Here a length over MAX_MESSAGE_BYTES is refused before anything is read,
nothing is held longer than a line piece or a bounded body, bytes outside a frame are skipped until the next
`Content-Length:` header (found at the end of a line, so a header glued to junk still counts), and each
problem is one log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a whole document in one didOpen; our bench's biggest contract is 5 MB
LINE_PIECE = 64 * 1024  # header lines and skipped bytes are read in pieces of at most this
_HEADER = re.compile(rb"Content-Length[ \t]*:[ \t]*([^\r\n]*)\r?\n?\Z", re.IGNORECASE)
_MAX_DIGITS = len(str(MAX_MESSAGE_BYTES))
_SKIPPED = "ignored %d byte(s) that were not a framed message (no valid Content-Length header before them)"


class StdinPieces:
    """stdin read in a worker thread: a line piece (at most LINE_PIECE bytes) or exactly n bytes."""

    def __init__(self, stdin: BinaryIO, executor: ThreadPoolExecutor | None = None) -> None:
        self.stdin = stdin
        self.executor = executor

    def readline(self) -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(self.executor, self.stdin.readline, LINE_PIECE)

    def read(self, n: int) -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(self.executor, self.stdin.read, n)


def _length(value: bytes) -> tuple[int | None, str | None]:
    """The body length a header states, or None and why it is refused."""
    text = value.strip()
    if not text.isdigit():
        return None, f"a Content-Length that is not a number ({text[:40]!r})"
    if len(text) > _MAX_DIGITS or int(text) > MAX_MESSAGE_BYTES:
        shown = f"{int(text):,} bytes" if len(text) <= 30 else f"a {len(text)}-digit number of bytes"
        return None, f"a message of {shown}, over the {MAX_MESSAGE_BYTES:,}-byte limit"
    return int(text), None


async def _read_exactly(reader: StdinPieces, n: int) -> bytes:
    parts: list[bytes] = []
    left = n
    while left > 0:
        part = await reader.read(left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


async def serve_frames(stop: threading.Event, reader: StdinPieces, dispatch: Callable[[bytes], None],
                       log: logging.Logger) -> None:
    """Read framed messages until end of input (or `stop`), handing each whole body to `dispatch`."""
    skipped = 0
    refused = False  # bytes skipped after a refused header are that message's own body: not reported again
    while not stop.is_set():
        line = await reader.readline()
        if not line:
            break
        found = _HEADER.search(line)
        if found is None:
            skipped += len(line)
            continue
        skipped += found.start()
        if skipped and not refused:
            log.warning(_SKIPPED, skipped)
        skipped, refused = 0, False
        length, problem = _length(found.group(1))
        if length is None:
            log.warning("ignored %s; reading on from the next Content-Length header", problem)
            refused = True
            continue
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass  # other headers (Content-Type) say nothing we use
        body = await _read_exactly(reader, length)
        if len(body) < length:
            log.warning("the input ended inside a message (%d of %d bytes)", len(body), length)
            break
        dispatch(body)
    if skipped and not refused:
        log.warning(_SKIPPED, skipped)


def dispatcher(protocol: Any, log: logging.Logger, on_error: Callable[[Exception, Any], Any] | None = None,
               ) -> Callable[[bytes], None]:
    """Hand a body to pygls' protocol as its own loop does (a body that fails is one log line, never the end)."""
    from pygls.exceptions import JsonRpcException

    def dispatch(body: bytes) -> None:
        try:
            protocol.handle_message(json.loads(body, object_hook=protocol.structure_message))
        except Exception as exc:  # the server goes on: _OneLine turns this into one log line
            log.exception("Unable to handle message")
            if on_error is not None:
                on_error(exc, JsonRpcException)

    return dispatch
