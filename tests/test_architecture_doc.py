"""docs/architecture.md stays the house the code is (issue 36.8): its layer picture is pyproject's import-linter
`layers` list, and every module of contractstudio is named in it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text()


def test_the_layer_picture_is_the_layers_contract() -> None:
    picture = DOC.split("## The layers", 1)[1].split("```", 2)[1]
    rows = [re.split(r"\s{2,}", line)[0] for line in picture.splitlines() if line and not line[0].isspace()]
    drawn = [" | ".join(part.strip().rstrip("/") for part in row.split("|")) for row in rows]
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    [layers] = [c["layers"] for c in contracts if c["type"] == "layers"]
    assert drawn == layers


def test_every_module_is_named() -> None:
    tree = DOC.split("## The layers", 1)[1].split("```", 4)[3]
    unnamed = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "contractstudio").rglob("*.py"))
               if p.name != "__init__.py" and not re.search(rf"(?<![\w.]){re.escape(p.name)}\b", tree)]
    assert unnamed == []
