"""What `contract_exception` holds after a failed call: the exception SymbolicAI's released decorator leaves there.

SymbolicAI 2.2.0 keeps the original exception: what `pre`, `post` or `act` raised when no remedy ran for it, and
`ValueError("[[Prompt]]...[[Result]]...[[Violations]]...")` when a remedy loop gave up (its type-validation function's
message). Code written for it catches those classes. ContractStudio's own account of the failure (every error, the
trace, seed 004's classes InvalidOutput / ConditionFailed) stays on the instance as `contract_violation`.
"""

from __future__ import annotations

from typing import Any

from contractstudio.runtime.errors import ContractViolation
from contractstudio.runtime.events import ModelReply, ValidationFailure

SEMANTIC = "Semantic validation failed with:"  # SymbolicAI's prefix of a pre/post error in a remedy loop


def semantic(message: str) -> str:
    """A pre / post error as SymbolicAI writes it in its violations: the prefix, a line break, the message."""
    return message if message.startswith(SEMANTIC) else f"{SEMANTIC}\n{message}"


def released_exception(state: Any, plan: Any, violation: ContractViolation) -> BaseException:
    """The exception SymbolicAI would leave in `contract_exception` for this failed call (a runtime CallState)."""
    if plan.act_raised is not None:  # act runs after pre and before the output: when it raised, it failed last
        return plan.act_raised
    where = state.failed_on
    checks = {"pre": plan.pre_checks, "post": plan.post_checks}.get(where or "", [])
    raised = next((c.raised for c in checks if getattr(c, "raised", None) is not None), None)  # monotone_post: no method
    remedied = {"pre": plan.remedy.pre, "post": plan.remedy.post, "type": True}.get(where or "", False)
    if state.no_remedy and raised is not None:
        return raised  # NoRemedy ends the call at once: what the method raised
    if where in ("pre", "post") and not remedied:
        return raised if raised is not None else violation
    if where in ("type", "pre", "post"):
        return ValueError(violations_text(state, plan))
    return violation


def violations_text(state: Any, plan: Any) -> str:
    """`[[Prompt]]`, `[[Result]]` (the last reply) and `[[Violations]]` (every error of the call), as SymbolicAI says them."""
    replies = state.trace.of(ModelReply)
    result = replies[-1].text if replies else ""
    errors: list[str] = []
    for failure in state.trace.of(ValidationFailure):
        errors.extend(semantic(e) if failure.where in ("pre", "post") else e for e in failure.errors)
    return f"[[Prompt]]\n{plan.doc.prompt}\n\n[[Result]]\n{result}\n\n[[Violations]]\n" + "\n".join(errors)
