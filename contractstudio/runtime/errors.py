"""The exceptions of the public API: a file that cannot be run, and a contract that failed loudly."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contractstudio.safe_text import shown_lines

if TYPE_CHECKING:  # pragma: no cover
    from contractstudio.findings.diagnostics import Diagnostic
    from contractstudio.runtime.trace import Trace


class ContractError(Exception):
    """A contract file that cannot be loaded or run; carries the analyzer's diagnostics."""

    def __init__(self, message: str, diagnostics: list[Diagnostic] | None = None, path: str | None = None) -> None:
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])
        self.path = path
        lines = [message]
        for d in self.diagnostics[:20]:
            lines.append(f"  {d.file}:{d.line}:{d.column}: {d.severity} {d.code} {d.message}")
        if len(self.diagnostics) > 20:
            lines.append(f"  ... and {len(self.diagnostics) - 20} more")
        super().__init__(shown_lines(lines))  # a name in the message or a finding never starts a line of its own


class Untrusted(ContractError):
    """Something a file asks for that only a trusted folder may do (contractstudio.trust): refused before it happens."""


class UntrustedHook(Untrusted):
    """A `python:` hook reached in a workspace that is not trusted."""


class UntrustedKeyRoute(Untrusted):
    """A key sent where only the file says: an `api_base` away from loopback, or a variable not the provider's usual one."""


class SchemaUnwritable(ContractError):
    """A type whose JSON Schema pydantic could not write: it nests too deep for the recursion left (issue 32).

    A declared type is bounded at check time (documents/type_nesting.py: MAX_TYPE_NESTING); a Python contract's own models
    are not, so a call made deep in a program can meet this: the call fails with it, never a RecursionError."""


class ContractViolation(Exception):
    """A contract with `on_failure: raise` that failed: every error and the whole trace go with it."""

    def __init__(self, message: str, errors: list[str], trace: Trace | None = None, result: Any = None) -> None:
        self.errors = [_redacted(e) for e in errors]
        self.trace = trace
        self.result = result
        body = "\n".join(f"  {i}. {e}" for i, e in enumerate(self.errors, 1))
        super().__init__(_redacted(f"{message}\n{body}" if body else message))


class InvalidInput(ContractViolation, ValueError):
    """The input of a call is not a valid value of the contract's input type: the caller's error, never a fallback.

    Raised before any model call, unless `remedy.pre: true` asks the model to repair the input and it could not.
    """


class InvalidOutput(ContractViolation, ValueError):
    """The model's replies never became a valid output (not JSON, or not of the output type): seed 004's ValueError."""


class ConditionFailed(ContractViolation, RuntimeError):
    """A `pre` or `post` condition failed and no remedy repaired it: seed 004's RuntimeError for a broken rule."""


class ModelError(Exception):
    """The model could not give a reply: a scripted scenario ran out, a replay diverged, a live call failed for good."""


class ReplayDivergence(ModelError):
    """A request differs from the one recorded in the replayed trace."""


def _redacted(text: str) -> str:
    from contractstudio.runtime.trace import redact

    return redact(text)
