"""The local engine (the default): rows run as tasks of one event loop in this process; no Ray needed.

At most `concurrency` rows are in flight; the next row is read from the dataset
only when one finishes, so a dataset of any size is never held in memory.
Records come back in the order rows finish; `None` is yielded every `tick`
seconds while nothing finishes, so the caller can redraw its progress.

The loop runs in a thread of its own and only runs rows: the caller's thread
reads and chooses the rows (a `--sample` reads the whole file first) and writes
the records, so neither waits for the other. A live row awaits its model
(`RowRunner.arun`: litellm.acompletion), so 32 calls in flight cost 32 tasks, not
32 threads taking turns at the GIL. Rows that wait for nothing (scripted,
replayed, a pipeline's simulation) run one after the other in the caller's thread.
"""

from __future__ import annotations

import asyncio
import inspect
import queue
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future
from typing import Any

from contractstudio.evaluation.dataset import Row

Record = dict[str, Any]


def run_local(rows: Iterator[Row], run_row: Callable[[Row], Any], concurrency: int, *,
              tick: float = 0.25) -> Iterator[Record | None]:
    """Each row's record as it finishes (or None on a quiet tick).

    `run_row` a coroutine function: rows run as tasks of the loop. A plain function is for rows that wait for
    nothing (scripted, replayed, a pipeline's simulation): they run one after the other in this thread, since
    running them side by side would only add hand-overs between threads.
    """
    if not inspect.iscoroutinefunction(run_row):
        for each in rows:
            yield run_row(each)
        return
    finished: queue.SimpleQueue[Future[Record]] = queue.SimpleQueue()

    async def one(row: Row) -> Record:
        return await run_row(row)

    loop = RowLoop()
    in_flight = 0
    exhausted = False
    try:
        while True:
            while not exhausted and in_flight < concurrency:
                row = next(rows, None)
                if row is None:
                    exhausted = True
                    break
                loop.submit(one(row)).add_done_callback(finished.put)
                in_flight += 1
            if in_flight == 0:
                return
            try:
                future = finished.get(timeout=tick)
            except queue.Empty:
                yield None
                continue
            in_flight -= 1
            yield future.result()
    finally:
        loop.close()


class RowLoop:
    """One event loop in a thread of its own, running rows as tasks (the local engine's, and a Ray driver's own rows)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="contractstudio-eval-loop", daemon=True)
        self.thread.start()

    def submit(self, work: Coroutine[Any, Any, Record]) -> Future[Record]:
        """Run `work` as a task of the loop; its future completes in the loop's thread."""
        return asyncio.run_coroutine_threadsafe(work, self.loop)

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
