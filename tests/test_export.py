"""`contractstudio export` and `schema` as a user sees them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import SAMPLES

from contractstudio.cli import main
from contractstudio.documents.json_schema import full_schema
from contractstudio.export import export_text, round_trip

CLEAN = """# A tool set, with comments that must survive.
kind: tools   # the kind
name: "notes"
description: 'Quoted, with a comma.'
tools:
  - name: create_note
    description: Create a note.
    params:
      title: {type: str, description: Note title.}   # flow style kept
    preconditions:
      - assert: title.strip() != ""
        message: Title cannot be empty
"""


def test_clean_file_round_trips_byte_identical() -> None:
    assert round_trip(CLEAN) == CLEAN


@pytest.mark.parametrize("sample", sorted(SAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_samples_export_byte_identical(sample: Path) -> None:
    text = sample.read_text()
    exported, errors = export_text(text, str(sample))
    assert errors == []
    assert exported == text


def test_export_refuses_a_file_with_errors_and_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.tools.yaml"
    bad.write_text(CLEAN.replace('name: "notes"', "name: [notes"))
    out = tmp_path / "out.yaml"
    assert main(["export", str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "export refused" in err and "YML001" in err
    assert not out.exists()


def test_export_writes_the_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "notes.tools.yaml"
    src.write_text(CLEAN)
    out = tmp_path / "exported.yaml"
    assert main(["export", str(src), "-o", str(out)]) == 0
    assert out.read_text() == CLEAN
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left behind


def test_schema_is_valid_draft7_and_validates_documents(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    good = {"kind": "tools", "name": "t", "tools": [{"name": "x", "preconditions": [{"assert": "True"}]}]}
    assert list(validator.iter_errors(good)) == []
    bad = {"kind": "tools", "name": "t", "tools": [{"name": 3}]}
    assert list(validator.iter_errors(bad))
    assert full_schema()["properties"]["kind"]["enum"] == ["contract", "agent", "pipeline", "tools"]
