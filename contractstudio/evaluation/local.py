"""The local engine (the default): rows run in a bounded pool of threads of this process; no Ray needed.

At most `concurrency` rows are in flight; the next row is read from the dataset
only when one finishes, so a dataset of any size is never held in memory.
Records come back in the order rows finish; `None` is yielded every `tick`
seconds while nothing finishes, so the caller can redraw its progress.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from contractstudio.evaluation.dataset import Row


def run_local(rows: Iterator[Row], run_row: Callable[[Row], dict[str, Any]], concurrency: int, *,
              tick: float = 0.25) -> Iterator[dict[str, Any] | None]:
    """Each row's record as it finishes (or None on a quiet tick)."""
    finished: queue.Queue[Future[dict[str, Any]]] = queue.Queue()
    pool = ThreadPoolExecutor(max_workers=max(concurrency, 1), thread_name_prefix="contractstudio-eval")
    in_flight = 0
    exhausted = False
    try:
        while True:
            while not exhausted and in_flight < concurrency:
                row = next(rows, None)
                if row is None:
                    exhausted = True
                    break
                pool.submit(run_row, row).add_done_callback(finished.put)
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
        pool.shutdown(wait=False, cancel_futures=True)
