"""The local engine (the default): rows run as tasks of one event loop in this process; no Ray needed.

At most `concurrency` rows are in flight; the next row is read from the dataset
only when one finishes, so a dataset of any size is never held in memory.
Records come back in the order rows finish; `None` is yielded every `tick`
seconds while nothing finishes, so the caller can redraw its progress.

A live row awaits its model (`RowRunner.arun`: litellm.acompletion), so 32 calls
in flight cost 32 tasks, not 32 threads taking turns at the GIL. The loop runs in
the caller's thread while the caller waits for the next record (`HereLoop`): no
record crosses between threads, and a loop in a thread of its own cost each row
two hand-overs of the GIL, about a tenth of the engine's own CPU. Replies that
arrive while the caller writes a record wait in their sockets for the next turn.
A caller whose thread already runs a loop (a notebook) gets a loop in a thread
of its own (`RowLoop`). Rows that wait for nothing (scripted, replayed, a
pipeline's simulation) run one after the other, without a loop.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
from collections import deque
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from typing import Any

from contractstudio.evaluation.dataset import Row
from contractstudio.evaluation.engines import EngineSetup, Record

Done = asyncio.Task[Record] | Future[Record]


def run_local(rows: Iterator[Row], setup: EngineSetup, *, tick: float = 0.25) -> Iterator[Record | None]:
    """Each row's record as it finishes (or None on a quiet tick): the engine of this process (engines.Engine).

    `setup.run_row` a coroutine function: rows run as tasks of the loop, at most `setup.concurrency` at once. A plain
    function is for rows that wait for nothing (scripted, replayed, a pipeline's simulation): they run one after
    the other, since running them side by side would only add hand-overs.
    """
    run_row, concurrency = setup.run_row, setup.concurrency
    if not inspect.iscoroutinefunction(run_row):
        for each in rows:
            yield run_row(each)
        return
    loop: HereLoop | RowLoop = RowLoop() if _loop_running_here() else HereLoop()
    in_flight = 0
    exhausted = False
    try:
        while True:
            while not exhausted and in_flight < concurrency:
                row = next(rows, None)
                if row is None:
                    exhausted = True
                    break
                loop.start(run_row(row))
                in_flight += 1
            if in_flight == 0:
                return
            done = loop.next_done(tick)
            if done is None:
                yield None
                continue
            in_flight -= 1
            yield done.result()
    finally:
        loop.close()


def _loop_running_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class HereLoop:
    """An event loop run in the caller's thread, while it waits for a row to finish."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.finished: deque[asyncio.Task[Record]] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def start(self, work: Coroutine[Any, Any, Record]) -> None:
        self.loop.create_task(work).add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[Record]) -> None:
        self.finished.append(task)
        _settle(self._waiter)

    def next_done(self, tick: float) -> Done | None:
        """A row that has ended, running the loop until one has (None after `tick` seconds of none)."""
        if not self.finished:
            self._waiter = waiter = self.loop.create_future()
            timer = self.loop.call_later(tick, _settle, waiter)
            try:
                self.loop.run_until_complete(waiter)
            finally:
                timer.cancel()
                self._waiter = None
        return self.finished.popleft() if self.finished else None

    def close(self) -> None:
        """Cancel the rows still running (the caller stopped early), close the loop's HTTP clients and the loop."""
        self.loop.run_until_complete(_wind_down())
        self.loop.close()


def _settle(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class RowLoop:
    """One event loop in a thread of its own, running rows as tasks (a Ray driver's own rows; `run_local` where
    the caller's thread runs a loop already)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="contractstudio-eval-loop", daemon=True)
        self.thread.start()
        self.finished: queue.SimpleQueue[Future[Record]] = queue.SimpleQueue()

    def submit(self, work: Coroutine[Any, Any, Record]) -> Future[Record]:
        """Run `work` as a task of the loop; its future completes in the loop's thread."""
        return asyncio.run_coroutine_threadsafe(work, self.loop)

    def start(self, work: Coroutine[Any, Any, Record]) -> None:
        self.submit(work).add_done_callback(self.finished.put)

    def next_done(self, tick: float) -> Done | None:
        """A row that has ended, waiting for one at most `tick` seconds."""
        try:
            return self.finished.get(timeout=tick)
        except queue.Empty:
            return None

    def close(self) -> None:
        """Cancel the rows still running, close the loop's HTTP clients, stop the thread."""
        asyncio.run_coroutine_threadsafe(_wind_down(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


async def _wind_down() -> None:
    """Cancel the rows still running (the caller stopped early), then close the loop's HTTP clients."""
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    from contractstudio.runtime.wire import close_loop_clients

    await close_loop_clients()
