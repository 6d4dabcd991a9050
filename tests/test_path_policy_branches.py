"""Each refusal of the one path policy (storage/paths.py: input_problem, folder_problem, base_problem; its write twin
storage/atomic.py: target_problem; the bounded reader reading/data_files.py: read_bounded) has a test of its own,
so that no branch can be taken out with the suite still passing (issue 32, review by mutation: with the /proc guard
of input_problem disabled, `check /proc/self/environ` printed the environment and every suite passed)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from contractstudio.cli import main
from contractstudio.reading.data_files import UnreadableData, read_bounded
from contractstudio.storage.atomic import target_problem
from contractstudio.storage.paths import base_problem, folder_problem, input_problem

CANARY = "canary-value-no-shape-4711"  # a value redaction cannot recognise: it must never be read at all
QA = str(Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml")


def refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    return out, err


@pytest.fixture
def in_dev() -> Iterator[Path]:
    """A regular file under /dev (/dev/shm is a tmpfs anyone may write)."""
    path = Path("/dev/shm") / f"contractstudio-policy-{os.getpid()}.yaml"
    path.write_text("kind: contract\nname: x\n", encoding="utf-8")
    yield path
    path.unlink()


def regular_file_under_sys() -> Path:
    """A regular file of /sys: the kernel's attributes are regular in name only."""
    for root, _dirs, files in os.walk("/sys/kernel"):
        for name in sorted(files):
            path = Path(root) / name
            if path.is_file() and os.access(path, os.R_OK):
                return path
    raise AssertionError("no readable regular file under /sys/kernel")


# ------------------------------------------------------------------ input_problem: a file named on a command line


@pytest.mark.parametrize("command", [["check"], ["run"], ["export"]])
def test_the_environment_named_on_a_command_line_is_never_read(command: list[str], monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CS_CANARY", CANARY)
    link = tmp_path / "env.contract.yaml"
    link.symlink_to("/proc/self/environ")  # judged where it leads
    for given in ("/proc/self/environ", str(link)):
        out, err = refused(capsys, [*command, given])
        assert f"{given} is a view of the running system, not a file of yours; it is not read" in err
        assert CANARY not in out + err and "CS_CANARY" not in out + err


@pytest.mark.parametrize("tree", ["/proc", "/sys", "/dev"])
def test_a_regular_file_under_each_system_tree_is_refused(tree: str, in_dev: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = {"/proc": Path("/proc/self/status"), "/sys": regular_file_under_sys(), "/dev": in_dev}[tree]
    assert path.is_file()  # stat calls it a regular file: the tree decides
    _, err = refused(capsys, ["check", str(path)])
    assert f"{path} is a view of the running system, not a file of yours; it is not read" in err


def test_a_missing_file_is_named_as_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "gone.contract.yaml"
    assert f"no such file or folder: {missing}" in refused(capsys, ["check", str(missing)])[1]  # check takes folders
    assert f"no such file: {missing}" in refused(capsys, ["run", str(missing)])[1]
    under_a_file = tmp_path / "file.txt"
    under_a_file.write_text("x")
    assert f"no such file: {under_a_file / 'c.yaml'}" in refused(capsys, ["run", str(under_a_file / "c.yaml")])[1]


def test_a_path_that_cannot_be_looked_up_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loop = tmp_path / "loop.contract.yaml"
    loop.symlink_to(loop)
    assert f"cannot read {loop}: Too many levels of symbolic links" in refused(capsys, ["run", str(loop)])[1]


def test_a_folder_is_a_file_argument_only_where_folders_are_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert f"{tmp_path} is a folder, not a file" in refused(capsys, ["run", str(tmp_path)])[1]
    assert input_problem(tmp_path, folders=True) is None  # check DIR, test DIR


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_a_device_and_a_socket_are_each_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    server = socket.socket(socket.AF_UNIX)
    sock = tmp_path / "s.yaml"
    server.bind(str(sock))
    try:
        for path, kind in ((fifo, "a FIFO (named pipe)"), (Path("/dev/null"), "a character device"), (sock, "a socket")):
            _, err = refused(capsys, ["check", str(path)])
            assert f"{path} is {kind}, not a regular file; only regular files are read" in err
    finally:
        server.close()


def test_a_regular_file_of_yours_is_allowed(tmp_path: Path) -> None:
    file = tmp_path / "c.contract.yaml"
    file.write_text("kind: contract\n")
    assert input_problem(file) is None and input_problem(file, folders=True) is None


# ------------------------------------------------------------------ folder_problem: a folder a run fills


def test_a_traces_folder_under_a_system_tree_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    _, err = refused(capsys, ["eval", QA, "--data", QA, "--scripted", "--traces", "/dev/shm/traces"])
    assert "cannot write the traces: /dev/shm/traces is under /proc, /sys or /dev, not a folder of yours" in err
    assert not Path("/dev/shm/traces").exists()


def test_a_traces_folder_with_a_file_or_a_fifo_in_the_way_names_what_is_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine")
    assert folder_problem(tmp_path / "file" / "traces") == f"{tmp_path / 'file'} is a file, not a folder"
    os.mkfifo(tmp_path / "fifo")
    assert folder_problem(tmp_path / "fifo") == f"{tmp_path / 'fifo'} is not a folder, not a folder"


def test_a_traces_folder_that_cannot_be_written_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import contractstudio.storage.paths as paths

    # root may write anywhere: the answer of the OS is what the rule asks, so that answer is what the test sets
    monkeypatch.setattr(paths.os, "access", lambda path, mode: Path(path) != tmp_path)
    assert folder_problem(tmp_path / "a" / "traces") == f"cannot write in the folder {tmp_path}: permission denied"


def test_a_traces_folder_that_is_yet_to_be_made_is_allowed(tmp_path: Path) -> None:
    assert folder_problem(tmp_path / "a" / "b") is None and not (tmp_path / "a").exists()


# ------------------------------------------------------------------ base_problem: a file another file names


def test_a_base_is_refused_for_each_reason_and_allowed_inside_the_workspace(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "base.yaml").write_text("x: 1\n")
    (tmp_path / "outside.yaml").write_text("x: 1\n")
    os.mkfifo(repo / "fifo.yaml")
    assert base_problem(Path("/proc/self/environ"), [Path("/")]) == (
        "it is a view of the running system (/proc, /sys, /dev), not a file of the workspace")
    assert base_problem(tmp_path / "outside.yaml", [repo]) == f"it is outside the workspace ({repo})"
    assert base_problem(repo / "missing.yaml", [repo]) == "No such file or directory"
    assert base_problem(repo / "fifo.yaml", [repo]) == "it is a FIFO (named pipe), not a regular file"
    assert base_problem(repo / "sub", [repo]) == "it is a folder, not a regular file"
    assert base_problem(repo / "sub" / ".." / "base.yaml", [repo]) is None


# ------------------------------------------------------------------ target_problem: an output path


def test_an_output_path_is_refused_for_each_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import contractstudio.storage.atomic as atomic

    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert target_problem(loop) == f"cannot use {loop}: Too many levels of symbolic links"
    assert target_problem(tmp_path) == f"{tmp_path} is a folder; only regular files are written"
    assert target_problem(tmp_path / "no" / "out") == f"the folder {tmp_path / 'no'} does not exist"
    (tmp_path / "file").write_text("mine")
    assert target_problem(tmp_path / "file" / "out") == f"{tmp_path / 'file'} is not a folder"
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "file")
    assert target_problem(link) is None  # a link a user names is followed to the file it means
    monkeypatch.setattr(atomic.os, "access", lambda path, mode: False)
    assert target_problem(tmp_path / "out") == f"cannot write in the folder {tmp_path}: permission denied"


# ------------------------------------------------------------------ read_bounded: the open after the policy


def test_a_file_swapped_for_a_fifo_after_the_policy_is_refused_without_blocking(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import contractstudio.reading.data_files as data_files

    fifo = tmp_path / "settings.yaml"
    os.mkfifo(fifo)
    monkeypatch.setattr(data_files, "input_problem", lambda path: None)  # the policy said yes to a regular file
    with pytest.raises(UnreadableData, match="is not a regular file; only regular files are read"):
        read_bounded(fifo, 1024)


def test_a_data_file_past_its_bound_is_refused_and_one_within_is_read(tmp_path: Path) -> None:
    file = tmp_path / "settings.yaml"
    file.write_bytes(b"x" * 1025)
    with pytest.raises(UnreadableData, match=f"{file} is larger than 1,024 bytes; it is not read"):
        read_bounded(file, 1024)
    assert read_bounded(file, 1025) == b"x" * 1025


# ------------------------------------------------------------------ named_file_problem: a file the tool names in a folder


def test_a_name_the_tool_makes_stays_one_plain_file_in_its_folder(tmp_path: Path) -> None:
    from contractstudio.storage.atomic import named_file_problem, write_named

    for name in ("", ".", "..", "../row-1.jsonl", "sub/row-1.jsonl", "..\\row-1.jsonl"):
        assert named_file_problem(tmp_path, name) == f"{name!r} is not a file name inside {tmp_path}"
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")  # dangling: would create the file it names
    assert named_file_problem(tmp_path, "link") == ("it is a symbolic link; a file the tool names in a folder is "
                                                     "never written through one")
    assert not (tmp_path / "elsewhere").exists()
    (tmp_path / "sub").mkdir()
    assert named_file_problem(tmp_path, "sub") == "it is a folder; only regular files are written"
    with pytest.raises(OSError, match="is not a file name inside") as err:
        write_named(tmp_path, "../out.jsonl", "x")
    assert err.value.filename == str(tmp_path / "../out.jsonl") and not (tmp_path.parent / "out.jsonl").exists()
    assert write_named(tmp_path, "row-1.jsonl", "x\n").path == tmp_path / "row-1.jsonl"
    assert (tmp_path / "row-1.jsonl").read_text() == "x\n"
