"""The one signature of an eval engine: rows in, each row's record out as it finishes (None on a quiet tick).

    records = engine(rows, EngineSetup(run_row=runner.run, job=job, concurrency=8))

Three engines take it: `local.run_local` (this process), `workers.run_workers` (worker processes of this machine)
and `ray_engine.run_ray` (Ray actors); `evaluate.engine_for` chooses one and calls it, whatever it is. An engine
only turns rows into records: reading, resuming, writing and counting stay in evaluate.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from contractstudio.evaluation.dataset import Row
    from contractstudio.evaluation.rows import EvalJob

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class EngineSetup:
    """What an engine needs to run a job's rows, whichever it is."""

    run_row: Callable[[Row], Any]  # this process's runner: a coroutine function for rows that wait (live), else plain
    job: EvalJob | None  # what a worker process or a Ray actor builds its own runner from; None: a pipeline (local)
    concurrency: int  # rows in flight at once
    workers: int = 1  # worker processes (the workers engine)
    cache_dir: str | None = None  # the reply cache folder (None: the job's, else the default)
    address: str | None = None  # the Ray cluster to join (None: start a local one)
    ray_init: dict[str, Any] = field(default_factory=dict)  # more arguments of ray.init


class Engine(Protocol):
    """An engine: each row's record as it finishes, None on a quiet tick (so the caller can redraw its progress)."""

    def __call__(self, rows: Iterator[Row], setup: EngineSetup) -> Iterator[Record | None]: ...
