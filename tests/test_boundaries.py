"""The dependency boundaries deny by default (issue 36.3): only the studio imports textual, only the language server
pygls and lsprotocol, only the live model litellm, only the Ray engine ray, only the span exporter opentelemetry.
The import-linter contracts forbid each package to all of contractstudio and exempt its owner, so a module that did
not exist when they were written is covered too: here an import is planted in a copy of the package, and
lint-imports must say which contract broke."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (module, the import planted in it, the contract it breaks): modules no contract named when they were allow-lists
PLANTED = [
    ("contractstudio/symbolic/classes.py", "import textual", "Only the studio imports textual"),
    ("contractstudio/evaluation/workers.py", "import ray", "Only the Ray engine imports ray"),
    ("contractstudio/hooks.py", "import litellm", "Only the live model imports litellm"),
    ("contractstudio/editing/outline.py", "import lsprotocol", "Only the language server imports pygls and lsprotocol"),
    ("contractstudio/brand_new.py", "import pygls", "Only the language server imports pygls and lsprotocol"),
    ("contractstudio/runtime/session.py", "import opentelemetry", "Only the span exporter imports opentelemetry"),
]


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports with the project's own contracts, over the copy of the package in `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree), "NO_COLOR": "1", "COLUMNS": "400"}
    return subprocess.run([str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--config", str(tree / "pyproject.toml")],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_an_import_planted_anywhere_but_its_owner_breaks_its_contract(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "contractstudio", tmp_path / "contractstudio", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for module, planted, _ in PLANTED:
        path = tmp_path / module
        path.write_text((path.read_text() if path.exists() else '"""A module no contract names."""\n') + f"{planted}\n")
    result = _lint_imports(tmp_path)
    out = " ".join(result.stdout.split())  # contract names may be wrapped across lines
    assert result.returncode == 1, out
    for module, planted, contract in PLANTED:
        dotted = module.removesuffix(".py").replace("/", ".")
        assert f"{contract}" in out and f"{dotted} -> {planted.split()[1]}" in out, (module, out)
    assert "Contracts: 3 kept, 5 broken." in out  # the five boundaries broken; layers, cycles and the server's own kept
