"""Every YAML the tool reads besides documents goes through one bounded reader (reading/data_files.py), and the
reader itself stops parsing a text nested far past the bound (issue 18 point 5): a `.contractstudio.yaml` nested
30,000 deep crashed `check` (exit 139 in PyYAML's C composer) and the language server."""

from __future__ import annotations

from pathlib import Path

import pytest

from contractstudio.cli import main
from contractstudio.reading import builder
from contractstudio.reading.data_files import UnreadableData, read_data_file
from contractstudio.reading.source import read_source

DEEP = "dialect: " + "[" * 30_000 + "]" * 30_000 + "\n"  # 60 KB


def test_a_deeply_nested_folder_settings_file_is_ignored_by_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".contractstudio.yaml").write_text(DEEP)
    (tmp_path / "p.yaml").write_text("steps: []\n")
    assert main(["check", str(tmp_path / "p.yaml")]) == 1  # read as native: no kind, a finding, no crash
    assert "YML003" in capsys.readouterr().out


def test_the_language_server_survives_a_deeply_nested_folder_settings_file(tmp_path: Path) -> None:
    from contractstudio.lsp.analyses import Analyses

    (tmp_path / ".contractstudio.yaml").write_text(DEEP)
    path = tmp_path / "p.yaml"
    report = Analyses(lambda entry: None).analyze(str(path), "steps: []\n")
    assert report.diagnostics == []  # not ours: the settings name no dialect it can read


def test_the_reader_stops_parsing_a_text_nested_far_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    real = builder._events

    def counted(text: str) -> tuple[object, object]:
        get, dispose = real(text)

        def counting_get() -> object:
            seen.append(1)
            return get()
        return counting_get, dispose

    monkeypatch.setattr(builder, "_events", counted)
    source = read_source("a: " + "[" * 1_000_000 + "]" * 1_000_000 + "\n")
    assert [d.code for d in source.diagnostics] == ["YML006"] and source.documents == []
    assert len(seen) < 1_000  # libyaml's work per token grows with the open flow levels: never scanned to the end


def test_a_data_file_past_a_bound_is_refused_with_its_position(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text(DEEP)
    with pytest.raises(UnreadableData, match=r"deep.yaml:1:\d+: .*nests deeper than 200 levels"):
        read_data_file(deep)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(8)))
    with pytest.raises(UnreadableData, match="aliases expand"):
        read_data_file(bomb)
    (tmp_path / "latin1.yaml").write_bytes(b"theme: caf\xe9\n")
    with pytest.raises(UnreadableData, match=r"latin1.yaml:1:1: the file is not UTF-8"):
        read_data_file(tmp_path / "latin1.yaml")
    (tmp_path / "big.yaml").write_text("a: " + "x" * 2_000_000)
    with pytest.raises(UnreadableData, match="larger than"):
        read_data_file(tmp_path / "big.yaml")
    with pytest.raises(UnreadableData, match="FIFO"):
        import os

        os.mkfifo(tmp_path / "fifo.yaml")
        read_data_file(tmp_path / "fifo.yaml")


def test_no_module_parses_yaml_but_the_bounded_reader() -> None:
    # PyYAML's loaders compose recursively (the C one crashes the process on deep nesting): only the event reader
    # and writers (dump) may use a YAML library.
    root = Path(__file__).resolve().parent.parent / "contractstudio"
    allowed = {"reading/builder.py"}
    offenders = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        for call in ("safe_load", "yaml.load", "yaml.compose", "yaml.parse", "CSafeLoader", "CLoader", "ruamel.yaml import"):
            if call in text and rel not in allowed:
                offenders.append(f"{rel}: {call}")
    assert offenders == []
