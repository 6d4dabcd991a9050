"""Python hooks named in a file (`package.module:function`): the one resolver the analyzer and the runtime share.

Resolving a hook imports user code, so callers ask only for a trusted folder
(`contractstudio.trust`); this module does not decide trust. A hook is looked up
in the folder of the file that names it: that folder is on `sys.path` only while
the import runs, a module of the same name imported earlier from another folder
is not reused (two trusted projects may both have a `hooks.py`), and a module whose
file changed since it was imported is imported afresh (the studio re-checks and
re-runs while hooks are edited).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from contractstudio.findings.diagnostics import did_you_mean


class HookError(Exception):
    """A hook that cannot be resolved; `str(err)` says why, in words for the author."""


def hook_syntax_problem(spec: Any) -> str | None:
    """Why a hook reference is not written 'package.module:function', or None."""
    if not isinstance(spec, str):
        return "a Python hook is written 'package.module:function'"
    module_name, colon, attr = spec.partition(":")
    parts = module_name.split(".") + attr.split(".")
    if not colon or not all(p.isidentifier() for p in parts):
        return f"a Python hook is written 'package.module:function', not '{spec}'"
    return None


def resolve_hook(spec: str, root: Path | None) -> Callable[..., Any]:
    """The callable a hook names, imported from `root` (the file's folder); raises HookError. Runs user code."""
    problem = hook_syntax_problem(spec)
    if problem:
        raise HookError(problem)
    module_name, _, attr = spec.partition(":")
    try:
        module = _import(module_name, root)
    except HookError:
        raise
    except Exception as err:  # noqa: BLE001 - any failure to import is the author's to fix
        raise HookError(f"cannot import module '{module_name}': {type(err).__name__}: {err}") from None
    target: Any = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = [n for n in dir(target) if not n.startswith("_")]
            near = did_you_mean(part, names)
            raise HookError(f"module '{module_name}' has no attribute '{part}'" + (f" ({near})" if near else ""))
        target = getattr(target, part)
    if not callable(target):
        raise HookError(f"'{spec}' is not callable")
    return target


def hook_outcome(result: Any) -> tuple[bool, str | None]:
    """A hook's return value as (passed, why): True/None pass, False or (False, why) fail."""
    if result is None or result is True:
        return True, None
    if isinstance(result, tuple) and result:
        ok = bool(result[0])
        why = str(result[1]) if len(result) > 1 and result[1] not in (None, "") else None
        return ok, why
    return bool(result), None


_LOADED_AT: dict[str, float] = {}  # module file -> its mtime when imported
_FOLDER_OF: dict[str, str] = {}  # top-level module name -> the folder a hook imported it from


def _import(module_name: str, root: Path | None) -> ModuleType:
    top = module_name.split(".")[0]
    folder = str(root) if root is not None else ""
    if top in sys.modules and _FOLDER_OF.get(top, folder) != folder:
        _forget(top)  # the same name imported for another folder's hook: never hand one project's hook to another
    added = root is not None and folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        module = _fresh(importlib.import_module(module_name))
    finally:
        if added:
            try:
                sys.path.remove(folder)
            except ValueError:
                pass
    if root is not None and _inside(module, root):
        _FOLDER_OF[top] = folder  # a module of the folder's own (libraries on sys.path are shared, never forgotten)
    return module


def _inside(module: ModuleType, root: Path) -> bool:
    where = getattr(module, "__file__", None)
    if not where:
        return False
    try:
        return Path(where).resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _forget(top: str) -> None:
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


def _fresh(module: ModuleType) -> ModuleType:
    """The module, re-imported when its file changed since it was imported."""
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
