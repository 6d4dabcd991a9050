"""Every file a user names on a command line goes through one rule (storage/paths.py: input_problem) before it
is opened: a FIFO, a device or a folder is refused with one message style (exit 2), never read or waited on.
Every output path goes through one rule too (storage/atomic.py: target_problem)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from contractstudio.cli import main

ROOT = Path(__file__).resolve().parent.parent
QA = str(ROOT / "samples" / "multidoc_qa.contract.yaml")
ROWS = str(ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl")
RAG = str(ROOT / "samples" / "rag_router.pipeline.yaml")

# Each command with the place of the file argument tried (F); the other arguments are valid.
COMMANDS = {
    "check": ["check", "F"],
    "test": ["test", "F"],
    "studio": ["studio", "F"],
    "run": ["run", "F", "--input", "F"],
    "run --input": ["run", QA, "--input", "F"],
    "run --replay": ["run", QA, "--replay", "F"],
    "eval": ["eval", "F", "--data", ROWS, "--scripted"],
    "eval --data": ["eval", QA, "--data", "F", "--scripted"],
    "eval --baseline": ["eval", QA, "--data", ROWS, "--scripted", "--baseline", "F"],
    "eval --replay": ["eval", QA, "--data", ROWS, "--replay", "F"],
    "eval --resume": ["eval", QA, "--data", ROWS, "--scripted", "--resume", "--out", "F"],
    "export": ["export", "F"],
    "convert": ["convert", "F", "--to", "contractstudio"],
    "graph": ["graph", "F"],
    "simulate": ["simulate", "F", "--reply", "x"],
}


def refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    return err


@pytest.mark.timeout(20)  # before the rule, a FIFO blocked these commands until killed
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("command", COMMANDS)
def test_a_fifo_given_as_a_file_is_refused_by_every_command(command: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    err = refused(capsys, [str(fifo) if a == "F" else a for a in COMMANDS[command]])
    assert f"contractstudio: error: {fifo} is a FIFO (named pipe), not a regular file; only regular files are read" in err


@pytest.mark.parametrize("command", [c for c in COMMANDS if c not in ("check", "test", "studio")])  # these take folders
def test_a_folder_given_as_a_file_is_said_to_be_a_folder(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(capsys, [str(tmp_path) if a == "F" else a for a in COMMANDS[command]])
    assert f"contractstudio: error: {tmp_path} is a folder, not a file" in err


def test_a_binary_input_is_named_with_checks_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "in.yaml"
    binary.write_bytes(b"\xc0\x80 not text")
    err = refused(capsys, ["run", QA, "--input", str(binary)])
    assert f"contractstudio: error: {binary}: the file is not UTF-8 text (byte 0)" in err
    assert "codec" not in err


def test_replaying_a_file_that_is_not_a_trace_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "bin.yaml"
    other.write_bytes(b"\xc0\x80\x00 not a trace")
    err = refused(capsys, ["run", QA, "--replay", str(other)])
    assert f"{other} is not a trace" in err and "records no input" not in err


def test_an_unknown_option_is_shown_with_the_commands_own_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["check", RAG, "--bogus"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "usage: contractstudio check" in err and "contractstudio check: error: unrecognized arguments: --bogus" in err


@pytest.mark.parametrize("argv", [
    ["eval", QA, "--data", ROWS, "--scripted", "--out", "OUT"],
    ["run", QA, "--scenario", "answered-first-time", "--trace", "OUT"],
    ["export", QA, "-o", "OUT"],
    ["convert", str(ROOT / "samples" / "localai_rag" / "pipelines" / "repo_qa.yaml"), "--to", "contractstudio", "-o", "OUT"],
    ["lsp", "--log-file", "OUT"],
])
def test_an_output_in_a_missing_folder_is_refused_by_every_command(argv: list[str], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nonexistent" / "out.jsonl"
    err = refused(capsys, [str(missing) if a == "OUT" else a for a in argv])
    assert f"the folder {missing.parent} does not exist" in err
    assert not missing.parent.exists()


@pytest.mark.timeout(20)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_eval_out_onto_a_fifo_is_refused_without_blocking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "r.jsonl"
    os.mkfifo(fifo)
    err = refused(capsys, ["eval", QA, "--data", ROWS, "--scripted", "--out", str(fifo), "--overwrite"])
    assert "is a FIFO (named pipe); only regular files are written" in err


@pytest.mark.timeout(20)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_language_server_log_file_that_is_not_a_regular_file_is_refused_before_serving(
        kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32.7: `lsp --log-file` follows the rule of every output path; a FIFO hung the server before it answered."""
    log = tmp_path / "lsp.log"
    os.mkfifo(log) if kind == "fifo" else log.mkdir()
    err = refused(capsys, ["lsp", "--log-file", str(log)])
    assert f"cannot write the log: {log} is {'a FIFO (named pipe)' if kind == 'fifo' else 'a folder'}; " \
           "only regular files are written" in err


def _disk_full(*args: object, **kwargs: object) -> int:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_is_a_message_for_convert_and_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import contractstudio.storage.atomic as atomic

    monkeypatch.setattr(atomic.os, "write", _disk_full)
    out = tmp_path / "c.yaml"
    source = str(ROOT / "samples" / "localai_rag" / "pipelines" / "repo_qa.yaml")
    assert main(["convert", source, "--to", "contractstudio", "-o", str(out)]) == 1
    assert f"could not write {out}: No space left on device" in capsys.readouterr().err
    monkeypatch.undo()

    results = tmp_path / "r.jsonl"
    real_open = open

    def full_disk_open(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        handle = real_open(file, mode, *args, **kwargs)  # type: ignore[call-overload]
        if str(file) == str(results) and ("a" in mode or "w" in mode):
            handle.write = _disk_full
        return handle

    monkeypatch.setattr("builtins.open", full_disk_open)
    assert main(["eval", QA, "--data", ROWS, "--scripted", "--out", str(results), "--quiet"]) == 1
    assert f"could not write {results}: No space left on device" in capsys.readouterr().err
