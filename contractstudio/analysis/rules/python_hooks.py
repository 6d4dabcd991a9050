"""Python hooks (TOL102, TOL103): a `python:` hook must be written right and, in a trusted workspace, import.

Each kind lists its hooks in the order a run meets them (`doc.hooks`).
"""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded import Loaded
from contractstudio.analysis.rules.registry import rule
from contractstudio.findings.diagnostics import Diagnostic
from contractstudio.hooks import HookError, hook_syntax_problem, resolve_hook


@rule("TOL102", "bad-python-hook", "error", kinds=("contract", "tools"))
def bad_python_hook(doc: Loaded) -> Iterator[Diagnostic]:
    """A `python:` hook that cannot be imported or is not callable (checked in a trusted workspace)."""
    for hook in doc.hooks:
        problem = hook_syntax_problem(hook.spec)
        if problem:
            yield doc.diag("TOL102", problem, hook.path)
        elif doc.ctx.trusted:
            try:
                resolve_hook(str(hook.spec), doc.ctx.root)  # imports user code: only in a trusted workspace
            except HookError as err:
                yield doc.diag("TOL102", f"Python hook '{hook.spec}': {err}", hook.path)


@rule("TOL103", "untrusted-hook", "info", kinds=("contract", "tools"))
def untrusted_hook(doc: Loaded) -> Iterator[Diagnostic]:
    """A `python:` hook that will run only in a trusted workspace (--trust)."""
    if doc.ctx.trusted:
        return
    for hook in doc.hooks:  # one note says the document needs trust: at its first well-written hook
        if hook_syntax_problem(hook.spec) is None:
            yield doc.diag("TOL103", f"Python hook '{hook.spec}' (and any other in this document) runs only in a trusted workspace",
                           hook.path, hint="check with --trust to import and verify the hooks (TOL102)")
            return
