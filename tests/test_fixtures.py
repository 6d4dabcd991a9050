"""actionlint-style fixtures: each err/<FAMILY>/<case>.yaml has a <case>.out of the expected
finding lines (`line:col: severity CODE message [name]`, exactly the diagnostics found, see
tests/fixtures/README.md); every ok/ file stays silent."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT
from fixture_output import code_of, expected, found

from contractstudio.analysis.rules import every_rule
from contractstudio.findings.diagnostics import RULES

# Python contract classes (PYC, and the contract rules at .py positions) have .py fixtures; the other .py files there are hook modules
ERR = sorted([*(FIXTURES / "err").glob("*/*.yaml"), *(FIXTURES / "err" / "PYC").glob("*.py")])
OK = sorted([*(FIXTURES / "ok").glob("*.yaml"), *(FIXTURES / "ok").glob("pyc_*.py")])


@pytest.mark.parametrize("case", ERR, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_error_fixture_reports_exactly_what_its_out_file_says(case: Path) -> None:
    assert found(case) == expected(case), "if the change is meant: python scripts/regen_fixture_outputs.py, then read the diff"


@pytest.mark.parametrize("case", OK, ids=lambda p: p.stem)
def test_ok_fixture_is_silent(case: Path) -> None:
    assert found(case) == []


def test_every_rule_has_an_error_fixture_an_ok_fixture_and_docs() -> None:
    every_rule()  # rule modules are imported per kind on first use: load them all
    fired = {code_of(line) for case in ERR for line in expected(case)}
    docs = (ROOT / "docs" / "rules.md").read_text()
    families = {p.name for p in (FIXTURES / "err").iterdir() if p.is_dir()}
    ok_families = {p.stem.split("_")[0].upper() for p in OK}
    missing = sorted(code for code in RULES if code not in fired)
    undeclared = sorted(fired - set(RULES))
    assert not undeclared, f"codes the fixtures find that every_rule() does not declare: {undeclared}"
    assert not missing, f"rules without an error fixture: {missing}"
    undocumented = sorted(code for code in RULES if f"## {code}" not in docs)
    assert not undocumented, f"rules missing from docs/rules.md: {undocumented}"
    assert {code[:3] for code in RULES} <= families
    assert {code[:3] for code in RULES} <= ok_families, "each family needs an ok/<family>_*.yaml fixture"
