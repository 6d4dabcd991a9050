"""`contractstudio export` and `schema` as a user sees them."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import FIXTURES, SAMPLES
from second_reader import ruamel_disagrees

from contractstudio.analysis.check import check_file
from contractstudio.cli import main
from contractstudio.documents.json_schema import full_schema
from contractstudio.export import export_file, export_text

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
    assert export_text(CLEAN) == (CLEAN, [])


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


# Export keeps the file byte for byte (issue 9.12, 10.14) -----------------------------------------------------

FLOW_KEY = """kind: tools
name: notes
description: x
tools:
  - {name: a, description: b, c}
"""
MIXED_INDENT = """kind: tools
name: notes
description: x
tools:
- name: create_note
  description: Create a note.
  params:
    title: {type: str}
  preconditions:
    - assert: title.strip() != ""
      message: Title cannot be empty
"""


@pytest.mark.parametrize("text", [FLOW_KEY, MIXED_INDENT, CLEAN.replace("\n", "\r\n")], ids=["flow-key", "mixed-indent", "crlf"])
def test_export_keeps_the_text_it_accepts(text: str) -> None:
    exported, found = export_text(text, "t.tools.yaml")
    assert [d.severity for d in found if d.severity == "error"] == []
    assert exported == text


EVERY_FILE = sorted(SAMPLES.rglob("*.yaml")) + sorted(FIXTURES.rglob("*.yaml"))


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_export_of_an_unchanged_file_is_identical_or_refused(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    code = main(["export", str(path), "-o", str(out)])
    if code == 0:
        assert out.read_bytes() == path.read_bytes()
        assert ruamel_disagrees(path.read_text(encoding="utf-8-sig")) is None  # what other YAML tools read, too
    else:
        assert code == 1 and not out.exists()


def test_a_bom_and_crlf_are_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "bom.tools.yaml"
    raw = b"\xef\xbb\xbf" + CLEAN.replace("\n", "\r\n").encode()
    src.write_bytes(raw)
    out = tmp_path / "out.yaml"
    assert main(["export", str(src), "-o", str(out)]) == 0
    assert out.read_bytes() == raw
    assert export_file(src)[0] == "\ufeff" + CLEAN.replace("\n", "\r\n")


@pytest.mark.parametrize("value", [
    "!!int abc", "!!float xyz", "!!bool maybe", "!!binary 'not base64!'", "!!timestamp 2020-99-99", "9" * 4400,
    "a\tb c", "!!bool yes", "!!null abc", "0b101", "-0x1F", ".5e3",
], ids=["int", "float", "bool", "binary", "timestamp", "huge-int", "tab", "bool-yes", "null", "binary-int", "signed-hex", "float-no-sign"])
def test_what_export_cannot_keep_is_a_check_finding_and_never_a_crash(tmp_path: Path, value: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "t.tools.yaml"
    src.write_text(f"kind: tools\nname: notes\ndescription: {value}\ntools: []\n")
    assert main(["check", str(src)]) == 1
    assert "YML008" in capsys.readouterr().out
    assert main(["export", str(src)]) == 1
    err = capsys.readouterr().err
    assert "export refused" in err and "YML008" in err and "internal error" not in err


def test_a_yaml_1_1_header_that_would_change_a_value_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "t.tools.yaml"
    src.write_text("%YAML 1.1\n---\nkind: tools\nname: n\ndescription: x\ntools: []\n")
    assert main(["check", str(src)]) == 1
    out = capsys.readouterr().out
    assert "t.tools.yaml:4:7: error YML008 'n' is text here, but the %YAML 1.1 header (line 1) makes other YAML tools read false" in out
    assert main(["export", str(src)]) == 1


@pytest.mark.parametrize("value, theirs", [("!!int 017", "15"), ("!!bool yes", "true"), ("!!float 1:30", "90.0")],
                         ids=["octal-int", "yes-bool", "sexagesimal-float"])
def test_a_yaml_1_1_header_changes_tagged_scalars_too(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str,
                                                     theirs: str) -> None:
    """Found by the long export fuzz: `!!int 017` under `%YAML 1.1` is 15 to ruamel.yaml and 17 to the analyzer."""
    src = tmp_path / "t.tools.yaml"
    src.write_text(f"%YAML 1.1\n---\nkind: tools\nname: notes\ndescription: x\ntools:\n  - name: a\n    params:\n"
                   f"      p:\n        type: any\n        default: {value}\n")
    assert main(["check", str(src)]) == 1
    out = capsys.readouterr().out
    assert "t.tools.yaml:11:18: error YML008" in out and f"makes other YAML tools read {theirs}" in out
    assert main(["export", str(src)]) == 1


@pytest.mark.parametrize("value", ["!!float 017", "!!int 17", "!!float 1_000", "!!bool true"])
def test_tagged_scalars_a_yaml_1_1_header_leaves_alone_are_no_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     value: str) -> None:
    """`!!float 017` is 17.0 to both readers (a float is never octal): no YML008, and export keeps the file."""
    src = tmp_path / "t.tools.yaml"
    text = (f"%YAML 1.1\n---\nkind: tools\nname: notes\ndescription: x\ntools:\n  - name: a\n    params:\n"
            f"      p:\n        type: any\n        default: {value}\n")
    src.write_text(text)
    assert main(["check", str(src)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["export", str(src)]) == 0 and capsys.readouterr().out == text


# Output paths are checked before any work; only regular files are replaced (issue 9.10, 10.13) -------------------


@pytest.mark.parametrize("target, message", [
    (lambda d: d, "is a folder"),
    (lambda d: d / "missing" / "out.yaml", "does not exist"),
], ids=["onto-a-folder", "into-a-missing-folder"])
def test_export_to_a_bad_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], target, message: str) -> None:
    src = tmp_path / "notes.tools.yaml"
    src.write_text(CLEAN)
    assert main(["export", str(src), "-o", str(target(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err


def test_export_through_a_symlink_writes_its_target(tmp_path: Path) -> None:
    src = tmp_path / "notes.tools.yaml"
    src.write_text(CLEAN)
    real = tmp_path / "real.yaml"
    real.write_text("old")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    assert main(["export", str(src), "-o", str(link)]) == 0
    assert link.is_symlink() and real.read_text() == CLEAN


def test_export_onto_a_fifo_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "notes.tools.yaml"
    src.write_text(CLEAN)
    fifo = tmp_path / "out.yaml"
    os.mkfifo(fifo)
    assert main(["export", str(src), "-o", str(fifo)]) == 2
    assert "FIFO" in capsys.readouterr().err
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_an_exported_file_follows_the_umask(tmp_path: Path) -> None:
    src = tmp_path / "notes.tools.yaml"
    src.write_text(CLEAN)
    old = os.umask(0o022)
    try:
        assert main(["export", str(src), "-o", str(tmp_path / "out.yaml")]) == 0
    finally:
        os.umask(old)
    assert (tmp_path / "out.yaml").stat().st_mode & 0o777 == 0o644


def test_convert_checks_its_output_path_like_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = FIXTURES / "dialects" / "localai-rag" / "pipelines" / "compare_snapshots.yaml"
    assert main(["convert", str(source), "--to", "contractstudio", "-o", str(tmp_path / "missing" / "out.yaml")]) == 2
    err = capsys.readouterr().err
    assert "cannot write the conversion" in err and "does not exist" in err and "internal error" not in err


# A big file costs export what it costs check (issue 21.15) --------------------------------------------------------

def _count_yaml_readings(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count every YAML reading of a text (ours and ruamel.yaml's) and every analysis, from now on."""
    from ruamel.yaml.main import YAML

    from contractstudio.analysis import check
    from contractstudio.reading.builder import Builder

    counts = {"yaml readings": 0, "analyses": 0}

    def counted(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(Builder, "build", counted("yaml readings", Builder.build))
    monkeypatch.setattr(YAML, "load_all", counted("yaml readings", YAML.load_all))
    monkeypatch.setattr(check, "analyze_source", counted("analyses", check.analyze_source))
    return counts


def test_export_reads_and_analyses_a_file_once_as_check_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5 MB contract took export 18x the time of check: a second reading of the whole file by our reader and one
    by ruamel.yaml's pure-Python parser (30-60x slower per token). Export is check's one reading and one analysis."""
    src = tmp_path / "corpus.contract.yaml"
    corpus = "".join(f"        - {{id: D{i}, content: Document {i} says vector databases store embeddings.}}\n"
                     for i in range(50))
    src.write_text((SAMPLES / "multidoc_qa.contract.yaml").read_text().split("\nscenarios:\n")[0]
                   + "\nscenarios:\n  - name: corpus\n    input:\n      query: What do they store?\n      documents:\n"
                   + corpus + "    responses: ['{\"answer\": \"Embeddings.\", \"evidence\": [], \"coverage_score\": 1.0}']\n")
    counts = _count_yaml_readings(monkeypatch)
    assert check_file(src).diagnostics == []
    by_check = dict(counts)
    counts.update({k: 0 for k in counts})
    exported, refused = export_file(src)
    assert refused == [] and exported == src.read_text()
    assert counts == by_check == {"yaml readings": 1, "analyses": 1}
