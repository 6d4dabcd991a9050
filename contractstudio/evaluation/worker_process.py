"""The warm process of `eval --workers N` and the workers it forks (started by `workers.py` as `python -m`, never by a user).

    python -m contractstudio.evaluation.worker_process SOCKET_FD

This process imports what a worker needs once, then forks a worker for each
request on the socket (the job, two pipe ends, the parent's environment and
folder, the run's reply-cache folder). Before forking it builds the job's `RowRunner` (the local engine's
per-row code: the contract checked, the live client made), so a worker starts
with it. A worker opens the run's reply cache itself (one SQLite file shared by
the workers) and asks the parent's hub only for the rate limiter. A
worker runs the rows it is given as the local engine does (live rows as tasks of one event loop) and sends back each record.
Its main thread only reads the parent's pipe: when that pipe ends (the parent
finished, or was killed) the worker exits at once, so no worker outlives its
run; this process exits when the parent's socket ends.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import gc
import itertools
import os
import pickle
import signal
import socket
import sqlite3
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any


class _Parent:
    """The pipe pair to the parent: sends from any thread, calls that wait for the parent's answer."""

    def __init__(self, receive: Connection, send: Connection) -> None:
        self.receive = receive
        self._send = send
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self.waiting: dict[int, Future[Any]] = {}

    def send(self, message: Any) -> None:
        with self._lock:
            self._send.send(message)

    def call(self, method: str, *args: Any) -> Any:
        """The hub's answer to `method(*args)`."""
        answer: Future[Any] = Future()
        call_id = next(self._ids)
        self.waiting[call_id] = answer
        self.send(("call", call_id, method, args))
        return answer.result()

    def tell(self, method: str, *args: Any) -> None:
        self.send(("tell", method, args))


class _Outbox:
    """What a worker's rows send and store, from the event loop's thread: the reply-cache entries are written,
    then the records sent, once per turn of the loop (one transaction for every entry that came in meanwhile).

    A record goes out only after the entries of its row are committed, so a row in the results file has its
    replies in the cache; a worker killed mid-write leaves that transaction undone (SQLite's journal), never a
    damaged file. It is the rows' `store` too: lookups read the cache file directly (the file is shared by the
    run's workers and safe across processes: WAL, a busy timeout). No thread of its own: handing each row over
    to one cost more than the write.
    """

    def __init__(self, parent: _Parent, loop: asyncio.AbstractEventLoop, cache_dir: str | None) -> None:
        from contractstudio.evaluation.cache import ReplyCache

        self.parent = parent
        self.loop = loop
        self.cache = ReplyCache(Path(cache_dir)) if cache_dir else None
        self.entries: list[tuple[str, dict[str, Any]]] = []
        self.messages: list[Any] = []

    def get(self, key: str) -> dict[str, Any] | None:
        return self.cache.get(key) if self.cache is not None else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        self.entries.append((key, entry))

    def send(self, message: Any) -> None:
        """Send `message` after this turn of the loop, once the entries stored before it are written (loop thread only)."""
        if not self.messages:
            self.loop.call_soon(self._flush)
        self.messages.append(message)

    def _flush(self) -> None:
        entries, self.entries = self.entries, []
        messages, self.messages = self.messages, []
        if entries and self.cache is not None:
            try:
                self.cache.put_many(entries)
            except (sqlite3.Error, OSError):  # a full disk, a cache locked past its timeout: the rows go on uncached
                pass
        try:
            for message in messages:
                self.parent.send(message)
        except (OSError, ValueError):  # the parent is gone: this process ends when its pipe does
            pass


def warm() -> None:
    """Import what every worker needs, once, before any worker is forked."""
    import contractstudio.analysis.check  # the contract is checked again in each worker
    import contractstudio.evaluation.hub
    import contractstudio.evaluation.rows
    import contractstudio.runtime.session  # noqa: F401


def build(job: Any) -> Any:
    """The job's runner, built before the fork (the contract checked, the live client made) so every worker
    forked for the job starts with it; a problem is reported by each worker instead."""
    from contractstudio.evaluation.rows import RowRunner

    try:
        return RowRunner(job)
    except Exception as err:  # noqa: BLE001 - the parent loaded the same plan; say why this copy could not
        return f"{type(err).__name__}: {err}"


def serve(parent: _Parent, job: Any, runner: Any, cache_dir: str | None, share: int) -> None:
    """Run the job's rows until the parent's pipe ends, at most `share` at once (the parent hands a few more, to
    wait here); `cache_dir` is the run's reply cache (None: no cache)."""
    from contractstudio.evaluation.hub import HubLimits
    from contractstudio.evaluation.results import line_of

    if isinstance(runner, str):
        parent.send(("failed", runner))
        return
    live = job.mode == "live"
    loop = asyncio.new_event_loop()
    outbox = _Outbox(parent, loop, cache_dir if live and job.use_cache else None)
    runner.store = outbox if outbox.cache is not None else None
    runner.limits = limits = HubLimits(parent.call, parent.tell, limited=bool(job.rpm or job.tpm), same_machine=True) if live else None
    parent.send(("ready",))
    # as the local engine runs them: a live row as a task of one event loop (RowRunner.arun), a row that
    # waits for nothing one after the other (here in a thread of its own: this one reads the parent's pipe)
    threading.Thread(target=loop.run_forever, name="contractstudio-eval-loop", daemon=True).start()
    inline = ThreadPoolExecutor(max_workers=1, thread_name_prefix="contractstudio-eval")

    def finished(row_id: int, rec: dict[str, Any]) -> tuple[Any, ...]:
        # the results line is made here, where the row ran (the parent writes it as it is); the parent gets the
        # record without its trace, for its tally, its progress and a baseline
        return ("record", row_id, line_of(rec), {k: v for k, v in rec.items() if k != "trace"})

    slots = asyncio.Semaphore(share)

    async def run_live(row_id: int, row: Any) -> None:
        async with slots:
            rec = await runner.arun(row)
        outbox.send(finished(row_id, rec))  # sent after this row's cache entries are written

    def send_record(row_id: int, done: Future[Any]) -> None:
        try:
            parent.send(finished(row_id, done.result()))
        except (OSError, ValueError):  # the parent is gone: this process ends when its pipe does
            pass

    while True:
        message = parent.receive.recv()
        kind = message[0]
        if kind == "row" and live:
            asyncio.run_coroutine_threadsafe(run_live(message[1], message[2]), loop)
        elif kind == "row":
            inline.submit(runner.run, message[2]).add_done_callback(functools.partial(send_record, message[1]))
        elif kind == "answer":
            parent.waiting.pop(message[1]).set_result(message[2])
        elif kind == "pause" and limits is not None:
            limits.pause(message[1])
        elif kind == "flush":  # the run is over: its rows' spans are sent before this process is told to end
            from contractstudio.runtime import otel

            otel.flush()
            parent.send(("flushed",))


def main(argv: list[str]) -> None:
    """Fork a worker for each request on the socket the parent passed; exit when the parent closes it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it then closes the pipes
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the forked workers are reaped as they exit
    requests = socket.socket(fileno=int(argv[0]))
    built: tuple[Any, Any] | None = None  # ((job, folder, environment), runner) of the last request
    try:
        warm()
        while True:
            message, fds, _, _ = socket.recv_fds(requests, 1 << 26, 2)
            if not message:
                break  # the parent is gone
            env, cwd, job, cache_dir, share = pickle.loads(message)  # from the parent that started this process
            os.environ.clear()
            os.environ.update(env)  # the parent's, now: keys and cache folder set since this process started
            from contractstudio.safe_text import register_environment

            register_environment()  # its keys are in use here too, live or not: no piece of one is in a record
            from contractstudio.runtime import otel

            otel.reset()  # spans go where this run's environment says (OTEL_EXPORTER_OTLP_ENDPOINT: eval --otlp)
            os.chdir(cwd)
            # the runner of the last run serves this one when only its cache folder or limits differ (the worker
            # gets those apart) and the folder and environment (keys the client was made with) are the same
            same = (dataclasses.replace(job, cache_dir=None, rpm=None, tpm=None), cwd, env)
            if built is None or built[0] != same:
                built = (same, build(job))  # before the fork: imports, the checked contract, the live client
            # what the worker inherits (litellm, the engine, the job's runner: some 300,000 objects) is never garbage:
            # frozen, a worker's collections skip it (a full one took 0.3 s each), nor copy its pages by touching them
            gc.freeze()
            if os.fork() == 0:
                requests.close()
                parent = _Parent(Connection(fds[0], writable=False), Connection(fds[1], readable=False))
                try:
                    serve(parent, job, built[1], cache_dir, share)
                except (EOFError, OSError):
                    pass
                finally:
                    os._exit(0)  # not waiting for rows in flight: their records have nowhere to go
            for fd in fds:
                os.close(fd)
    except (OSError, KeyboardInterrupt):
        pass
    finally:
        os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
