"""What a streaming reply is checked against while it is written (issue 37.2): a condition marked `monotone: true`
that the analyzer cannot show monotone in the output (CON133) is only checked after the reply."""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.monotone import FORMS
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.findings.diagnostics import Diagnostic

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}


@rule("CON133", "not-monotone", "warning", kinds=("contract",))
def not_monotone(doc: LoadedContract) -> Iterator[Diagnostic]:
    """A condition marked `monotone: true` that is not monotone in the output: it is checked after the reply only."""
    c = doc.contract
    for index, cond in enumerate(c.pre):
        if cond.monotone:
            yield doc.diag("CON133", "`monotone: true` on a `pre` condition has no effect: only a `post` condition reads "
                           "the reply as it is written", ("pre", index, "monotone"), key=True,
                           hint="remove `monotone: true` here")
    if not c.output:
        return
    classified = {clause.path: clause for clause in doc.prefix.clauses if clause.keyword == "post"}
    for index, cond in enumerate(c.post):
        found = classified.get(f"post[{index}]")
        if cond.monotone and found is not None and not found.early:
            yield doc.diag("CON133", f"post[{index}] is marked monotone but is not monotone in the output: {found.reason}; "
                           "it is checked after the reply only", ("post", index, "monotone"), key=True,
                           hint=f"write it as one of {', '.join(FORMS)} (joined with `and`), or remove `monotone: true`")
