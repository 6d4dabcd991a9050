"""`eval --workers N`: the local engine's rows spread over N worker processes of this machine (every core used).

Each worker (`worker_process.py`, forked by one warm process per parent) has one
`RowRunner` for the job and runs rows as the local engine does in one process
(live rows as tasks of one event loop: `RowRunner.arun`). The run's one reply
cache is one SQLite file that every worker opens itself (safe across processes);
this parent is the hub of the run's one rate limiter (`hub.py`), as the Ray
engine's hub actor is, and answers the workers' calls to it; a 429's cool-down
is announced to every worker at once. Each worker runs at most its share of
`concurrency` rows at once and holds AHEAD more, so it has its next row when one
finishes, without waiting for this process to be scheduled (the cores are busy
with the workers); this process reads the next row only when one finishes, and
yields records as they come, each with its results line made by the worker; writing the results file,
resuming and the summary stay in `evaluate.py`, in this process, so a `kill -9`
leaves the same file the local engine would.

A worker killed while it runs rows loses nothing: its rows in flight were not
written, so they run again on a fresh worker (once; a row whose second worker
dies too is recorded as failed, never lost). A killed parent closes the
workers' pipe, and each worker exits when it reads the end of it.

Messages are pickled over a pair of pipes between two processes of ours:
parent to worker `("row", id, row)`, `("answer", id, value)`, `("pause", seconds)`;
worker to parent `("ready",)`, `("failed", message)`, `("record", id, results line, record without its trace)`,
`("call", id, method, args)`,
`("tell", method, args)`.
"""

from __future__ import annotations

import os
import pickle
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from contractstudio.evaluation.dataset import Row
from contractstudio.evaluation.engines import EngineSetup
from contractstudio.evaluation.hub import Hub
from contractstudio.evaluation.results import LinedRecord
from contractstudio.evaluation.rows import EvalJob, error_record
from contractstudio.runtime.child_processes import child_environment, python_child

TICK_S = 0.25
LONG_RUN_ROWS = 1000  # a live run this long gets a worker per core by default: start-up (~1 s a worker) pays off
AHEAD = 2  # rows a worker holds beyond its share: one finishing need not wait for this process to be scheduled
HUB_METHODS = frozenset({"reserve", "reserve_at", "settle", "cool_down", "paused_for"})  # the cache is the workers' own


def machine_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


def choose_workers(asked: int | None, *, mode: str, planned: int, concurrency: int) -> int:
    """How many processes run the rows: as asked, else a worker per core for a live run of LONG_RUN_ROWS
    rows or more and one (this process) otherwise; never more than rows in flight."""
    count = asked if asked is not None else (machine_cores() if mode == "live" and planned >= LONG_RUN_ROWS else 1)
    return max(min(count, concurrency), 1)


@dataclass(slots=True)
class _Worker:
    """One worker process (a fork of the warm process) and its pipes, with the rows it runs now."""

    index: int
    send: Connection
    receive: Connection
    ready: bool = False
    running: dict[int, Row] = field(default_factory=dict)


class _WarmProcess:
    """A process started once per parent, that imports what a worker needs (litellm alone takes seconds of CPU)
    and forks a worker whenever asked: the import is paid once per parent, not once per worker or per run.

    It is asked over a socket, with the worker's two pipe ends, the parent's environment and folder; it exits
    when the parent closes that socket (or dies).
    """

    def __init__(self) -> None:
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # never `python -m` as is: the current folder (a cloned repository's asyncio.py) would come first on its path
        child = python_child("contractstudio.evaluation.worker_process", str(theirs.fileno()))
        try:
            self.proc = subprocess.Popen(child.argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, env=child.env)
        finally:
            theirs.close()

    def fork(self, down_r: int, up_w: int, job: EvalJob, cache_dir: str | None, share: int) -> None:
        """A new worker of `job` on these pipe ends, with the run's reply-cache folder (None: no cache) and how many
        of its rows may run at once (its share of --concurrency)."""
        message = pickle.dumps((child_environment(), os.getcwd(), job, cache_dir, share))
        socket.send_fds(self.sock, [message], [down_r, up_w])


_WARM: _WarmProcess | None = None
_WARM_LOCK = threading.Lock()


def _warm_process(*, fresh: bool = False) -> _WarmProcess:
    """This parent's warm process, started on first use (or again when it is gone)."""
    global _WARM
    with _WARM_LOCK:
        if fresh or _WARM is None or _WARM.proc.poll() is not None:
            _WARM = _WarmProcess()
        return _WARM


def _start(indexes: list[int], job: EvalJob, cache_dir: str | None, shares: list[int]) -> list[_Worker]:
    """Worker processes, told their job at once: they get ready while the parent reads rows."""
    warm = _warm_process()
    workers = []
    for index in indexes:
        down_r, down_w = os.pipe()  # parent -> worker
        up_r, up_w = os.pipe()  # worker -> parent
        try:
            try:
                warm.fork(down_r, up_w, job, cache_dir, shares[index])
            except OSError:  # it was killed since: start another
                warm = _warm_process(fresh=True)
                warm.fork(down_r, up_w, job, cache_dir, shares[index])
        finally:
            os.close(down_r)
            os.close(up_w)
        workers.append(_Worker(index, Connection(down_w, readable=False), Connection(up_r, writable=False)))
    return workers


def _stop(worker: _Worker) -> None:
    """Close its pipes: it exits on reading the end."""
    for conn in (worker.send, worker.receive):
        try:
            conn.close()
        except OSError:
            pass


class _Pool:
    """The workers, the hub, the rows in flight; `finished()` yields records as the workers send them."""

    def __init__(self, job: EvalJob, hub: Hub | None, count: int, concurrency: int, cache_dir: str | None) -> None:
        self.job = job
        self.hub = hub
        self.cache_dir = cache_dir
        self.concurrency = concurrency
        self.shares = [concurrency // count + (index < concurrency % count) for index in range(count)]
        self.workers = _start(list(range(count)), job, cache_dir, self.shares)
        self.tries: dict[int, int] = {}  # row id -> times handed to a worker
        self.next_id = 0

    @property
    def in_flight(self) -> int:
        return sum(len(w.running) for w in self.workers)

    def hand(self, row: Row, tries: int = 0, row_id: int | None = None) -> None:
        """Give a row to the least busy worker."""
        if row_id is None:
            row_id, self.next_id = self.next_id, self.next_id + 1
        worker = min(self.workers, key=lambda w: len(w.running) - self.shares[w.index])
        worker.running[row_id] = row
        self.tries[row_id] = tries + 1
        try:
            worker.send.send(("row", row_id, row))
        except OSError:  # it died; its rows (this one included) are handed on when its pipe ends
            pass

    def messages(self) -> list[tuple[_Worker, Any]]:
        """The messages that arrived within a tick; a worker whose pipe ended gives `None`."""
        by_conn = {w.receive: w for w in self.workers}
        out: list[tuple[_Worker, Any]] = []
        for conn in wait(list(by_conn), timeout=TICK_S):
            worker = by_conn[conn]  # type: ignore[index]
            try:
                out.append((worker, worker.receive.recv()))
            except (EOFError, OSError):
                out.append((worker, None))
        return out

    def answer(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        """A worker's call to the hub (answered) or tell (not)."""
        if message[0] == "call":
            _, call_id, method, args = message
        else:
            call_id, (_, method, args) = None, message
        if self.hub is None or method not in HUB_METHODS:
            value: Any = None
        else:
            value = getattr(self.hub, method)(*args)
        if method == "cool_down":  # a 429: every worker holds back now, not at its next poll
            for other in self.workers:
                if other is not worker:
                    self._send(other, ("pause", float(args[0])))
        if call_id is not None:
            self._send(worker, ("answer", call_id, value))

    def _send(self, worker: _Worker, message: Any) -> None:
        try:
            worker.send.send(message)
        except OSError:  # gone: noticed when its pipe ends
            pass

    def replace(self, dead: _Worker) -> Iterator[dict[str, Any]]:
        """A worker died: its rows in flight run again on a fresh worker (once); the records of rows that
        already had their second chance."""
        _stop(dead)
        self.workers.remove(dead)
        if not dead.ready and not self.workers:
            raise RuntimeError("the eval worker processes could not start")
        if dead.ready or not self.workers:
            self.workers.extend(_start([dead.index], self.job, self.cache_dir, self.shares))
        for row_id, row in dead.running.items():
            if self.tries.get(row_id, 1) >= 2:
                self.tries.pop(row_id, None)
                yield error_record(self.job, row, "the worker process running this row died twice", 0.0)
            else:
                self.hand(row, self.tries.get(row_id, 1), row_id)

    def close(self) -> None:
        from contractstudio.runtime import otel

        if otel.active():
            self.flush_spans()
        for worker in self.workers:
            _stop(worker)
        if self.hub is not None:
            self.hub.close()

    def flush_spans(self, timeout_s: float = 30.0) -> None:
        """Each worker sends its rows' spans (runtime/otel.py) and says so, before it is told to end: a worker ends
        without its interpreter's teardown (os._exit), which would have sent them."""
        waiting = {w.receive: w for w in self.workers}
        for worker in self.workers:
            try:
                worker.send.send(("flush",))
            except OSError:
                waiting.pop(worker.receive, None)
        deadline = time.monotonic() + timeout_s
        while waiting and time.monotonic() < deadline:
            for conn in wait(list(waiting), timeout=max(0.0, deadline - time.monotonic())):
                worker = waiting[conn]  # type: ignore[index]
                try:
                    message = worker.receive.recv()
                except (EOFError, OSError):
                    message = ("flushed",)
                if message[0] == "flushed":
                    waiting.pop(worker.receive, None)
                elif message[0] in ("call", "tell"):
                    self.answer(worker, message)


def run_workers(rows: Iterator[Row], setup: EngineSetup) -> Iterator[dict[str, Any] | None]:
    """Each row's record as it finishes (None on a quiet tick), the rows running in `setup.workers` worker processes
    (engines.Engine)."""
    from contractstudio.evaluation.cache import ReplyCache, default_cache_dir

    if setup.job is None:
        raise ValueError("the workers engine runs a contract's rows (a pipeline's simulation runs in this process)")
    job, concurrency, count, cache_dir = setup.job, setup.concurrency, setup.workers, setup.cache_dir

    hub = folder = None
    if job.mode == "live":
        if job.use_cache:
            folder = str(Path(cache_dir or job.cache_dir or default_cache_dir()).resolve())
            ReplyCache(Path(folder)).close()  # made here, once (private, WAL), before the workers open it side by side
        hub = Hub(None, job.rpm, job.tpm)  # the limiter only: each worker reads and writes the cache file itself
    pool = _Pool(job, hub, count, concurrency, folder)
    exhausted = False
    try:
        while True:
            while not exhausted and pool.in_flight < concurrency + AHEAD * count:
                row = next(rows, None)
                if row is None:
                    exhausted = True
                    break
                pool.hand(row)
            if pool.in_flight == 0:
                return
            arrived = pool.messages()
            if not arrived:
                yield None
                continue
            for worker, message in arrived:
                if message is None:  # its pipe ended: the worker died
                    yield from pool.replace(worker)
                    continue
                kind = message[0]
                if kind == "record":
                    row = worker.running.pop(message[1], None)
                    pool.tries.pop(message[1], None)
                    if row is not None:
                        yield LinedRecord(message[3], message[2])
                elif kind in ("call", "tell"):
                    pool.answer(worker, message)
                elif kind == "ready":
                    worker.ready = True
                elif kind == "failed":
                    raise RuntimeError(f"an eval worker could not start: {message[1]}")
    finally:
        pool.close()
