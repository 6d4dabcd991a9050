"""Nothing lost: a process killed in the middle of a save leaves the old file or the new one, never a mix."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

from contractstudio.storage.atomic import NotARegularFile, target_problem, write_atomic

OLD = "kind: tools\nname: old\ntools: []\n"
NEW = "kind: tools\nname: new\ntools: []\n" + "# padding\n" * 200_000  # a few MB: the write takes a while

CHILD = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    import contractstudio.storage.atomic as saving
    stage = sys.argv[2]
    real_fsync, real_replace = os.fsync, os.replace
    def slow_fsync(fd):
        print("written", flush=True)      # the temp file is full, not yet renamed
        if stage == "before-rename":
            time.sleep(60)
        real_fsync(fd)
    def replace_then_wait(src, dst):
        real_replace(src, dst)
        print("renamed", flush=True)
        if stage == "after-rename":
            time.sleep(60)
    saving.os.fsync = slow_fsync
    saving.os.replace = replace_then_wait
    saving.write_atomic(Path(sys.argv[1]), "kind: tools\\nname: new\\ntools: []\\n" + "# padding\\n" * 200_000)
    """
)


@pytest.mark.parametrize("stage, expected", [("before-rename", OLD), ("after-rename", NEW)], ids=["before-rename", "after-rename"])
def test_killed_mid_save_leaves_old_or_new_never_a_mix(tmp_path: Path, stage: str, expected: str) -> None:
    target = tmp_path / "notes.tools.yaml"
    target.write_text(OLD)
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(target), stage], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    wanted = "written" if stage == "before-rename" else "renamed"
    for line in proc.stdout:
        if line.strip() == wanted:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert target.read_text() == expected


def test_save_keeps_permissions_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a.yaml"
    target.write_text(OLD)
    target.chmod(0o640)
    write_atomic(target, NEW)
    assert target.read_text() == NEW
    assert (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]


def test_a_failed_save_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.yaml"
    target.write_text(OLD)

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("contractstudio.storage.atomic.os.fsync", disk_full)
    with pytest.raises(OSError):
        write_atomic(target, NEW)
    assert target.read_text() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]


# What is saved is the file the user means, and only a regular file is ever replaced ------------------------


def test_save_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text(OLD)
    link = tmp_path / "link.yaml"
    link.symlink_to(real.name)
    write_atomic(link, NEW)
    assert link.is_symlink() and os.readlink(link) == real.name
    assert real.read_text() == NEW


def test_a_fifo_is_refused_and_left_alone(tmp_path: Path) -> None:
    fifo = tmp_path / "out.yaml"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile, match="FIFO"):
        write_atomic(fifo, NEW)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.yaml"]


def test_a_device_is_never_replaced() -> None:
    # Only the check: the old code, run as root, renamed a regular file over /dev/null.
    assert target_problem("/dev/null") == "/dev/null is a character device; only regular files are written"
    with pytest.raises(NotARegularFile, match="character device"):
        write_atomic(Path("/dev/null"), NEW)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_hard_links_all_see_the_new_text(tmp_path: Path) -> None:
    first = tmp_path / "a.yaml"
    first.write_text(OLD)
    second = tmp_path / "b.yaml"
    os.link(first, second)
    saved = write_atomic(first, NEW)
    assert second.read_text() == NEW and first.stat().st_nlink == 2
    assert any("hard links" in note for note in saved.notes)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_the_owner_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "a.yaml"
    target.write_text(OLD)
    os.chown(target, 1234, 5678)
    write_atomic(target, NEW)
    st = target.stat()
    assert (st.st_uid, st.st_gid) == (1234, 5678)


def test_new_files_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.yaml", NEW)
        os.umask(0o027)
        write_atomic(tmp_path / "private.yaml", NEW)
    finally:
        os.umask(old)
    assert (tmp_path / "new.yaml").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "private.yaml").stat().st_mode & 0o777 == 0o640


def test_a_killed_saves_leftover_is_removed_by_the_next_save_but_a_live_one_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "a.yaml"
    target.write_text(OLD)
    leftover = tmp_path / ".a.yaml.k1ll3d_x.tmp"
    leftover.write_text("half a save")
    other_file = tmp_path / ".b.yaml.k1ll3d_x.tmp"  # another file's temporary: not ours to remove
    other_file.write_text("b")
    live = tmp_path / ".a.yaml.s4v1ng_x.tmp"
    live.write_text("being written")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, sys, time
        f = open({str(live)!r}, "rb"); fcntl.flock(f, fcntl.LOCK_EX); print("locked", flush=True); time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        write_atomic(target, NEW)
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert target.read_text() == NEW
    assert sorted(p.name for p in tmp_path.iterdir()) == [".a.yaml.s4v1ng_x.tmp", ".b.yaml.k1ll3d_x.tmp", "a.yaml"]


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing" / "out.yaml", "does not exist"),
    (lambda d: d, "is a folder"),
], ids=["missing-folder", "a-folder"])
def test_target_problem_names_what_is_wrong(tmp_path: Path, make, message: str) -> None:
    assert message in (target_problem(make(tmp_path)) or "")
    assert target_problem(tmp_path / "fine.yaml") is None
