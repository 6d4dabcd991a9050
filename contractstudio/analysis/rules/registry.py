"""The rule registry: the @rule decorator, the rule modules of each kind, and the per-document classes.

In its own module so that a rule module imports it without importing its package's __init__ (issue 23.9).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from contractstudio.findings.diagnostics import RULES, Diagnostic, Severity, declare

# The rule modules of each kind, in the order their rules run (the order does not change the
# findings: they are sorted, and repeats dropped, at the end). A module serves every kind it is
# listed under; a rule naming a kind its module is not listed under is refused at import.
MODULES: dict[str, tuple[str, ...]] = {
    "contract": ("secrets", "type_strings", "duplicates", "python_hooks", "contract_types", "contract_remedy",
                 "contract_fallback", "contract_prompt", "contract_scenarios", "contract_llm", "contract_structure",
                 "contract_streaming"),
    "agent": ("secrets", "type_strings", "duplicates", "agent_policies", "agent_references", "agent_oracles", "agent_budgets"),
    "pipeline": ("secrets", "pipeline_structure", "pipeline_state", "routing"),
    "tools": ("secrets", "type_strings", "duplicates", "python_hooks", "tool_conditions"),
}

# The per-document class of each kind: its cached properties are the facts its rules share.
LOADED: dict[str, str] = {
    "contract": "contractstudio.analysis.loaded_contract:LoadedContract",
    "agent": "contractstudio.analysis.loaded_agent:LoadedAgent",
    "pipeline": "contractstudio.analysis.loaded_pipeline:LoadedPipeline",
    "tools": "contractstudio.analysis.loaded_tools:LoadedTools",
}

RuleBody = Callable[[Any], Iterable[Diagnostic]]
F = TypeVar("F", bound=RuleBody)

# How a rule reads the entries of a document's long lists (a pipeline's `steps`, a contract's `examples`), by list
# name, so that an edit within one entry checks again only what it can change (analysis/by_entry.py):
#   UNREAD          the rule reads none of the list's entries: the edit moves its findings' lines, nothing else
#   a function      of one entry's plain data: all the rule reads of each entry (equal before and after: as UNREAD)
#   Each(function)  each entry's findings depend on that entry alone (and on what lies outside the list);
#                   function(loaded, list name, index) gives entry i's (None: run the rule whole)
#   Touched(names)  each entry's findings depend on that entry and on facts of the whole list (its ids, the step
#                   graph's reachability): names(...) gives the entries an edit can change the findings of (below)
# A list a rule does not name: the rule runs again whole after an edit in one of its entries. A rule module may
# declare `ENTRIES` for all its rules; the decorator's `entries` adds to it.
UNREAD = "unread"


@dataclass(frozen=True, slots=True)
class Each:
    """Each entry's findings depend on that entry alone: `findings(loaded, list name, index)` gives one entry's."""

    findings: Callable[[Any, str, int], Iterable[Diagnostic] | None]


@dataclass(frozen=True, slots=True)
class Touched:
    """Each entry's findings depend on that entry and on facts of the whole list: `entries(before, after, list name,
    index)` names the entries whose findings an edit inside entry `index` can change, from the last analysis and this
    one (None: run the rule whole); the rule is then called with their indices, `rule(loaded, indices)`, and gives
    the findings of those entries alone."""

    entries: Callable[[Any, Any, str, int], Iterable[int] | None]
    view: Callable[[Any], Any] | None = None  # what the rule reads of one entry: when equal, its findings only move


EntryUse: TypeAlias = str | Callable[[Any], Any] | Each | Touched


@dataclass(frozen=True, slots=True)
class RuleFunction:
    """A registered rule function: the code it emits and the kinds of document it runs on."""

    code: str
    kinds: tuple[str, ...]
    run: RuleBody
    declares: bool = True  # False: the code is declared elsewhere and this function is one more place that finds it
    own_entries: Mapping[str, EntryUse] = field(default_factory=dict)  # the decorator's `entries`

    @property
    def entries(self) -> Mapping[str, EntryUse]:
        """How the rule reads the entries of long lists (above): its module's ENTRIES, then its own."""
        return {**self.run.__globals__.get("ENTRIES", {}), **self.own_entries}


_BY_KIND: dict[str, list[RuleFunction]] = {kind: [] for kind in MODULES}
_IMPORTED: set[str] = set()


def rule(code: str, name: str | None = None, severity: Severity | None = None, *,
         kinds: tuple[str, ...], entries: Mapping[str, EntryUse] | None = None) -> Callable[[F], F]:
    """Declare a rule's code (the docstring's first line is its summary) and run the function on documents of `kinds`.

    Without a name and severity the code is one declared elsewhere (by the shape validator, the
    expression checker or another rule), and the function is one more place that finds it.
    """

    def register(fn: F) -> F:
        summary = (fn.__doc__ or "").strip().splitlines()
        if not summary:
            raise ValueError(f"rule {code} ({fn.__qualname__}) needs a docstring: its first line is the docs' summary")
        module = fn.__module__.rpartition(".")[2]
        for kind in kinds:
            if kind not in MODULES:
                raise ValueError(f"rule {code}: unknown kind '{kind}'")
            if module not in MODULES[kind]:
                raise ValueError(f"rule {code}: module '{module}' is not listed under MODULES['{kind}'], so it would not run there")
        if name is not None and severity is not None:
            declare(code, name, severity, summary[0])
        elif code not in RULES:
            raise ValueError(f"rule {code} ({fn.__qualname__}) names no slug and severity, and nothing declared {code} before")
        entry = RuleFunction(code, tuple(kinds), fn, name is not None, dict(entries or {}))
        for kind in kinds:
            if all(r.run is not fn for r in _BY_KIND[kind]):
                _BY_KIND[kind].append(entry)
        return fn

    return register


def rules_for(kind: str) -> list[RuleFunction]:
    """The rule functions of a kind, importing its rule modules on first use ([] for an unknown kind)."""
    if kind not in MODULES:
        return []
    if kind not in _IMPORTED:
        for module in MODULES[kind]:
            importlib.import_module(f"contractstudio.analysis.rules.{module}")
        _IMPORTED.add(kind)
    return _BY_KIND[kind]


def loaded_class(kind: str | None) -> type[Any] | None:
    """The per-document class of a kind (None: the plain `Loaded`), imported on first use."""
    target = LOADED.get(kind or "")
    if target is None:
        return None
    module, _, name = target.partition(":")
    cls: type[Any] = getattr(importlib.import_module(module), name)
    return cls


def every_rule() -> None:
    """Import every rule module and every module that declares codes, so the rule table is complete (docs, tests)."""
    for kind in MODULES:
        rules_for(kind)
    machinery = ("contractstudio.analysis.check", "contractstudio.expressions", "contractstudio.analysis.field_constraints")
    for module in machinery:
        importlib.import_module(module)
