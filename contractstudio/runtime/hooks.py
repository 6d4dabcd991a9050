"""Python hooks named in a file (`module:function`): imported only in a trusted workspace."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contractstudio.runtime.errors import ContractError, UntrustedHook


def load_hook(spec: str, root: Path | None, trusted: bool, where: str) -> Callable[..., Any]:
    """Import a `module:function` hook, only in a trusted workspace."""
    if not trusted:
        raise UntrustedHook(
            f"{where} names the Python hook '{spec}'; Python hooks run only in a trusted workspace "
            "(pass --trust on the command line, or trust=True to cs.load)"
        )
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ContractError(f"{where}: a Python hook is written 'package.module:function', got '{spec}'")
    if root is not None and str(root) not in sys.path:
        sys.path.insert(0, str(root))  # hooks live next to the contract file
    try:
        module = importlib.import_module(module_name)
        fn = module
        for part in attr.split("."):
            fn = getattr(fn, part)
    except Exception as err:  # noqa: BLE001 - any import failure is the author's to fix, with a clear message
        raise ContractError(f"{where}: cannot import the Python hook '{spec}': {type(err).__name__}: {err}") from None
    if not callable(fn):
        raise ContractError(f"{where}: the Python hook '{spec}' is not callable")
    return fn


def hook_outcome(result: Any) -> tuple[bool, str | None]:
    """A hook's return value as (passed, why): True/None pass, False or (False, why) fail."""
    if result is None or result is True:
        return True, None
    if isinstance(result, tuple) and result:
        ok = bool(result[0])
        why = str(result[1]) if len(result) > 1 and result[1] not in (None, "") else None
        return ok, why
    return bool(result), None
