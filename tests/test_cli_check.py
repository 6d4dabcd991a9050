"""`contractstudio check` as a user runs it: formats, exit codes, suppression, and import hygiene."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from contractstudio.cli import main

BROKEN = """kind: contract
name: demo
prompt: Summarise the text.
input: In
output: Out
remedy: {retry: {tries: 0}}
types:
  In:
    fields: {text: {type: str, description: The text.}}
  Out:
    fields: {summary: {type: str, description: The summary.}}
post:
  - assert: len(output.summary) > 0
    message: The summary is empty.
on_failure: raise
"""


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    p = tmp_path / "demo.contract.yaml"
    p.write_text(BROKEN)
    return p


def run_cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_format_shows_position_source_line_caret_and_summary(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("check", str(broken), capsys=capsys)
    assert code == 1
    assert f"{broken}:6:25: error SCH104 remedy.retry.tries" in out
    assert "     6 | remedy: {retry: {tries: 0}}" in out
    assert out.splitlines()[2].index("^") == len("       | ") + 24
    assert out.rstrip().endswith("1 file checked: 1 error, 0 warnings, 0 infos")


def test_json_format_has_every_field_of_a_diagnostic(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli("check", str(broken), "--format", "json", capsys=capsys)
    data = json.loads(out)
    assert code == 1
    (d,) = data["diagnostics"]
    assert set(d) == {"code", "name", "severity", "message", "file", "line", "column", "end_line", "end_column", "hint", "related"}
    assert (d["code"], d["name"], d["line"], d["column"]) == ("SCH104", "out-of-range", 6, 25)
    assert data["summary"] == {"files": 1, "errors": 1, "warnings": 0, "infos": 0}


def test_jsonl_and_github_formats(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli("check", str(broken), "--format", "jsonl", capsys=capsys)
    assert [json.loads(line)["code"] for line in out.splitlines()] == ["SCH104"]
    _, out, _ = run_cli("check", str(broken), "--format", "github", capsys=capsys)
    assert out.startswith(f"::error file={broken},line=6,col=25,")
    assert "title=SCH104::" in out


def test_sarif_is_2_1_0_with_rules_and_regions(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli("check", str(broken), "--format", "sarif", capsys=capsys)
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert run["tool"]["driver"]["rules"][0]["id"] == "SCH104"
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (6, 25)
    # no link to a site that does not exist (contractstudio.invalid): the rule's text is in the log itself
    assert "invalid" not in out and all("helpUri" not in r for r in run["tool"]["driver"]["rules"])
    assert run["tool"]["driver"]["rules"][0]["shortDescription"]["text"]


def test_fail_level_and_suppression(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("check", str(broken), "--fail-level", "none", capsys=capsys)[0] == 0
    broken.write_text(BROKEN.replace("tries: 0}}", "tries: 0}}  # contractstudio: ignore[SCH104]"))
    code, out, _ = run_cli("check", str(broken), capsys=capsys)
    assert code == 0 and "0 errors" in out


def test_missing_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli("check", "no/such/file.yaml", capsys=capsys)
    assert code == 2 and "no such file or folder" in err


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["check", "--frobnicate", "x"])
    assert exc.value.code == 2


def test_folder_discovery_skips_non_contract_yaml_and_ignored_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ci.yaml").write_text("on: push\njobs: {}\n")  # not ours: no kind
    (tmp_path / "skip").mkdir()
    (tmp_path / "skip" / "bad.yaml").write_text("kind: tools\nname: [\n")
    (tmp_path / ".contractstudioignore").write_text("skip/\n")
    (tmp_path / "ok.yaml").write_text("kind: tools\nname: t\ntools: []\n")
    code, out, _ = run_cli("check", str(tmp_path), capsys=capsys)
    assert code == 0 and "1 file checked" in out
    code, out, _ = run_cli("check", str(tmp_path / "skip"), capsys=capsys)
    assert code == 1 and "YML001" in out


def test_a_folder_with_nothing_to_check_fails_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ci.yaml").write_text("on: push\njobs: {}\n")  # YAML, but not ours
    code, out, err = run_cli("check", str(tmp_path), capsys=capsys)
    assert code == 1 and "0 files checked" in out  # a mistyped path in CI no longer passes (issue 21.6)
    assert f"contractstudio: no file to check in {tmp_path}" in err
    assert "a document needs a top-level kind: (contract, agent, pipeline, tools) or the shape of a dialect" in err
    assert "--allow-empty" in err
    code, _, err = run_cli("check", str(tmp_path), "--format", "json", capsys=capsys)
    assert code == 1 and "no file to check" in err
    code, out, err = run_cli("check", "--allow-empty", str(tmp_path), capsys=capsys)
    assert code == 0 and "0 files checked" in out
    assert "--allow-empty" not in err and f"no file to check in {tmp_path}" in err  # given, it is not hinted again


def test_an_empty_folder_or_an_empty_file_checks_nothing_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty.yaml").write_text("# only a comment\n")
    code, _, err = run_cli("check", str(tmp_path / "empty"), capsys=capsys)
    assert code == 1 and "no file to check" in err
    code, out, err = run_cli("check", str(tmp_path / "empty.yaml"), capsys=capsys)
    assert code == 1 and "0 files checked" in out
    assert f"skipped {tmp_path / 'empty.yaml'}: the file is empty" in err
    assert run_cli("check", "--allow-empty", str(tmp_path / "empty"), capsys=capsys)[0] == 0


def test_check_never_imports_textual_or_litellm(broken: Path) -> None:
    code = (
        "import sys\n"
        "from contractstudio.cli import main\n"
        f"main(['check', {str(broken)!r}, '--format', 'json'])\n"
        "bad = [m for m in ('textual', 'litellm') if m in sys.modules]\n"
        "sys.exit(10 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_module_entry_point_works() -> None:
    proc = subprocess.run([sys.executable, "-m", "contractstudio", "schema", "tools"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["properties"]["kind"]["const"] == "tools"


def test_a_fifo_in_a_folder_never_blocks_the_scan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    (tmp_path / "notes.tools.yaml").write_text("kind: tools\nname: notes\ntools: []\n")
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it would wait for a writer forever
    assert main(["check", str(tmp_path)]) == 0
    assert "1 file checked" in capsys.readouterr().out


def test_every_command_turns_pydantic_plugins_off_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    assert main(["schema"]) == 0  # not `check`: the setting is made once, for every command
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "logfire")
    main(["schema"])
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "logfire"
