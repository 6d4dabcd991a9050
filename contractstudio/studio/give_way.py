"""The model client's import gives way to the keys: while a key is handled and drawn, each module a background thread
imports waits until it is.

A Python thread holds the interpreter until it blocks or its time slice ends, so a worker importing the model
client (hundreds of modules, seconds) takes about half of every key's time from the screen's thread. So the studio
says when a key arrives (`keys_arrived`, on the thread that handles keys) and when it has been handled and drawn
(`keys_done`); with `imports_give_way`, each module import waits at `give_way()` meanwhile.

An analysis has no such checkpoint: the analyzer knows nothing of the studio's keys, and the studio stops a stale
analysis at once instead (studio/stoppable.py). In a process with no keys the way is never closed.
"""

from __future__ import annotations

import _imp
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

# A key is handled and drawn within a frame or two. No wait outlasts this: should the thread that handles keys ever
# wait for a lock a waiting worker holds, it is held up this long at most, never for good.
MAX_WAIT_S = 0.25

_open = threading.Event()
_open.set()
_keys_thread: int | None = None  # the thread that handles keys: it never waits for itself


_on_key: list[Callable[[], None]] = []  # called as each key arrives (the edit screen stops its running analysis)


def keys_arrived() -> None:
    """A key came (call it on the thread that handles keys): background work waits at its next checkpoint."""
    global _keys_thread
    _keys_thread = threading.get_ident()
    _open.clear()
    for then in list(_on_key):
        then()


def on_each_key(then: Callable[[], None]) -> Callable[[], None]:
    """Call `then` as each key arrives, before it is handled (on the thread that handles keys); returns the undoing."""
    _on_key.append(then)
    return lambda: _on_key.remove(then) if then in _on_key else None


def keys_done() -> None:
    """Every key so far is handled and drawn: background work goes on."""
    _open.set()


def way_open() -> bool:
    """Whether background work runs on (no key is being handled)."""
    return _open.is_set()


def _waits() -> bool:
    """Whether a checkpoint here waits: a key is being handled, on another thread than this one."""
    return not _open.is_set() and threading.get_ident() != _keys_thread


def give_way() -> None:
    """A checkpoint of background work: while a key is handled, wait until it is drawn (at most MAX_WAIT_S)."""
    if _waits():
        _open.wait(MAX_WAIT_S)


class _ImportsGiveWay(MetaPathFinder):
    """First on sys.meta_path: each import asks here first, gives way, and is then found as ever (by the others)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if not _waits():
            return None
        # The import system asks each finder holding its one global lock: waiting with it held would stop the
        # screen's own first import of any module (while it handles the key) until the wait ends. So the lock is
        # let go for the wait and taken back before the import goes on (tests/test_give_way.py).
        try:
            _imp.release_lock()
        except RuntimeError:  # not held here (an import system that asks finders without it): nothing to let go
            give_way()
            return None
        try:
            give_way()
        finally:
            _imp.acquire_lock()
        return None


@contextmanager
def imports_give_way() -> Iterator[None]:
    """While inside, every module a background thread imports waits for the keys first (a big import, such as the
    model client's, is hundreds of modules: it then runs between keys, not beside them)."""
    finder = _ImportsGiveWay()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        keys_done()  # nobody will say the keys are done any more: nothing waits for them
