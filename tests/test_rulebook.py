"""The rule table: one decorated function per rule, each emitting its own code, loaded per kind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

from contractstudio.analysis.check import Context, load, run_rules
from contractstudio.analysis.rules import MODULES, every_rule, rule, rules_for
from contractstudio.analysis.shape import validate
from contractstudio.findings.diagnostics import RULES
from contractstudio.reading.source import read_source
from contractstudio.trust import hook_folder

CASES = sorted((FIXTURES / "err").glob("*/*.yaml")) + sorted((FIXTURES / "ok").glob("*.yaml"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_each_rule_function_emits_only_its_own_code(case: Path) -> None:
    source = read_source(case.read_text(encoding="utf-8"), str(case))
    for doc in source.documents:
        model, _ = validate(doc, source.path)
        if model is None or doc.kind is None:
            continue
        item = load(source.path, source.text, doc, model, Context(hooks=hook_folder(case.parent, True)))
        for entry in rules_for(doc.kind):
            codes = {d.code for d in entry.run(item)}
            assert codes <= {entry.code}, f"{entry.run.__qualname__} is the rule {entry.code} but emitted {sorted(codes)}"


def test_every_rule_function_is_registered_for_kinds_whose_modules_hold_it_and_has_a_summary() -> None:
    every_rule()
    for kind in MODULES:
        for entry in rules_for(kind):
            assert kind in entry.kinds
            if entry.declares:  # a function that only finds a code declared elsewhere documents itself
                assert RULES[entry.code].summary == (entry.run.__doc__ or "").strip().splitlines()[0]


def test_a_rule_in_a_module_its_kind_does_not_load_is_refused() -> None:
    # This test module is not listed under MODULES['pipeline']: the rule would never run there.
    with pytest.raises(ValueError, match="not listed under MODULES"):
        @rule("PIP999", "never-runs", "error", kinds=("pipeline",))
        def never_runs(doc: object) -> list[object]:
            """Never registered."""
            return []
    assert "PIP999" not in RULES


def test_a_rule_without_a_summary_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a docstring"):
        rule("PIP998", "no-summary", "error", kinds=("pipeline",))(lambda doc: [])
    assert "PIP998" not in RULES


def test_facts_are_computed_once_per_analysis_and_kept_in_the_result() -> None:
    from contractstudio.analysis.check import check_file

    report = check_file(FIXTURES / "err/PIP/maybe_unset.yaml")
    doc = report.documents[0]
    graph = doc.step_graph  # type: ignore[attr-defined]
    assert doc.__dict__["step_graph"] is graph  # built while the rules ran, not again when read
    assert "state_flow" in doc.__dict__ and doc.requirements  # type: ignore[attr-defined]
    again = load(doc.file, doc.text, doc.doc, doc.model, doc.ctx)
    assert run_rules(again) == run_rules(load(doc.file, doc.text, doc.doc, doc.model, doc.ctx))


def test_check_on_one_kind_imports_only_that_kinds_rule_modules() -> None:
    code = (
        "import sys\n"
        "from contractstudio.analysis.check import check_file\n"
        f"check_file(__import__('pathlib').Path({str(FIXTURES / 'ok/tol_conditions_and_hooks.yaml')!r}))\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('contractstudio.analysis.rules.'))))\n"
        "print('contractstudio.analysis.loaded_pipeline' in sys.modules, 'contractstudio.analysis.step_graph' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout.splitlines()
    imported = {m.rpartition(".")[2] for m in out[0].split()} - {"registry"}  # the registry is no rule module
    assert imported <= set(MODULES["tools"]), imported
    assert out[1] == "False False"


def test_a_contracts_facts_are_the_ones_its_rules_used() -> None:
    from contractstudio.analysis.check import check_file

    doc = check_file(FIXTURES / "err/EXP/unknown_field.yaml").documents[0]
    # Type system, scopes and every checked expression were computed while the rules ran, once.
    assert {"types", "role_types", "input_scope", "output_scope", "expression_sites", "checked_expressions"} <= set(doc.__dict__)
    checked = doc.checked_expressions  # type: ignore[attr-defined]
    assert any(i.code == "EXP201" for c in checked for i in c.issues)
    assert all(c.site.types is doc.types for c in checked)  # type: ignore[attr-defined]
