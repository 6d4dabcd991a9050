"""Work in background threads gives way to the keys: while a key is handled and drawn, a thread that reaches a
checkpoint waits until it is.

A Python thread holds the interpreter until it blocks or its time slice ends, so a worker that analyzes a big file
(or imports the model client) takes about half of every key's time from the screen's thread: in a 5 MB contract
that was behind the slowest keys (bench/bench_typing.py --sample). A shorter time slice (studio/keys.py)
only shortens each hand-over. So the face says when a key arrives (`keys_arrived`, on the thread that handles
keys) and when it has been handled and drawn (`keys_done`); long passes call `give_way()` between their steps
(each document of a file, each piece of a text) and, with `imports_give_way`, each module import does too.

Nothing here knows about keys but these two calls: in a process with no keys (check, eval, the language server)
the way is never closed, and `give_way()` costs one flag test.
"""

from __future__ import annotations

import _imp
import sys
import threading
from collections.abc import Iterator, Sequence
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


def keys_arrived() -> None:
    """A key came (call it on the thread that handles keys): background work waits at its next checkpoint."""
    global _keys_thread
    _keys_thread = threading.get_ident()
    _open.clear()


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
