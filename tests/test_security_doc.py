"""docs/security.md names, for each claim, the test that holds it: every one of those tests exists."""

from __future__ import annotations

import ast
import re

from conftest import ROOT


def named_tests() -> list[tuple[str, str]]:
    """(file, test) for every `tests/x.py::test_name`, and every `::test_name` after it (same file)."""
    out: list[tuple[str, str]] = []
    file = ""
    for cell in re.findall(r"`((?:tests/[\w/]+\.py)?::test_\w+)`", (ROOT / "docs" / "security.md").read_text()):
        named_file, name = cell.split("::")
        file = named_file or file
        out.append((file, name))
    return out


def test_every_test_the_threat_model_names_exists() -> None:
    named = named_tests()
    assert len(named) >= 30
    missing = []
    for file, name in named:
        tree = ast.parse((ROOT / file).read_text())
        functions = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if name not in functions:
            missing.append(f"{file}::{name}")
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"
