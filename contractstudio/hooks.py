"""Python hooks named in a file (`package.module:function`): the one resolver the analyzer and the runtime share.

Resolving a hook imports user code, so callers ask only for a trusted folder
(`contractstudio.trust`); this module does not decide trust. A hook is looked up
in the folder of the file that names it: that folder is on `sys.path` only while
the import runs, and before another folder's hook is imported every module loaded
from the folder's own files (the hook's module and whatever it imported, `helper.py`
too) leaves `sys.modules`, and any path into the folder leaves `sys.path`: two
trusted projects may both have a `hooks.py` or a `helper.py`, and neither gets the
other's. A module whose file changed since it was imported is imported afresh (the
studio re-checks and re-runs while hooks are edited).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass
class _Loaded:
    """What the hooks of one folder left in this process: the modules loaded from the folder's own files (never a
    library's), and the paths their imports put on sys.path."""

    modules: set[str] = field(default_factory=set)
    paths: list[str] = field(default_factory=list)


_LOADED_AT: dict[str, float] = {}  # module file -> its mtime when imported
_BY_FOLDER: dict[str, _Loaded] = {}  # hook folder ("" for none) -> what its hooks loaded
_KNOWN: set[str] = set()  # the names in sys.modules when they were last sorted
_LOCK = threading.RLock()


def _import(module_name: str, root: Path | None) -> ModuleType:
    folder = str(root) if root is not None else ""
    with _LOCK:
        _sort_new_modules(None)  # a hook's import at call time, through a path its module added, is its folder's too
        for other in [f for f in _BY_FOLDER if f != folder]:
            _forget(other)  # never hand one project's modules (or paths) to another folder's hook
        loaded = _BY_FOLDER.setdefault(folder, _Loaded())
        path_before = list(sys.path)
        added = root is not None and folder not in sys.path
        if added:
            sys.path.insert(0, folder)
        try:
            return _fresh(importlib.import_module(module_name))
        finally:
            if added:
                try:
                    sys.path.remove(folder)
                except ValueError:
                    pass
            loaded.paths += [p for p in sys.path if p not in path_before and p not in loaded.paths]
            _sort_new_modules(folder)


def _sort_new_modules(importing: str | None) -> None:
    """Note each module loaded since the last look as a hook folder's own when its files lie in the folder being
    imported from, or under a path a folder's hook put on sys.path."""
    global _KNOWN
    names = set(sys.modules)
    homes = {f: _prefixes([f] if f == importing and f else []) + _prefixes(loaded.paths) for f, loaded in _BY_FOLDER.items()}
    for name in names - _KNOWN:
        places = _places(sys.modules.get(name))
        for folder, prefixes in homes.items():
            if prefixes and any(place.startswith(prefixes) for place in places):
                _BY_FOLDER[folder].modules.add(name)
    _KNOWN = names


def _forget(folder: str) -> None:
    """Drop the modules a folder's hooks loaded from sys.modules, and the paths they added from sys.path."""
    global _KNOWN
    loaded = _BY_FOLDER.pop(folder)
    for name in loaded.modules:
        sys.modules.pop(name, None)
    sys.path[:] = [p for p in sys.path if p not in loaded.paths]
    _KNOWN = set(sys.modules)


def _prefixes(folders: list[str]) -> tuple[str, ...]:
    """Each folder with a trailing separator, as written and resolved, for a prefix test of module files."""
    out: set[str] = set()
    for folder in folders:
        if folder and os.path.isabs(folder):
            out |= {folder.rstrip(os.sep) + os.sep, os.path.realpath(folder).rstrip(os.sep) + os.sep}
    return tuple(out)


_LIBRARIES = tuple({p.rstrip(os.sep) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def _places(module: ModuleType | None) -> list[str]:
    """The file and package folders a module was loaded from; none for a library of the interpreter or its venv
    (a project folder may hold its .venv: libraries are shared, never forgotten)."""
    if module is None:
        return []
    places = [getattr(module, "__file__", None) or "", *(getattr(module, "__path__", None) or [])]
    return [p for p in places if isinstance(p, str) and p and not p.startswith(_LIBRARIES)]


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
