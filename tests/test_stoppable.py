"""Work another thread stops at once (studio/stoppable.py): the studio stops a stale analysis with it. No timing:
each test either sees the stop or a hang guard runs out."""

from __future__ import annotations

import threading
from typing import Any

from contractstudio.studio.stoppable import Stoppable


def test_running_work_is_stopped_from_another_thread_and_its_finally_blocks_run() -> None:
    stoppable = Stoppable()
    started, released = threading.Event(), threading.Lock()
    got: list[Any] = []
    cleaned: list[str] = []

    def spin() -> str:
        with released:  # a lock held by the work: let go on the way out
            try:
                started.set()
                for _ in range(10**10):  # pure Python: only a stop ends it within the hang guard
                    pass
                return "finished"
            finally:
                cleaned.append("finally")

    worker = threading.Thread(target=lambda: got.append(stoppable.run(spin)), daemon=True)
    worker.start()
    assert started.wait(30)
    assert stoppable.stop()
    worker.join(60)
    assert not worker.is_alive()
    assert got == [None] and cleaned == ["finally"] and stoppable.stops == 1
    assert released.acquire(blocking=False)  # the work's lock was let go


def test_a_stop_after_the_work_returned_reaches_nothing() -> None:
    stoppable = Stoppable()
    done, go_on = threading.Event(), threading.Event()
    after: list[str] = []

    def thread() -> None:
        assert stoppable.run(lambda: 42) == 42
        done.set()
        go_on.wait(30)
        for _ in range(200_000):  # bytecode after the run: a stray stop would be raised here
            pass
        after.append("went on")

    worker = threading.Thread(target=thread, daemon=True)
    worker.start()
    assert done.wait(30)
    assert not stoppable.stop()  # nothing runs: nothing is sent
    go_on.set()
    worker.join(30)
    assert after == ["went on"] and stoppable.stops == 0


def test_a_thread_never_stops_its_own_work_and_a_second_stop_is_not_sent() -> None:
    stoppable = Stoppable()
    own: list[bool] = []
    started = threading.Event()

    def work() -> None:
        own.append(stoppable.stop())  # from the working thread itself: no
        started.set()
        for _ in range(10**10):
            pass

    worker = threading.Thread(target=lambda: stoppable.run(work), daemon=True)
    worker.start()
    assert started.wait(30)
    first = stoppable.stop()
    second = stoppable.stop()
    worker.join(60)
    assert own == [False] and first and not second and stoppable.stops == 1


def test_a_stop_inside_a_pause_of_the_collector_leaves_it_collecting() -> None:
    import gc

    from contractstudio.collector import paused_gc

    stoppable = Stoppable()
    started = threading.Event()

    def work() -> None:
        with paused_gc():
            started.set()
            for _ in range(10**10):
                pass

    assert gc.isenabled()
    worker = threading.Thread(target=lambda: stoppable.run(work), daemon=True)
    worker.start()
    assert started.wait(30)
    stoppable.stop()
    worker.join(60)
    assert gc.isenabled()
