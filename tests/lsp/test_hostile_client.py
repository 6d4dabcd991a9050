"""The language server's stdio framing fed raw bytes (issue 18 point 12): an absurd Content-Length, a malformed or
missing header never kill the server or leave it deaf, and each problem is one log line."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
from typing import Any

import pytest

from contractstudio.lsp import framing
from contractstudio.lsp.framing import StdinPieces, serve_frames


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


PING = {"jsonrpc": "2.0", "id": 7, "method": "shutdown"}


def read_all(raw: bytes, caplog: pytest.LogCaptureFixture) -> tuple[list[Any], list[str]]:
    """What the server's reader hands on from these bytes, and its log lines."""
    got: list[Any] = []
    log = logging.getLogger("contractstudio.lsp.test")
    with caplog.at_level(logging.WARNING, logger=log.name):
        asyncio.run(serve_frames(threading.Event(), StdinPieces(io.BytesIO(raw)), lambda body: got.append(json.loads(body)), log))
    return got, [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("length", [b"1000000000000", b"1" + b"0" * 30, b"9" * 5000])
def test_an_absurd_content_length_is_refused_before_anything_is_read(length: bytes, caplog: pytest.LogCaptureFixture) -> None:
    got, logs = read_all(b"Content-Length: " + length + b"\r\n\r\n{}" + frame(PING), caplog)
    assert got == [PING]  # the next message is read as usual
    assert len(logs) == 1 and "over the 67,108,864-byte limit" in logs[0]


def test_a_malformed_header_is_one_log_line_and_the_next_message_is_heard(caplog: pytest.LogCaptureFixture) -> None:
    got, logs = read_all(b'Content-Length: abc\r\n\r\n{"jsonrpc": "2.0"}' + frame(PING), caplog)
    assert got == [PING]
    assert logs == ["ignored a Content-Length that is not a number (b'abc'); reading on from the next Content-Length header"]


def test_a_message_without_a_header_is_skipped_and_the_server_stays_in_step(caplog: pytest.LogCaptureFixture) -> None:
    body = b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'
    got, logs = read_all(body + frame(PING) + b"\r\n" + frame(PING), caplog)  # the header glued to the bare body
    assert got == [PING, PING]
    assert logs == [f"ignored {len(body)} byte(s) that were not a framed message (no valid Content-Length header before them)",
                    "ignored 2 byte(s) that were not a framed message (no valid Content-Length header before them)"]


class _Counted(io.BytesIO):
    """stdin that remembers the longest piece the reader asked for."""

    longest = 0

    def readline(self, size: int | None = -1, /) -> bytes:
        line = super().readline(size)
        self.longest = max(self.longest, len(line))
        return line


def test_a_long_line_of_junk_is_never_held_whole(caplog: pytest.LogCaptureFixture) -> None:
    stdin = _Counted(b"x" * (1 << 20) + b"\r\n" + frame(PING))
    got: list[Any] = []
    with caplog.at_level(logging.WARNING, logger="contractstudio.lsp.test"):
        asyncio.run(serve_frames(threading.Event(), StdinPieces(stdin), lambda body: got.append(json.loads(body)),
                                 logging.getLogger("contractstudio.lsp.test")))
    assert got == [PING] and stdin.longest <= framing.LINE_PIECE
    assert [r.getMessage() for r in caplog.records] == [
        f"ignored {(1 << 20) + 2} byte(s) that were not a framed message (no valid Content-Length header before them)"]


def test_the_input_ending_inside_a_message_is_said(caplog: pytest.LogCaptureFixture) -> None:
    got, logs = read_all(b"Content-Length: 50\r\n\r\n{}", caplog)
    assert got == [] and logs == ["the input ended inside a message (2 of 50 bytes)"]


def test_opening_and_closing_documents_keeps_no_memory_per_document() -> None:
    import gc
    import tracemalloc

    from contractstudio.lsp.server import build

    class Sink:
        def write(self, data: bytes) -> None:
            pass

        def close(self) -> None:
            pass

    async def cycles() -> int:
        server = build(0.0)
        server.protocol.set_writer(Sink())
        send = framing.dispatcher(server.protocol, logging.getLogger("contractstudio.lsp.test"))
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"capabilities": {}, "processId": None, "rootUri": None}}).encode())
        text = "kind: contract\nname: x\nprompt: hi\noutput: {type: str}\n"

        async def open_close(first: int, n: int) -> None:
            for i in range(first, first + n):
                uri = f"file:///nowhere/doc{i}.contract.yaml"
                send(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                    "uri": uri, "languageId": "yaml", "version": 1, "text": text}}}).encode())
                send(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didClose",
                                 "params": {"textDocument": {"uri": uri}}}).encode())
                await asyncio.sleep(0)
            await asyncio.sleep(0.05)
            gc.collect()

        await open_close(0, 50)  # warm: caches, first analyses
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            await open_close(50, 200)
            return tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()

    grown = asyncio.run(cycles())
    assert grown < 100_000, f"{grown:,} bytes kept after 200 documents were opened and closed"
