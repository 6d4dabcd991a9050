"""The house's shape rules for modules (issue 23.9): short modules, and no module imports its own package's
__init__ (a package's __init__ re-exports its modules; importing it back from one of them is an import cycle)."""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
MOST_LINES = 450


def test_no_module_is_over_450_lines() -> None:
    long = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in (ROOT / "contractstudio").rglob("*.py")}
    long = {p: n for p, n in long.items() if n > MOST_LINES}
    assert long == {}, f"modules over {MOST_LINES} lines (split them along a seam): {long}"


def test_no_module_imports_its_own_packages_init() -> None:
    graph = grimp.build_graph("contractstudio", cache_dir=None)
    back = sorted((m, m.rpartition(".")[0]) for m in graph.modules
                  if m.rpartition(".")[0] not in ("", "contractstudio")  # the root's __init__ is the library facade: lazy only
                  and graph.direct_import_exists(importer=m, imported=m.rpartition(".")[0]))
    assert back == []
