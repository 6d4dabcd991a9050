"""The documentation stays true: generated pages match their generator, README commands exist."""

from __future__ import annotations

import importlib.util
import re

from conftest import ROOT


def test_rules_page_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("gen_rules_doc", ROOT / "scripts" / "gen_rules_doc.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (ROOT / "docs" / "rules.md").read_text() == gen.render(), "run: python scripts/gen_rules_doc.py"


def test_readme_quick_start_has_exactly_two_commands_and_ci_runs_the_second() -> None:
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\s*(bash scripts/\S+)", quick, re.M)
    assert commands == ["bash scripts/studio.sh", "bash scripts/test.sh"]
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_every_document_key_is_in_the_format_docs() -> None:
    from contractstudio.documents.models import KINDS

    docs = (ROOT / "docs" / "format.md").read_text()
    missing = []
    for model in KINDS.values():
        for name, field in model.model_fields.items():
            key = field.alias or name
            if f"`{key}`" not in docs:
                missing.append(f"{model.__name__}.{key}")
    assert not missing, missing


def test_format_key_reference_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("gen_format_doc", ROOT / "scripts" / "gen_format_doc.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = (ROOT / "docs" / "format.md").read_text()
    assert gen.MARKER in text
    assert text.split(gen.MARKER)[1] == gen.render().split(gen.MARKER)[1], "run: python scripts/gen_format_doc.py"
