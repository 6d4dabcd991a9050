"""The one reply cache and one rate limiter of a run spread over processes, and how a worker reaches them.

Both multi-process engines keep a single `Hub` (the Ray engine in an actor on
the driver's node, the workers engine in the parent process) and give each
worker's `RowRunner` the proxies below as its `store` and `limits`. A proxy
only needs two functions: `call(method, *args)` that waits for the hub's
answer, and `tell(method, *args)` that does not. So the per-row code is the
local engine's, whatever carries the calls.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PAUSE_POLL_S = 0.25

Call = Callable[..., Any]  # call(method, *args) -> the hub's answer; tell(method, *args) -> None


class Hub:
    """The run's one reply cache and one rate limiter."""

    def __init__(self, cache_dir: str | None, rpm: float | None, tpm: float | None) -> None:
        self.cache: Any = None
        self._opening = threading.Lock()
        self.renew(cache_dir, rpm, tpm)

    def renew(self, cache_dir: str | None, rpm: float | None, tpm: float | None) -> None:
        """Serve a new run: its cache folder and its limits (a warm Ray hub is kept for the next run of a job)."""
        from contractstudio.evaluation.limits import RateLimiter

        self.close()
        # the file is opened when a worker first asks: while a Ray run's actors start, the driver's own rows use
        # it alone (a hub that opened it then, and lost the CPU holding SQLite's lock, stalled them for seconds)
        self.cache_dir = cache_dir
        self.limiter = RateLimiter(rpm, tpm)

    def _store(self) -> Any:
        with self._opening:
            if self.cache is None and self.cache_dir:
                from contractstudio.evaluation.cache import ReplyCache

                self.cache = ReplyCache(Path(self.cache_dir))
            return self.cache

    def get(self, key: str) -> dict[str, Any] | None:
        store = self._store()
        return store.get(key) if store is not None else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        store = self._store()
        if store is not None:
            store.put(key, entry)

    def reserve(self, tokens: int) -> float:
        return self.limiter.reserve(tokens)

    def reserve_at(self, tokens: int) -> float:
        """The reservation as a time of the machine's monotonic clock (shared by its processes, not by a cluster's):
        a worker that gets the answer late still sends at its slot, not a transit delay later."""
        return time.monotonic() + self.limiter.reserve(tokens)

    def settle(self, tokens: int) -> None:
        self.limiter.settle(tokens)

    def cool_down(self, seconds: float) -> None:
        self.limiter.cool_down(seconds)

    def paused_for(self) -> float:
        return self.limiter.paused_for()

    def close(self) -> None:
        """Close the cache file (the parent of the workers engine owns it)."""
        if self.cache is not None:
            self.cache.close()
            self.cache = None


class HubStore:
    """The cache as seen from a worker: calls to the hub."""

    def __init__(self, call: Call, tell: Call) -> None:
        self.call = call
        self.tell = tell

    def get(self, key: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.call("get", key)
        return found

    def put(self, key: str, entry: dict[str, Any]) -> None:
        self.tell("put", key, entry)  # fire and forget: the row need not wait for the write


class HubLimits:
    """The limiter as seen from a worker: calls to the hub.

    With --rpm/--tpm every request books its slot at the hub. Without them only a 429's cool-down is shared:
    a worker on the hub's machine (`same_machine`, the workers engine) is told of each cool-down at once and
    asks nothing per request, and books its slots as times of the shared monotonic clock; otherwise it asks
    the hub how long the run is paused at most every PAUSE_POLL_S seconds (a Ray call costs about a millisecond).
    """

    def __init__(self, call: Call, tell: Call, *, limited: bool, same_machine: bool = False) -> None:
        self.call = call
        self.tell = tell
        self.limited = limited
        self.same_machine = same_machine
        self._paused_until = 0.0
        self._polled = 0.0
        self._lock = threading.Lock()

    def reserve(self, tokens: int) -> float:
        if self.limited and self.same_machine:
            return max(float(self.call("reserve_at", tokens)) - time.monotonic(), 0.0)
        if self.limited:
            return float(self.call("reserve", tokens))
        now = time.monotonic()
        with self._lock:
            if not self.same_machine and now - self._polled >= PAUSE_POLL_S:
                self._polled = now
                self._paused_until = now + float(self.call("paused_for"))
            return max(self._paused_until - now, 0.0)

    def settle(self, tokens: int) -> None:
        if self.limited:
            self.tell("settle", tokens)

    def cool_down(self, seconds: float) -> None:
        self.call("cool_down", seconds)  # before this row retries, every other row must know
        self.pause(seconds)

    def pause(self, seconds: float) -> None:
        """Hold this worker's next requests back for `seconds` (a cool-down the hub announced)."""
        with self._lock:
            self._paused_until = max(self._paused_until, time.monotonic() + seconds)
