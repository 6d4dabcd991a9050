"""What a contract's remedy has to work with: pre conditions (CON101), retry settings (CON102), post conditions (CON107),
hard rules in a list that is never remedied anyway (CON111)."""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.findings.diagnostics import Diagnostic

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}


@rule("CON101", "pre-remedy-without-pre", "error", kinds=("contract",))
def pre_remedy_without_pre(doc: LoadedContract) -> Iterator[Diagnostic]:
    """`remedy.pre: true` with no `pre` conditions: nothing to remedy against."""
    if doc.contract.remedy.pre and not doc.contract.pre:
        yield doc.diag("CON101", "remedy.pre is true but there are no `pre` conditions to remedy against",
                       ("remedy", "pre"), hint="add `pre:` conditions or set remedy.pre: false")


@rule("CON102", "retry-cannot-behave", "warning", kinds=("contract",))
def retry_cannot_behave(doc: LoadedContract) -> Iterator[Diagnostic]:
    """Retry parameters that cannot behave as written (delay above max_delay, ...)."""
    remedy = doc.contract.remedy
    retry = remedy.retry
    given = set(retry.model_fields_set)
    if retry.delay > retry.max_delay:
        yield doc.diag("CON102", f"retry.delay {retry.delay:g} is above max_delay {retry.max_delay:g}: every wait is cut to "
                       f"{retry.max_delay:g}s", ("remedy", "retry", "delay" if "delay" in given else "max_delay"),
                       hint="lower delay or raise max_delay")
    if retry.jitter > 1:
        yield doc.diag("CON102", f"retry.jitter {retry.jitter:g} is above 1: a wait of delay*(1+u) with u in "
                       f"[-{retry.jitter:g}, {retry.jitter:g}] can be negative", ("remedy", "retry", "jitter"),
                       hint="jitter is relative: use a value between 0 and 1")
    if retry.backoff > 1 and retry.tries == 1 and "backoff" in given:
        yield doc.diag("CON102", "retry.backoff has no effect with tries: 1 (there is only one wait)",
                       ("remedy", "retry", "backoff"), hint="remove backoff or allow more tries")
    if not remedy.pre and not remedy.post and "retry" in remedy.model_fields_set:
        yield doc.diag("CON102", "retry settings have no effect: both remedy.pre and remedy.post are false",
                       ("remedy", "retry"), key=True, hint="set remedy.post: true or remove retry")


@rule("CON107", "no-post-conditions", "info", kinds=("contract",))
def no_post_conditions(doc: LoadedContract) -> Iterator[Diagnostic]:
    """No `post` conditions: only the shape of the output is checked, not its substance."""
    c = doc.contract
    if not c.post and c.output:
        yield doc.diag("CON107", f"contract '{c.name}' has no post conditions: only the shape of the output is checked",
                       ("output",), hint="add `post:` conditions on the substance of the output")


@rule("CON111", "hard-rule-without-remedy", "warning", kinds=("contract",))
def hard_rule_without_remedy(doc: LoadedContract) -> Iterator[Diagnostic]:
    """`remedy: false` on a condition of a list whose remedy is off: every failure there ends the call already."""
    c = doc.contract
    for stage, conditions, remedied in (("pre", c.pre, c.remedy.pre), ("post", c.post, c.remedy.post)):
        if remedied:
            continue
        for index, cond in enumerate(conditions):
            if "remedy" in cond.model_fields_set and not cond.remedy:
                yield doc.diag("CON111", f"`remedy: false` has no effect here: remedy.{stage} is false, so no `{stage}` "
                               "condition is remedied", (stage, index, "remedy"), key=True,
                               hint=f"remove it, or set remedy.{stage}: true to remedy the other `{stage}` conditions")
