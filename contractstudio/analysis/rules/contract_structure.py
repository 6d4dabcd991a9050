"""Who enforces the output type's clauses for the contract's model (CON131, CON132): the decoder, or a check after
the reply that a remedy may have to satisfy, or nothing at all because the schema cannot be sent.

Fields whose every clause the decoder enforces stay silent (hover shows them); a field with a clause the provider
cannot enforce while decoding gets one info finding that names all of its clauses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.analysis.structure import FieldKey, describe
from contractstudio.findings.diagnostics import Diagnostic

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}


def _where(doc: LoadedContract, key: FieldKey) -> tuple[Any, ...]:
    type_name, field = key
    if type_name is not None and field is not None and type_name in doc.contract.types:
        return ("types", type_name, "fields", field)
    return ("output",)


def _label(key: FieldKey) -> str:
    return f"field '{key[0]}.{key[1]}'" if key[1] is not None else "the output"


@rule("CON131", "checked-after-reply", "info", kinds=("contract",))
def checked_after_reply(doc: LoadedContract) -> Iterator[Diagnostic]:
    """An output field has a clause the model's decoder cannot enforce: it is checked after the reply (a remedy may be needed)."""
    found = doc.structure
    if found is None or found.falls_back or found.compiled.mode != "json_schema":
        # No schema is sent (CON132 says why, or the model has JSON mode at most, or structured output is off):
        # every clause is checked after the reply, as without structured outputs; hover says so, a finding per
        # field would only repeat it.
        return
    for key, clauses in found.by_field.items():
        if any(c.enforcement == "after_reply" for c in clauses):
            yield doc.diag("CON131", f"{_label(key)} with {found.model}: {describe(clauses)}", _where(doc, key), key=True,
                           hint="a value breaking it costs a remedy; the post conditions stay checked after the reply")


@rule("CON132", "schema-not-representable", "info", kinds=("contract",))
def schema_not_representable(doc: LoadedContract) -> Iterator[Diagnostic]:
    """The output type cannot be sent as a schema to the model: structured output falls back and every clause is checked after the reply."""
    found = doc.structure
    if found is None or not found.falls_back:
        return
    mode = found.compiled.mode
    for key, clauses in found.by_field.items():
        bad = [c for c in clauses if c.enforcement == "not_representable"]
        if bad:
            yield doc.diag("CON132", f"{_label(key)} cannot be sent as a schema to {found.model}: "
                           f"{'; '.join(dict.fromkeys(c.reason for c in bad))}; structured output falls back to {mode}"
                           + (": the decoder only makes the reply a JSON object, and every field's clauses are checked "
                              "after the reply" if mode == "json_object" else " and every clause is checked after the reply"),
                           _where(doc, key), key=True,
                           hint="a type the provider can express (a list of named objects instead of dict[str, T], no "
                                "recursion, fewer levels) lets its decoder enforce the fields' clauses")
