"""Nothing lost: a process killed in the middle of a save leaves the old file or the new one, never a mix."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

from contractstudio.storage.atomic import write_atomic

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
