"""The cyclic garbage collector around readings and analyses: paused while they run, and, in a long-lived process
that asks for it (the studio), what they built kept out of its passes afterwards.

Reading and analysis build ~10^5 small objects with no cycles per megabyte. CPython's collector would rescan them
over and over while they are built (a third of the time on big files, superlinear in the size), so `paused_gc`
pauses it. But the pause is process-wide: everything allocated meanwhile, in every thread, is young when it
ends, and the next allocation anywhere (often a key's, on the screen's thread) collected it all at once, and again
as it aged: 0.4 to 0.8 s each on a 5 MB contract (bench/bench_typing.py). With `keep_readings()`, the end of a
pause freezes the heap instead (`gc.freeze`): the collector's passes skip it, and objects freed by reference
count are still freed. What the freeze cannot free is a cycle that becomes garbage after it (a closed screen's
widgets): `sweep()` gives the frozen heap back, collects it once, and freezes it again; the studio sweeps when
its keys have been quiet a while.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_keep = False  # keep_readings(): freeze the heap at the end of a pause
freezes = 0  # how often the heap was frozen so far (a count, unlike gc.get_freeze_count(), costs nothing to read)


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic GC paused for a block, then resumed as it was (nests); under keep_readings() the heap is frozen first."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _keep:
                _freeze()
            gc.enable()


def keep_readings() -> None:
    """From now on, what a reading or an analysis built stays out of the collector's passes (call `sweep` now and then)."""
    global _keep
    _keep = True


def _freeze() -> None:
    global freezes
    gc.freeze()
    freezes += 1


def frozen() -> int:
    """How many objects the collector's passes skip (a walk of them all: not for every second)."""
    return gc.get_freeze_count()


def sweep() -> float:
    """Collect the whole heap once (the frozen part too) and freeze what is left; the seconds it took."""
    started = time.perf_counter()
    gc.unfreeze()
    gc.collect()
    if _keep:
        _freeze()
    return time.perf_counter() - started


# Items freed per step of `let_go`: about half a millisecond of the interpreter for a text's rows.
_LET_GO_PIECE = 8192


def let_go(items: tuple[Any, ...] | list[Any]) -> None:
    """Free a big tuple's or list's items a piece at a time; pass the last reference to it (a cache's evicted entry).

    Freed at once, the 200,000 rows of a 5 MB text hold the interpreter 10-15 ms in one call in C, while the studio's
    screen waits to draw a key (bench/bench_analysis_holds.py); between two pieces another thread gets its turn."""
    kept = list(items)
    del items  # the last reference: the tuple goes, and its items, still in `kept`, are not freed yet
    while kept:
        del kept[-_LET_GO_PIECE:]
