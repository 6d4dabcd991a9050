"""pyproject.toml says what the code uses: every third-party import is declared, every declaration is imported
(or says why not), every pin matches constraints.txt, and each has a one-line reason above it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

def _name(requirement: str) -> str:
    return re.split(r"[\[=<>!~ ;]", requirement, maxsplit=1)[0]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> dict[str, str]:
    project = PYPROJECT["project"]
    reqs = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values() for r in extra]
    return {_normal(_name(r)): r for r in reqs}


def _statements(nodes: list[ast.AST]) -> Iterator[ast.AST]:
    """Every statement, nested ones too (an import is a statement: inside a function, a class, an if, a try, a
    match), without the expressions: a walk of every node of the package takes seconds."""
    for node in nodes:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            yield from _statements(getattr(node, field, []))


@cache
def _imported_top_levels(folder: str = "contractstudio") -> frozenset[str]:
    found: set[str] = set()
    for path in (ROOT / folder).rglob("*.py"):
        if "fixtures" in path.relative_to(ROOT).parts:
            continue  # users' files the analyzer reads (a SymbolicAI class imports symai): never run by the suite
        for node in _statements(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return frozenset(m for m in found if m not in sys.stdlib_module_names and m not in ("contractstudio", "__future__"))


@cache
def _installed() -> dict[str, list[str]]:
    """Top-level module -> distributions, read once: each reading walks every installed package's files (seconds)."""
    return packages_distributions()


def _distributions_of(module: str) -> set[str]:
    return {_normal(d) for d in _installed().get(module, [])}


def test_every_third_party_import_is_declared() -> None:
    declared = _declared()
    missing = {m: sorted(_distributions_of(m)) for m in _imported_top_levels() if not _distributions_of(m) & declared.keys()}
    assert missing == {}, f"imported by contractstudio but not declared in pyproject.toml: {missing}"


def test_every_third_party_import_of_the_tests_is_declared() -> None:
    """A test's import is declared too (grimp was imported by a test and came only through import-linter)."""
    declared = _declared()
    # a name no distribution installs is a module of ours or one a test writes (bench_lsp, a hook module in tmp_path)
    missing = {m: sorted(d) for m in _imported_top_levels("tests") if (d := _distributions_of(m)) and not d & declared.keys()}
    assert missing == {}, f"imported by the tests but not declared in pyproject.toml: {missing}"


def test_every_runtime_dependency_is_imported() -> None:
    imported = set().union(*(_distributions_of(m) for m in _imported_top_levels()))
    unused = [r for r in PYPROJECT["project"]["dependencies"] if _normal(_name(r)) not in imported]
    assert unused == [], f"declared in pyproject.toml but never imported by contractstudio: {unused}"


def test_every_pin_matches_constraints() -> None:
    pins = {_normal(n): v for n, v in re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)$", (ROOT / "constraints.txt").read_text(), re.M)}
    for name, requirement in _declared().items():
        version = requirement.split("==")[1] if "==" in requirement else None
        assert version is not None, f"{requirement} is not pinned"
        assert pins.get(name) == version, f"{requirement} does not match constraints.txt ({pins.get(name)})"


def test_every_dependency_has_a_reason() -> None:
    lines = (ROOT / "pyproject.toml").read_text().splitlines()
    for requirement in _declared().values():
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(f'"{requirement}"'))
        assert lines[at - 1].strip().startswith("#"), f"{requirement} has no one-line reason above it"


def test_license_is_an_spdx_expression() -> None:
    assert PYPROJECT["project"]["license"] == "MIT"  # a table is deprecated by setuptools (PEP 639)
