"""The one path policy (contractstudio/storage/paths.py): what another file names is read only when it is a
regular file inside the workspace, and no face ever prints the environment through an `extends:` base."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contractstudio.analysis.check import Context, check_file
from contractstudio.cli import main

KEY = "sk-proj-" + "Zq7" * 12  # a key of OpenAI's shape, planted in the environment
CANARY = "canary-value-no-shape-4711"  # a value redaction cannot recognise: it must never be read at all
PIPELINE = """\
YAMLpipeline:
  name: p
  extends: {target}
  settings: {{behavior_version: "0.2.0", compat_mode: locked, entry_step_id: a}}
  steps:
    - {{id: a, action: call_model, prompt: p, end: true}}
"""
BASE = """\
YAMLpipeline:
  name: base
  settings: {behavior_version: "0.2.0", compat_mode: locked, entry_step_id: a}
  steps:
    - {id: a, action: call_model, prompt: p, end: true}
"""


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("CS_CANARY", CANARY)


def project(tmp_path: Path) -> Path:
    """A checkout: the folder a pull request's files live in."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo


def everything_printed(capsys: pytest.CaptureFixture[str], file: Path) -> str:
    """What every output format of check, export's and convert's refusals and the pre-commit hook print."""
    out = []
    for fmt in ("text", "json", "jsonl", "sarif", "github"):
        main(["check", "--format", fmt, str(file)])
        out.append("".join(capsys.readouterr()))
    for argv in (["export", str(file)], ["convert", str(file), "--to", "contractstudio"], hook_command(str(file))):
        main(argv)
        out.append("".join(capsys.readouterr()))
    return "\n".join(out)


def hook_command(*files: str) -> list[str]:
    """The command line pre-commit runs: the hook's entry, its args, then the staged files."""
    import yaml

    hook = yaml.safe_load((Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text())[0]
    entry = hook["entry"].split()
    assert entry[0] == "contractstudio"
    return [*entry[1:], *hook.get("args", []), *files]


def faces(file: Path) -> str:
    """What the language server and the studio are given for the file (in process)."""
    from pygls.workspace import TextDocument

    from contractstudio.lsp.analyses import Analyses
    from contractstudio.lsp.convert import Positions, diagnostic
    from contractstudio.studio.analyses import analyze

    text = file.read_text()
    report = Analyses(lambda e: None, debounce_s=0.0).analyze(str(file), text)
    pos = Positions(TextDocument(file.as_uri(), text), text)
    shown = [repr(diagnostic(d, pos, file.as_uri(), str(file))) for d in report.diagnostics]
    shown += [repr(d) for d in analyze(file, text, Context()).diagnostics]
    return "\n".join(shown)


@pytest.mark.parametrize("target", ["/proc/self/environ", "/proc/self/../self/environ", "/proc/self/root/proc/self/environ"])
def test_a_base_in_a_system_tree_is_refused_before_it_is_read_and_nothing_prints_the_environment(
        target: str, tmp_path: Path, secrets: None, capsys: pytest.CaptureFixture[str]) -> None:
    file = project(tmp_path) / "p.yaml"
    file.write_text(PIPELINE.format(target=target))
    [refused] = [d for d in check_file(file).diagnostics if d.code == "REF203"]
    assert "view of the running system" in refused.message and refused.line == 3
    printed = everything_printed(capsys, file) + faces(file)
    assert "REF203" in printed
    assert KEY not in printed and CANARY not in printed and "CS_CANARY" not in printed


def test_a_pipelines_root_in_proc_finds_no_base_there(tmp_path: Path, secrets: None, capsys: pytest.CaptureFixture[str]) -> None:
    repo = project(tmp_path)
    (repo / ".contractstudio.yaml").write_text("pipelines_root: /proc/self\n")
    file = repo / "p.yaml"
    file.write_text(PIPELINE.format(target="environ"))
    assert [d.code for d in check_file(file).diagnostics if d.code.startswith(("REF", "YML"))] == ["REF203"]
    printed = everything_printed(capsys, file) + faces(file)
    assert KEY not in printed and CANARY not in printed


def test_a_base_outside_the_project_is_refused_through_dotdot_an_absolute_path_or_a_symlink(tmp_path: Path) -> None:
    repo = project(tmp_path)
    outside = tmp_path / "elsewhere" / "base.yaml"
    outside.parent.mkdir()
    outside.write_text(BASE)
    (repo / "link.yaml").symlink_to(outside)
    for target in ("../elsewhere/base.yaml", str(outside), "link.yaml"):
        file = repo / "p.yaml"
        file.write_text(PIPELINE.format(target=target))
        found = check_file(file).diagnostics
        [refused] = [d for d in found if d.code.startswith(("REF", "YML"))]
        assert refused.code == "REF203" and "outside the workspace" in refused.message, target
    (repo / "base.yaml").write_text(BASE)  # inside the checkout, a base is read as before, from a subfolder too
    (repo / "sub").mkdir()
    (repo / "sub" / "p.yaml").write_text(PIPELINE.format(target="../base.yaml"))
    assert [d.code for d in check_file(repo / "sub" / "p.yaml").diagnostics if d.code.startswith(("REF", "YML"))] == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_base_is_refused_without_blocking(tmp_path: Path) -> None:
    repo = project(tmp_path)
    os.mkfifo(repo / "base.yaml")
    file = repo / "p.yaml"
    file.write_text(PIPELINE.format(target="base.yaml"))
    assert [d.code for d in check_file(file).diagnostics if d.code.startswith(("REF", "YML"))] == ["REF203"]


def test_a_source_line_quoted_in_an_excerpt_is_redacted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "c.contract.yaml"
    file.write_text(f"kind: contract\nname: c\nnote: OPENAI_API_KEY={KEY} then: more\n")
    assert main(["check", str(file)]) == 1
    out = capsys.readouterr().out
    assert "YML001" in out and "OPENAI_API_KEY=***" in out and KEY not in out


def test_an_empty_extends_is_a_finding(tmp_path: Path) -> None:
    file = project(tmp_path) / "p.yaml"
    file.write_text(PIPELINE.format(target='""'))
    [refused] = [d for d in check_file(file).diagnostics if d.code == "REF203"]
    assert refused.message == "extends names no file" and refused.line == 3


def test_a_folder_scan_never_follows_a_symlink_out_of_the_project(tmp_path: Path, secrets: None,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo = project(tmp_path)
    (repo / ".contractstudio.yaml").write_text("dialect: localai-rag\n")  # every YAML file below is read as a pipeline
    (tmp_path / "credentials").write_text(f"[default]\naws_secret_access_key = {CANARY}\n")
    (repo / "creds.yaml").symlink_to(tmp_path / "credentials")
    (repo / "env.yaml").symlink_to("/proc/self/environ")
    (repo / "p.yaml").write_text(PIPELINE.format(target='""'))
    for fmt in ("text", "json"):
        main(["check", "--format", fmt, str(repo)])
        printed = "".join(capsys.readouterr())
        assert "p.yaml" in printed and ("1 file checked" in printed or fmt == "json")
        assert CANARY not in printed and KEY not in printed and "creds.yaml" not in printed and "env.yaml" not in printed


def test_the_language_server_redacts_a_key_a_finding_quotes(tmp_path: Path) -> None:
    from pygls.workspace import TextDocument

    from contractstudio.lsp.analyses import Analyses
    from contractstudio.lsp.convert import Positions, diagnostic

    file = tmp_path / "leak.pipeline.yaml"
    text = f"kind: pipeline\nname: rag\nentry_step_id: a\nsteps:\n  - {{id: a, action: call_model, prompt: p, next: {KEY}}}\n"
    file.write_text(text)
    report = Analyses(lambda e: None, debounce_s=0.0).analyze(str(file), text)
    pos = Positions(TextDocument(file.as_uri(), text), text)
    sent = [diagnostic(d, pos, file.as_uri(), str(file)) for d in report.diagnostics]
    assert any(d.code == "PIP102" and "next names '***'" in d.message for d in sent)
    assert KEY not in repr(sent)


# issue 32.6: a folder's .contractstudioignore is read by the one bounded reader, after the path policy


def ignore_project(tmp_path: Path) -> Path:
    """A checkout with a contract that has scenarios and a broken one an ignore file would have skipped."""
    import shutil

    repo = project(tmp_path)
    shutil.copy(Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml", repo)
    return repo


@pytest.mark.parametrize("command", ["check", "test"])
def test_an_ignore_file_linked_to_proc_self_mem_is_skipped_with_a_note(command: str, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    repo = ignore_project(tmp_path)
    (repo / ".contractstudioignore").symlink_to("/proc/self/mem")
    code = main([command, str(repo)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert (f"contractstudio: skipped {repo / '.contractstudioignore'}: its patterns are not applied: "
            f"{repo / '.contractstudioignore'} is a view of the running system, not a file of yours; it is not read") in err
    assert "Traceback" not in out + err and ("passed, 0 failed" in out if command == "test" else "0 errors" in out)


def test_an_ignore_file_that_is_a_fifo_is_skipped_with_a_note_without_blocking(tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = ignore_project(tmp_path)
    os.mkfifo(repo / ".contractstudioignore")  # stands for /proc/kmsg: a read that never ends
    code = main(["check", str(repo)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"skipped {repo / '.contractstudioignore'}: its patterns are not applied: " in err
    assert "is a FIFO (named pipe), not a regular file" in err


def test_an_ignore_file_past_its_size_bound_is_skipped_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = ignore_project(tmp_path)
    (repo / ".contractstudioignore").write_text("# padding\n" * 10_000, encoding="utf-8")  # 100 KB of patterns
    code = main(["check", str(repo)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "is larger than 65,536 bytes; it is not read" in err and "0 errors" in out


def test_an_ignore_file_still_skips_what_it_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = ignore_project(tmp_path)
    (repo / "broken").mkdir()
    (repo / "broken" / "b.contract.yaml").write_text("kind: contract\nname: b\nnope: 1\n", encoding="utf-8")
    (repo / ".contractstudioignore").write_text("# demos\nbroken/\n", encoding="utf-8")
    code = main(["check", str(repo)])
    out, err = capsys.readouterr()
    assert code == 0 and "b.contract.yaml" not in out + err and "1 file" in out


def test_an_ignore_file_with_a_pattern_past_its_length_bound_is_skipped_with_a_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # fnmatch's translation costs the square of a pattern's length when its '[' are left open: one 60,000-character
    # line of '[a' (within the 64 KB bound) held `check` for 147 s, before any file was checked
    repo = ignore_project(tmp_path)
    (repo / ".contractstudioignore").write_text("broken/\n" + "[a" * 1_000 + "\n", encoding="utf-8")
    code = main(["check", str(repo)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert (f"contractstudio: skipped {repo / '.contractstudioignore'}: its patterns are not applied: "
            "line 2 is longer than 256 characters, which no pattern needs") in err and "0 errors" in out
