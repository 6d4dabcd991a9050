"""actionlint-style fixtures: each err/<FAMILY>/<case>.yaml has a <case>.out of expected
`line:col: CODE` lines (exactly the diagnostics found); every ok/ file stays silent."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

from contractstudio.analysis.check import Context, check_file
from contractstudio.analysis.rules import every_rule
from contractstudio.findings.diagnostics import RULES

ERR = sorted((FIXTURES / "err").glob("*/*.yaml"))
OK = sorted((FIXTURES / "ok").glob("*.yaml"))


def found(path: Path) -> list[str]:
    # Fixtures run in a trusted workspace (hooks are imported, TOL102) unless they say otherwise (TOL103).
    trusted = "# fixture: untrusted" not in path.read_text(encoding="utf-8", errors="replace")
    report = check_file(path, Context(trusted=trusted, root=path.parent))
    return [f"{d.line}:{d.column}: {d.code}" for d in report.diagnostics]


@pytest.mark.parametrize("case", ERR, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_error_fixture_reports_exactly_what_its_out_file_says(case: Path) -> None:
    expected = [ln.strip() for ln in case.with_suffix(".out").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    assert found(case) == expected


@pytest.mark.parametrize("case", OK, ids=lambda p: p.stem)
def test_ok_fixture_is_silent(case: Path) -> None:
    assert found(case) == []


def test_every_rule_has_an_error_fixture_an_ok_fixture_and_docs() -> None:
    every_rule()  # rule modules are imported per kind on first use: load them all
    fired = {ln.split()[-1] for case in ERR for ln in case.with_suffix(".out").read_text().splitlines() if ln.strip() and not ln.startswith("#")}
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
