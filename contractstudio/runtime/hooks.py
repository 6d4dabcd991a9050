"""Python hooks at run time: resolved by `contractstudio.hooks`, only in a trusted workspace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from contractstudio.hooks import HookError, hook_outcome, resolve_hook
from contractstudio.runtime.errors import ContractError, UntrustedHook

__all__ = ["hook_outcome", "load_hook"]


def load_hook(spec: str, root: Path | None, trusted: bool, where: str) -> Callable[..., Any]:
    """Import a `module:function` hook, only in a trusted workspace; a hook that cannot be resolved is a ContractError."""
    if not trusted:
        raise UntrustedHook(
            f"{where} names the Python hook '{spec}'; Python hooks run only in a trusted workspace "
            "(pass --trust on the command line, or trust=True to cs.load)"
        )
    try:
        return resolve_hook(spec, root)
    except HookError as err:
        raise ContractError(f"{where}: the Python hook '{spec}': {err}") from None
