"""The analyzer's rules: one decorated function per rule, in modules by family and subject.

    @rule("PIP101", "bad-entry-step", "error", kinds=("pipeline",))
    def bad_entry_step(doc: LoadedPipeline) -> Iterator[Diagnostic]:
        '''`entry_step_id` missing or not a step.'''

The decorator declares the code in the rule table (`findings.diagnostics.RULES`;
the docstring's first line is the summary in docs/rules.md) and runs the function
on every document of those kinds, handing it the document's `Loaded` object, whose
facts (the step graph, the type system, the expression sites, ...) are computed
once per analysis and shared. A rule function emits its own code only, at its
declared severity or, for a variant of the same finding, another one
(tests/test_rulebook.py).

A rule that reads the entries of a pipeline's `steps` or a contract's `examples` says how (`entries=`, or its
module's `ENTRIES`: `UNREAD`, a view of one entry, `Each`, `Touched`; rules/registry.py), so that an edit within one
entry runs again only the rules that read what changed, and a rule whose findings are each step's own (given facts of
the whole, as reachability) only for the steps the edit can change (analysis/by_entry.py); a rule that says nothing
runs again.

Codes found by machinery rather than by a rule are declared next to that
machinery with `declare(...)`: the YAML readers (reading/codes.py), the shape
validator (analysis/shape.py), the expression checker (expressions/) and the
constraint checker (analysis/field_constraints.py). A rule that finds one of
those codes in its own way names only the code: `@rule("SCH103", kinds=...)`.

Rule modules are imported per kind on first use (MODULES), so `check` on a
contract never imports the pipeline rules (docs/performance.md).
"""

from __future__ import annotations

from contractstudio.analysis.rules.registry import LOADED, MODULES, RuleFunction, every_rule, loaded_class, rule, rules_for

__all__ = ["LOADED", "MODULES", "RuleFunction", "every_rule", "loaded_class", "rule", "rules_for"]
