"""Work in a thread that another thread can stop at once: the studio's analysis, stopped when a key makes it stale.

A Python thread cannot be stopped from outside, and an analyzer with checkpoints for the studio's keys (a global
flag asked between documents, rules and pieces of text) ties its bottom layers to the studio's scheduling while
still holding the interpreter for a whole rule between two checkpoints (seconds in a 5 MB one-document file). So
the studio stops a stale analysis the way Ctrl+C stops a program: `Stoppable.stop()` asks the interpreter to raise
`Stopped` in the thread running `run()` at its next instruction (`PyThreadState_SetAsyncExc`, Python's C API for
exactly this). The analyzer needs no checkpoint: it keeps what it finished (a reading, each `---` document's
analysis) in single assignments, so a stop anywhere loses only the work in progress (analysis/incremental.py).

The exception never reaches code outside `run()`: one stop per run is sent, only while the work runs, and one sent
but not yet raised when the work returns is withdrawn (the thread goes back to Textual's pool clean).
"""

from __future__ import annotations

import ctypes
import gc
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_set_async_exc.argtypes = [ctypes.c_ulong, ctypes.py_object]
_set_async_exc.restype = ctypes.c_int


class Stopped(BaseException):  # like KeyboardInterrupt: not an Exception, so no `except Exception` keeps it
    """Raised in a thread whose work was stopped (never seen outside Stoppable.run)."""


class Stoppable:
    """One piece of work at a time, run in some thread, that another thread can stop (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: int | None = None  # the thread inside run() now
        self._sent = False  # a stop was sent to it
        self.stops = 0  # how many runs were stopped (tests count them)

    def run(self, work: Callable[[], T]) -> T | None:
        """`work()`, or None when it was stopped. Call it in the thread that should do the work."""
        me = threading.get_ident()
        collecting = gc.isenabled()
        try:
            try:
                with self._lock:
                    self._thread, self._sent = me, False
                return work()
            finally:
                with self._lock:
                    self._thread = None
                    if self._sent:  # sent, not raised yet: withdrawn (the NULL exception clears a pending one)
                        self._sent = False
                        _set_async_exc(me, ctypes.py_object())
        except Stopped:
            with self._lock:
                if self._thread in (me, None):
                    self._thread, self._sent = None, False
                self.stops += 1
            if collecting and not gc.isenabled():
                gc.enable()  # stopped inside a pause of the collector (contractstudio/collector.py), before it resumed
            return None

    def stop(self) -> bool:
        """Stop the work running now, if any (from any other thread); whether a stop was sent."""
        with self._lock:
            if self._thread is None or self._sent or self._thread == threading.get_ident():
                return False
            self._sent = _set_async_exc(self._thread, ctypes.py_object(Stopped)) == 1
            return self._sent

    @property
    def running(self) -> bool:
        return self._thread is not None
