"""One worker process of `eval --workers N` (started by `workers.py` as `python -m`, never by a user).

    python -m contractstudio.evaluation.worker_process READ_FD WRITE_FD

It reads its job from the parent, builds one `RowRunner` (the local engine's
per-row code) whose reply cache and rate limiter are the parent's hub, runs
the rows it is given on its own threads and sends back each record. Its main
thread only reads the parent's pipe: when that pipe ends (the parent finished,
or was killed) the process exits at once, so no worker outlives its run.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
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


def warm(job: Any) -> None:
    """Import and build once, before the other workers are forked, what each of them needs."""
    from contractstudio.evaluation.rows import load_plan

    contract = load_plan(job)
    if job.mode == "live":  # litellm, the OpenAI client and its SSL context: seconds of CPU in a fresh process
        contract.model_for(job.model, api_base=job.api_base).prepare()


def serve(parent: _Parent, job: Any, threads: int) -> None:
    """Run the job's rows until the parent's pipe ends."""
    from contractstudio.evaluation.hub import HubLimits, HubStore
    from contractstudio.evaluation.rows import RowRunner

    live = job.mode == "live"
    limits = HubLimits(parent.call, parent.tell, limited=bool(job.rpm or job.tpm), same_machine=True) if live else None
    try:
        runner = RowRunner(job, store=HubStore(parent.call, parent.tell) if live and job.use_cache else None, limits=limits)
    except Exception as err:  # noqa: BLE001 - the parent loaded the same plan; say why this copy could not
        parent.send(("failed", f"{type(err).__name__}: {err}"))
        return
    parent.send(("ready",))
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="contractstudio-eval")

    def run(row_id: int, row: Any) -> None:
        parent.send(("record", row_id, runner.run(row)))

    while True:
        message = parent.receive.recv()
        kind = message[0]
        if kind == "row":
            pool.submit(run, message[1], message[2])
        elif kind == "answer":
            parent.waiting.pop(message[1]).set_result(message[2])
        elif kind == "pause" and limits is not None:
            limits.pause(message[1])


def _pipes(arg: str) -> tuple[int, int]:
    read, write = arg.split(",")
    return int(read), int(write)


def main(argv: list[str]) -> None:
    """Serve the parent on the pipe pairs it passed (`READ,WRITE` each): this process the first, a forked copy
    each other one; exit when the parent's pipe ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it then closes the pipes
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the forked workers are reaped as they exit
    pairs = [_pipes(arg) for arg in argv]
    mine = 0
    try:
        first = Connection(pairs[0][0], writable=False)
        _, job, threads = first.recv()
        warm(job)  # before any thread starts: forking a process with threads is unsafe
        for n in range(1, len(pairs)):
            if os.fork() == 0:
                mine = n
                break
        for n, (read, write) in enumerate(pairs):  # keep only this worker's pipes open: each ends when its worker does
            if n != mine:
                if n == 0:
                    first.close()
                else:
                    os.close(read)
                os.close(write)
        receive = first if mine == 0 else Connection(pairs[mine][0], writable=False)
        parent = _Parent(receive, Connection(pairs[mine][1], readable=False))
        if mine != 0:
            _, job, threads = receive.recv()
        serve(parent, job, threads)
    except (EOFError, OSError, KeyboardInterrupt):
        pass
    finally:
        sys.stderr.flush()
        os._exit(0)  # not waiting for rows in flight: their records have nowhere to go


if __name__ == "__main__":
    main(sys.argv[1:])
