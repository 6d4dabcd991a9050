"""An agent's budgets (cons_budget of seed 001): each task's calls, latency and cost against `constraints:`.

Estimates come from the backend (analysis/budget.py): a lower bound that no run
can beat (AGT301 when it exceeds a limit) and a typical value (AGT302 at 80% of
a limit); a limit the backend cannot estimate is said to be unchecked (AGT303).
Without a backend the budget is not estimated (seed 001).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from contractstudio.analysis import budget
from contractstudio.analysis.loaded_agent import LoadedAgent
from contractstudio.analysis.rules.agent_policies import related
from contractstudio.analysis.rules.registry import rule
from contractstudio.documents.models import Backend, Task
from contractstudio.findings.diagnostics import Diagnostic, Related

NEAR_LIMIT = 0.8  # a typical estimate at 80% of a limit leaves little room for a slow day


class Budget(NamedTuple):
    """One task against one limit, with the backend's estimate."""

    task: Task
    key: str  # 'max_llm_calls' | 'max_latency_ms' | 'max_cost_usd'
    limit: float
    estimate: budget.Estimate
    unit: str  # how to show a value: '{:g} ms'
    what: str  # 'calls' | 'latency' | 'cost'


def _budgets(doc: LoadedAgent) -> Iterator[Budget]:
    backend, limits = doc.agent.backend, doc.agent.constraints
    if backend is None:
        return
    for task in doc.agent.tasks:
        calls = task.llm_calls
        checks: list[tuple[str, float | None, budget.Estimate | None, str, str]] = [
            ("max_llm_calls", limits.max_llm_calls, budget.Estimate(calls, calls), "{:g} LLM calls", "calls"),
            ("max_latency_ms", limits.max_latency_ms, budget.latency_ms(backend, calls), "{:g} ms", "latency"),
            ("max_cost_usd", limits.max_cost_usd, budget.cost_usd(backend, calls), "${:.6g}", "cost"),
        ]
        for key, limit, est, unit, what in checks:
            if limit is not None and est is not None:
                yield Budget(task, key, limit, est, unit, what)


def _how(what: str, calls: int, backend: object) -> str:
    if what == "calls":
        return "it makes"
    if what == "latency":
        return f"{calls} sequential call(s) take at least"
    return f"{calls} call(s) of {getattr(backend, 'model', '?')} cost at least"


def _at_task(doc: LoadedAgent, b: Budget, code: str, message: str) -> Diagnostic:
    where = ("llm_calls",) if "llm_calls" in b.task.model_fields_set else ("id",)
    rel: list[Related] = [related(doc, ("constraints", b.key), f"constraints.{b.key}: {b.limit:g}")]
    return doc.diag(code, message, b.task, *where, related=rel,
                    hint="raise the constraint, use fewer sequential calls, or a faster / cheaper backend")


@rule("AGT301", "budget-exceeded", "error", kinds=("agent",))
def budget_exceeded(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A budget that is certainly exceeded (latency, call count or minimum cost)."""
    for b in _budgets(doc):
        if b.estimate.minimum > b.limit:
            yield _at_task(doc, b, "AGT301", f"task '{b.task.id}' certainly exceeds constraints.{b.key} {b.unit.format(b.limit)}: "
                           f"{_how(b.what, b.task.llm_calls, doc.agent.backend)} {b.unit.format(b.estimate.minimum)}")


@rule("AGT302", "budget-near-limit", "warning", kinds=("agent",))
def budget_near_limit(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A budget whose typical estimate is at least 80% of its limit."""
    for b in _budgets(doc):
        if b.estimate.minimum <= b.limit and b.estimate.typical >= NEAR_LIMIT * b.limit:
            share = b.estimate.typical / b.limit
            tail = "above the limit on a typical run" if share > 1 else "little room left"
            yield _at_task(doc, b, "AGT302", f"task '{b.task.id}' typically needs {b.unit.format(b.estimate.typical)} of "
                           f"constraints.{b.key} {b.unit.format(b.limit)} ({share:.0%}): {tail}")


@rule("AGT303", "budget-not-checked", "info", kinds=("agent",))
def budget_not_checked(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A budget the backend cannot estimate (a model with no known price, no tokens or latency per call): not checked."""
    backend: Backend | None = doc.agent.backend
    limits = doc.agent.constraints
    if backend is None:
        return
    if limits.max_latency_ms is not None and backend.latency_ms_per_call is None:
        yield doc.diag("AGT303", "constraints.max_latency_ms is not checked: the backend has no latency_ms_per_call",
                       ("constraints", "max_latency_ms"), hint="add backend.latency_ms_per_call: {min: ..., typical: ...}")
    if limits.max_cost_usd is None or backend.cost_per_call_usd is not None:
        return
    if backend.tokens_per_call is None:
        yield doc.diag("AGT303", "constraints.max_cost_usd is not checked: the backend has no tokens_per_call",
                       ("constraints", "max_cost_usd"),
                       hint="add backend.tokens_per_call: {prompt: ..., completion: ...}, or backend.cost_per_call_usd")
    elif budget.price_of(backend.model) is None:
        yield doc.diag("AGT303", f"constraints.max_cost_usd is not checked: no price is known for model '{backend.model}' "
                       "(it is not in litellm's bundled price table)", ("constraints", "max_cost_usd"),
                       hint="set backend.cost_per_call_usd to the model's price per call",
                       related=[related(doc, ("backend", "model"), f"model '{backend.model}'")])
