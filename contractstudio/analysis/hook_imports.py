"""Python hooks named in a document ('package.module:function'): written right, importable, callable.

Importing a hook runs user code, so `hook_problem` is only called in a trusted
workspace; a hook module edited while the studio re-checks is imported afresh.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from contractstudio.findings.diagnostics import did_you_mean


def hook_problem(spec: str, root: Path | None) -> str | None:
    """Why a 'module:function' hook cannot be imported or called, or None. Imports user code: trusted only."""
    module_name, _, attr = spec.partition(":")
    added = False
    if root is not None and str(root) not in sys.path:
        sys.path.insert(0, str(root))
        added = True
    try:
        try:
            module = _fresh(importlib.import_module(module_name))
        except Exception as err:  # noqa: BLE001 - any failure to import is the author's to fix
            return f"cannot import module '{module_name}': {type(err).__name__}: {err}"
        target: Any = module
        for part in attr.split("."):
            if not hasattr(target, part):
                names = [n for n in dir(target) if not n.startswith("_")]
                near = did_you_mean(part, names)
                return f"module '{module_name}' has no attribute '{part}'" + (f" ({near})" if near else "")
            target = getattr(target, part)
        if not callable(target):
            return f"'{spec}' is not callable"
        return None
    finally:
        if added:
            try:
                sys.path.remove(str(root))
            except ValueError:
                pass


_LOADED_AT: dict[str, float] = {}  # module file -> mtime when imported


def _fresh(module: Any) -> Any:
    """The module, re-imported when its file changed since (the studio re-checks while hooks are edited)."""
    path = getattr(module, "__file__", None)
    if not path:
        return module
    try:
        mtime = Path(path).stat().st_mtime
    except OSError:
        return module
    seen = _LOADED_AT.setdefault(path, mtime)
    if seen != mtime:
        _LOADED_AT[path] = mtime
        return importlib.reload(module)
    return module


def hook_syntax_problem(spec: Any) -> str | None:
    """Why a hook reference is not written 'package.module:function', or None."""
    if not isinstance(spec, str):
        return "a Python hook is written 'package.module:function'"
    module_name, colon, attr = spec.partition(":")
    parts = module_name.split(".") + attr.split(".")
    if not colon or not all(p.isidentifier() for p in parts):
        return f"a Python hook is written 'package.module:function', not '{spec}'"
    return None
