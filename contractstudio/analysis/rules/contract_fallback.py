"""A contract's fallback (CON103): with `on_failure: fallback`, it must produce a valid output.

Checked statically: every value is an expression over `input` (the expression
checker reports their EXP findings); literal-only values are evaluated with the
real evaluator and validated against the output type, as a failed call would.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contractstudio.analysis.expression_findings import words_not_code
from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.expressions import ExpressionError, compile_expression
from contractstudio.findings.diagnostics import Diagnostic, Payload, did_you_mean

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}


@rule("CON103", "invalid-fallback", "error", kinds=("contract",))
def invalid_fallback(doc: LoadedContract) -> Iterator[Diagnostic]:
    """A `fallback` that does not produce a valid `output`."""
    c = doc.contract
    if c.on_failure != "fallback":
        return
    if c.fallback is None:
        where = ("on_failure",) if "on_failure" in c.model_fields_set else ("output",)
        yield doc.diag("CON103", "on_failure is 'fallback' but there is no `fallback` output", where,
                       hint="add `fallback:` with a value for each output field, or set on_failure: raise",
                       payload=Payload(key="fallback"))
        return
    out = doc.output_type
    fields = doc.types.fields(out) if out else None
    literal: dict[str, Any] = {}
    for name, raw in c.fallback.items():
        path = ("fallback", name)
        if fields is not None and name not in fields:
            yield doc.diag("CON103", f"fallback names '{name}', which is not a field of {out}", path, key=True,
                           hint=did_you_mean(name, fields) or f"fields: {', '.join(fields)}")
            continue
        checked = doc.checked_at[path]
        if words_not_code(checked):
            yield doc.diag("CON103", f"fallback.{name} is an expression, and this plain text is not one", path,
                           hint=f"quote the text inside the YAML string: \"'{str(raw).strip()}'\"")
            continue
        if checked.issues:  # the expression checker's findings
            continue
        try:
            expr = compile_expression(checked.site.src)
        except ExpressionError:
            continue
        if not expr.names:  # literal-only: evaluate it with the real evaluator
            try:
                literal[name] = expr.evaluate({})
            except ExpressionError as err:
                yield doc.diag("CON103", f"fallback.{name} cannot be evaluated: {err}", path)
    if fields is None or out is None:
        return
    missing = [f for f, spec in fields.items() if spec.required and f not in c.fallback]
    if missing:
        yield doc.diag("CON103", f"fallback misses required field{'s' if len(missing) > 1 else ''} of {out}: {', '.join(missing)}",
                       ("fallback",), key=True, hint="give every required output field a value", payload=Payload(fields=tuple(missing)))
    yield from _validate_literals(doc, out, literal)


def _validate_literals(doc: LoadedContract, out: str, literal: dict[str, Any]) -> Iterator[Diagnostic]:
    from pydantic import ValidationError

    try:
        model = doc.types.model(out)
    except Exception:  # noqa: BLE001 - a type pydantic cannot build is reported elsewhere
        return
    try:
        model.model_validate(literal)
        return
    except ValidationError as err:
        errors = err.errors()
    for e in errors:
        loc = e.get("loc") or ()
        if not loc or loc[0] not in literal or e.get("type") == "missing":
            continue  # fields given as non-literal expressions or reported as missing above
        where = ".".join(str(p) for p in loc)
        yield doc.diag("CON103", f"fallback.{where}: {e.get('msg', 'invalid')} (got {literal[loc[0]]!r:.60})",
                       ("fallback", loc[0]))
