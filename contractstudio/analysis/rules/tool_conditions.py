"""A tool's conditions (TOL101): the names in a tool's pre- and postconditions are its parameters."""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.expression_findings import unknown_parameter
from contractstudio.analysis.loaded_tools import LoadedTools
from contractstudio.analysis.positions import value_span
from contractstudio.analysis.rules.registry import rule
from contractstudio.findings.diagnostics import Diagnostic, did_you_mean, make


@rule("TOL101", "unknown-parameter", "error", kinds=("tools",))
def unknown_parameter_name(doc: LoadedTools) -> Iterator[Diagnostic]:
    """A tool condition names a parameter the tool does not have."""
    for checked in doc.checked_expressions:
        site = checked.site
        for issue in checked.issues:
            name = unknown_parameter(checked, issue)
            if name is None:
                continue
            message = f"tool '{site.tool}' has no parameter '{name}' (parameters: {', '.join(site.scope) or 'none'})"
            yield make("TOL101", message, doc.file, value_span(doc, site.path, issue.start, issue.end),
                       hint=did_you_mean(name, site.scope) or issue.hint, subject=doc.subject(site.path))
