"""An agent's oracles (cons_oracle of seed 001): each task's oracle and each policy's check must be realisable.

A human oracle needs an annotator (AGT201), a functional one a code-level
success criterion (AGT202), an LLM judge a judge (AGT203); a hybrid one all
three. Where the document's format cannot say what a check needs
(`doc.unsupported`), AGT501 says it is not checkable instead of guessing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from contractstudio.analysis.loaded_agent import LoadedAgent
from contractstudio.analysis.rules.agent_policies import related
from contractstudio.analysis.rules.registry import rule
from contractstudio.documents.models import Condition, Task
from contractstudio.findings.diagnostics import Diagnostic
from contractstudio.reading.nodes import ScalarNode

# What each oracle (or policy check) needs: annotators, judges, code-level criteria. A hybrid oracle needs all three.
ORACLE_NEEDS = {"human": ("annotators",), "llm_judge": ("judges",), "functional": ("code",),
                "hybrid": ("code", "judges", "annotators")}
CHECK_NEEDS = {"human": ("annotators",), "llm": ("judges",)}
UNCHECKABLE = {"annotators": "whether anyone can annotate {} is not checkable",
               "judges": "whether a judge is available for {} is not checkable",
               "code_criteria": "whether a rule can check the success criteria of {} is not checkable"}


class Unmet(NamedTuple):
    """A need of one task's oracle or one policy's check that the document does not meet."""

    what: str  # 'task' | 'policy'
    name: str
    need: str  # 'annotators' | 'judges' | 'code'
    task: Task | None
    where: tuple[Any, ...]
    how: str  # 'oracle: human', 'check: llm'


def _code_level(criterion: str | Condition) -> bool:
    return isinstance(criterion, Condition) and (criterion.assert_ is not None or criterion.python is not None)


def _unmet(doc: LoadedAgent) -> Iterator[Unmet]:
    agent = doc.agent
    humans = agent.corpus.annotators.get("human", 0)
    items: list[tuple[str, str, tuple[str, ...], Task | None, tuple[Any, ...]]] = [
        ("task", t.id, ORACLE_NEEDS[t.oracle], t, t.src + ("oracle",)) for t in agent.tasks]
    items += [("policy", p.id, CHECK_NEEDS.get(p.check or "", ()), None, p.src + ("check",)) for p in agent.policies]
    for what, name, needs, task, where in items:
        written = doc.node(where)  # quoted as written: a dialect's own word for the oracle
        shown = written.text if isinstance(written, ScalarNode) and written.text else (task.oracle if task else "")
        how = f"oracle: {shown}" if task is not None else "check: " + ("human" if needs == ("annotators",) else "llm")
        for need in needs:
            if ((need == "annotators" and humans < 1) or (need == "judges" and not agent.ensemble.judges)
                    or (need == "code" and task is not None and not any(_code_level(c) for c in task.success_criteria))):
                yield Unmet(what, name, need, task, where, how)


def _not_checkable(doc: LoadedAgent, u: Unmet) -> str | None:
    """The resource the format cannot declare that leaves this need unchecked (AGT501's), or None."""
    if u.need == "code":
        return "code_criteria" if u.task is not None and u.task.success_criteria and "code_criteria" in doc.unsupported else None
    return u.need if u.need in doc.unsupported else None


@rule("AGT201", "human-oracle-without-annotators", "error", kinds=("agent",))
def human_oracle_without_annotators(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """`oracle: human` (or hybrid, or a policy's `check: human`) but the corpus has no human annotator."""
    for u in _unmet(doc):
        if u.need == "annotators" and _not_checkable(doc, u) is None:
            yield doc.diag("AGT201", f"{u.what} '{u.name}' uses {u.how}, but the corpus has no human annotator", u.where,
                           hint="add 'corpus: {annotators: {human: 1}}' or choose another oracle")


@rule("AGT202", "functional-oracle-without-code", "error", kinds=("agent",))
def functional_oracle_without_code(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """`oracle: functional` (or hybrid) but no success criterion is a code-level assert: an error only for
    `functional` with prose criteria (seed 001's fatal case); a warning for a hybrid oracle or no criteria yet."""
    for u in _unmet(doc):
        if u.need != "code" or u.task is None or _not_checkable(doc, u) is not None:
            continue
        # A hybrid oracle still has its judge and its annotators; a task with no criteria yet (AgentAnvil's README
        # and its to_yaml write them so) has nothing wrong written down: neither is the seed's fatal mismatch.
        fatal = u.task.oracle == "functional" and bool(u.task.success_criteria)
        severity = "error" if fatal else "warning"
        if not u.task.success_criteria:
            yield doc.diag("AGT202", f"task '{u.name}' uses {u.how}, but it has no success criteria to check", u.where,
                           hint="add success criteria the oracle can check", severity=severity)
        else:
            yield doc.diag("AGT202", f"task '{u.name}' uses {u.how}, but none of its success criteria is a "
                           "code-level assert", u.where, severity=severity,
                           hint="add a criterion such as '- assert: output.status == ...', or use oracle: llm_judge or human")


@rule("AGT203", "judge-oracle-without-judges", "error", kinds=("agent",))
def judge_oracle_without_judges(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """`oracle: llm_judge` (or hybrid, or a policy's `check: llm`) but the ensemble has no judge."""
    for u in _unmet(doc):
        if u.need == "judges" and _not_checkable(doc, u) is None:
            yield doc.diag("AGT203", f"{u.what} '{u.name}' uses {u.how}, but the ensemble has no judge", u.where,
                           hint="add 'ensemble: {judges: [<model>]}'")


@rule("AGT501", "not-checkable", "info", kinds=("agent",))
def not_checkable(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A check the document's format gives no way to decide (no judges, annotators or model in it): said, not guessed."""
    unknown: dict[str, list[tuple[str, tuple[Any, ...]]]] = {}
    for u in _unmet(doc):
        resource = _not_checkable(doc, u)
        if resource is not None:
            unknown.setdefault(resource, []).append((f"{u.what} '{u.name}'", u.where))
    for need, users in unknown.items():
        names = ", ".join(n for n, _ in users)
        yield doc.diag("AGT501", UNCHECKABLE[need].format(names), users[0][1],
                       hint=f"not checkable: {doc.unsupported[need]}",
                       related=[related(doc, w, f"{n} is not checked either") for n, w in users[1:]])
    limits = doc.agent.constraints
    if doc.agent.backend is None:  # the budget needs a backend to estimate; a format that cannot name one: say so
        set_limits = [k for k in ("max_latency_ms", "max_cost_usd") if getattr(limits, k) is not None]
        if set_limits and "backend" in doc.unsupported:
            yield doc.diag("AGT501", f"whether the tasks fit constraints.{set_limits[0]} is not checkable", ("constraints", set_limits[0]),
                           key=True, hint=f"not checkable: {doc.unsupported['backend']}")
