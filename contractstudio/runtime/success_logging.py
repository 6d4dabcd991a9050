"""litellm's success logging, run only when someone listens (a callback, a budget): `quiet_success_logging`.

Both halves: the synchronous handler litellm hands its thread pool after every call, and the asynchronous one it
queues on its logging worker after every awaited call (eval's).

Apart from runtime/live.py, which imports litellm and calls this once it is set up.
"""

from __future__ import annotations

import os
from typing import Any


class _SuccessLoggingWhenListened:
    """litellm's executor for its success logging, which it hands every completed call; run only when someone listens.

    Without a callback (none is set by default, and contractstudio sets none), litellm's `success_handler` still
    builds a standard logging payload and computes the cost a second time, on a background thread that competes
    for the GIL with the caller: about a tenth of a live call's CPU, and what slowed the engine's own work right
    after each reply. Callbacks set at any time (litellm.success_callback, litellm.callbacks, a budget) are seen
    at the next call; everything else submitted here passes through unchanged.
    """

    def __init__(self, executor: Any, litellm: Any) -> None:
        self.executor = executor
        self.litellm = litellm

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        # the completion wrapper hands a runner and the handler; a stream's reader hands the handler itself
        handler = args[0] if args and callable(args[0]) else fn
        if getattr(handler, "__name__", "") in _LOGGING and not self.listened():
            return None  # litellm never reads the future of its success logging
        return self.executor.submit(fn, *args, **kwargs)

    def listened(self) -> bool:
        return listened(self.litellm)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.executor, name)


# What litellm hands its pool to log a call: a whole reply's handler, a stream's per-chunk logging (which it also
# skips itself under `disable_streaming_logging`) and the handler a finished stream hands on its own.
_LOGGING = frozenset({"success_handler", "run_success_logging_and_cache_storage"})


def listened(lit: Any) -> bool:
    """Whether anything reads litellm's success logging: a callback, a budget, or its payload printed (an env var).
    A streamed call's per-chunk logging is turned off otherwise."""
    return bool(_callbacks(lit.success_callback, lit) or _callbacks(lit._async_success_callback, lit)  # noqa: SLF001
                or lit.callbacks or lit.max_budget or os.environ.get("LITELLM_PRINT_STANDARD_LOGGING_PAYLOAD"))


def _callbacks(names: list[Any], lit: Any) -> list[Any]:
    """The callbacks that do something: litellm's own "cache" entry only while a cache is set (importing its Vertex
    context caching, as any Gemini call does, adds the entry for good without setting `litellm.cache`)."""
    return [c for c in names if c != "cache" or lit.cache is not None]


class _AsyncSuccessLoggingWhenListened:
    """litellm's logging worker's `ensure_initialized_and_enqueue`, which gets an `async_success_handler` coroutine
    after every awaited call: with nobody listening, it only builds a logging payload (a few percent of a live eval
    row's CPU, two tasks of the loop), and a run's last ones were dropped unawaited when its loop ended ("coroutine
    'Logging.async_success_handler' was never awaited"). Closed unstarted here instead; anything else passes on."""

    def __init__(self, enqueue: Any, litellm: Any) -> None:
        self.enqueue = enqueue
        self.litellm = litellm

    def __call__(self, async_coroutine: Any) -> None:
        if getattr(async_coroutine, "__qualname__", "") == "Logging.async_success_handler" and not listened(self.litellm):
            async_coroutine.close()
            return
        self.enqueue(async_coroutine)


def quiet_success_logging(litellm: Any) -> None:
    """Hand litellm's success logging to its executor only when someone listens (litellm imported and set up)."""
    holders: list[Any] = [getattr(litellm, "utils", None)]
    try:
        from litellm.litellm_core_utils import streaming_handler

        holders.append(streaming_handler)
    except ImportError:  # a litellm without its stream reader there: whole replies only
        pass
    # where litellm's completion wrapper and its stream reader look their executor up on every call
    for holder in holders:
        executor = getattr(holder, "executor", None)
        if executor is not None and not isinstance(executor, _SuccessLoggingWhenListened):
            holder.executor = _SuccessLoggingWhenListened(executor, litellm)
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER as worker
    except ImportError:  # a litellm without its logging worker queues nothing to skip
        return
    enqueue = getattr(worker, "ensure_initialized_and_enqueue", None)
    if enqueue is not None and not isinstance(enqueue, _AsyncSuccessLoggingWhenListened):
        worker.ensure_initialized_and_enqueue = _AsyncSuccessLoggingWhenListened(enqueue, litellm)  # type: ignore[method-assign]
