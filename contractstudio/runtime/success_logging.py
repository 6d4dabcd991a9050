"""litellm's success logging, run only when someone listens (a callback, a budget): `quiet_success_logging`.

Apart from runtime/live.py, which imports litellm and calls this once it is set up.
"""

from __future__ import annotations

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
        handler = args[0] if args else None
        if getattr(handler, "__name__", "") == "success_handler" and not self.listened():
            return None  # litellm never reads the future of its success logging
        return self.executor.submit(fn, *args, **kwargs)

    def listened(self) -> bool:
        lit = self.litellm
        return bool(lit.success_callback or lit._async_success_callback or lit.callbacks or lit.max_budget)  # noqa: SLF001

    def __getattr__(self, name: str) -> Any:
        return getattr(self.executor, name)


def quiet_success_logging(litellm: Any) -> None:
    """Hand litellm's success logging to its executor only when someone listens (litellm imported and set up)."""
    utils: Any = getattr(litellm, "utils", None)
    executor = getattr(utils, "executor", None)  # where litellm's completion wrapper looks it up on every call
    if executor is not None and not isinstance(executor, _SuccessLoggingWhenListened):
        utils.executor = _SuccessLoggingWhenListened(executor, litellm)
