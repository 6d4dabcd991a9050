"""Checks shared by contract and tools documents: condition lists, expression issues, Python hooks.

Expression issues carry offsets inside the expression; here they become
diagnostics pointing inside the YAML scalar that holds the expression.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from contractstudio.analysis.check import Context, Loaded
from contractstudio.analysis.positions import value_span
from contractstudio.documents.models import Condition
from contractstudio.documents.types import TypeExpr, TypeSystem
from contractstudio.expressions import ExprIssue, check, check_template
from contractstudio.findings.diagnostics import Diagnostic, Related, Span, did_you_mean, make  # noqa: F401  (did_you_mean re-exported)


def expression_diagnostics(loaded: Loaded, path: tuple[Any, ...], issues: Iterable[ExprIssue], prefix: str = "") -> Iterator[Diagnostic]:
    """Diagnostics for expression issues, positioned inside the expression's scalar."""
    for issue in issues:
        span = value_span(loaded, path, issue.start, issue.end)
        yield make(issue.code, prefix + issue.message, loaded.file, span, hint=issue.hint)


# Rewrites an EXP202 issue (given the unknown name) into a family's own finding, e.g. TOL101.
UnknownName = Callable[[str, ExprIssue], ExprIssue]


def check_expression(loaded: Loaded, path: tuple[Any, ...], src: Any, scope: dict[str, TypeExpr], types: TypeSystem,
                     prefix: str = "", unknown_name: UnknownName | None = None) -> tuple[TypeExpr | None, list[Diagnostic]]:
    """Type-check the expression at path; its type and diagnostics."""
    if not isinstance(src, str):
        src = str(src)
    t, issues = check(src, scope, types)
    if unknown_name is not None:
        issues = [unknown_name(src[i.start:i.end], i) if i.code == "EXP202" else i for i in issues]
    return t, list(expression_diagnostics(loaded, path, issues, prefix))


def condition_list(loaded: Loaded, ctx: Context, path: tuple[Any, ...], conditions: list[Condition],
                   scope: dict[str, TypeExpr], types: TypeSystem, label: str,
                   unknown_name: UnknownName | None = None) -> Iterator[Diagnostic]:
    """REF202 duplicate ids, EXP* of `when`/`assert`, EXP501 of `message`, TOL102/103 of `python`."""
    seen: dict[str, Condition] = {}
    for cond in conditions:
        if cond.id is not None:
            first = seen.get(cond.id)
            if first is not None:
                at = loaded.span(first, "id")
                yield loaded.diag("REF202", f"duplicate condition id '{cond.id}' in {label}", cond, "id",
                                  hint="condition ids must be unique within their list",
                                  related=[Related(loaded.file, at.line, at.column, "first defined here")])
            else:
                seen[cond.id] = cond
        for key, src in (("when", cond.when), ("assert", cond.assert_)):
            if src is not None:
                yield from check_expression(loaded, cond.src + (key,), src, scope, types, unknown_name=unknown_name)[1]
        if cond.message is not None:
            issues = check_template(cond.message, scope, types)
            if unknown_name is not None:  # a placeholder naming an unknown name is the family's own finding too
                issues = [unknown_name(cond.message[i.start:i.end], i) if i.code == "EXP501" and "not in scope" in i.message else i
                          for i in issues]
            yield from expression_diagnostics(loaded, cond.src + ("message",), issues)
        if cond.python is not None:
            yield from hook_diagnostics(loaded, ctx, cond.src + ("python",), cond.python)


# ----------------------------------------------------------------- Python hooks


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


def hook_diagnostics(loaded: Loaded, ctx: Context, path: tuple[Any, ...], spec: Any) -> Iterator[Diagnostic]:
    """TOL102 for a hook that is malformed, or cannot be imported (trusted); TOL103 when untrusted."""
    problem = hook_syntax_problem(spec)
    if problem:
        yield loaded.diag("TOL102", problem, path)
        return
    if not ctx.trusted:
        yield loaded.diag("TOL103", f"Python hook '{spec}' (and any other in this document) runs only in a trusted workspace",
                          path, hint="check with --trust to import and verify the hooks (TOL102)")
        return
    problem = hook_problem(str(spec), ctx.root)
    if problem:
        yield loaded.diag("TOL102", f"Python hook '{spec}': {problem}", path)


def one_trust_note(diagnostics: Iterable[Diagnostic]) -> Iterator[Diagnostic]:
    """Keep only the first TOL103 of a document: one note says the document needs trust."""
    noted = False
    for d in diagnostics:
        if d.code == "TOL103":
            if noted:
                continue
            noted = True
        yield d
