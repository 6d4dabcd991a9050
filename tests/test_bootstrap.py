"""scripts/bootstrap.sh: one environment serves the studio's script and the tests' script; they never reinstall
each other (issue 36.9), and a changed pin or a new extra installs again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A stand-in for .venv/bin/python: it notes each install it is asked for instead of installing.
FAKE_PYTHON = '#!/bin/sh\necho "$@" >> "$(dirname "$0")/../installs"\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", tmp_path / "scripts" / "bootstrap.sh")
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return tmp_path


def bootstrap(project: Path, extras: str = "") -> list[str]:
    """Run the script as studio.sh ("") or test.sh ("[test,ray]") do; the specs it installed this time."""
    installs = project / ".venv" / "installs"
    before = installs.read_text().splitlines() if installs.exists() else []
    subprocess.run(["bash", str(project / "scripts" / "bootstrap.sh"), *([extras] if extras else [])], check=True,
                   capture_output=True, text=True)
    after = installs.read_text().splitlines() if installs.exists() else []
    return [_sorted(line.split()[-1]) for line in after[len(before):]]


def _sorted(spec: str) -> str:
    """`.[test,ray]` as `.[ray,test]`: pip reads extras as a set."""
    extras = spec.removeprefix(".").strip("[]")
    return "." + (f"[{','.join(sorted(extras.split(',')))}]" if extras else "")


def test_the_studio_and_the_tests_take_turns_without_installing_again(project: Path) -> None:
    assert bootstrap(project, "[test,ray]") == [".[ray,test]"]
    assert bootstrap(project) == []  # the studio needs no extra: what the tests installed serves it
    assert bootstrap(project, "[test,ray]") == []
    assert bootstrap(project) == []


def test_the_tests_after_the_studio_install_only_once_and_keep_both(project: Path) -> None:
    assert bootstrap(project) == ["."]
    assert bootstrap(project, "[test,ray]") == [".[ray,test]"]
    assert bootstrap(project) == [] and bootstrap(project, "[ray, test]") == []  # the same set, however written


def test_a_new_extra_or_a_changed_pin_installs_again_keeping_the_extras_installed(project: Path) -> None:
    assert bootstrap(project, "[test,ray]") == [".[ray,test]"]
    assert bootstrap(project, "[test,ray,local]") == [".[local,ray,test]"]
    assert bootstrap(project, "[test]") == []
    with (project / "constraints.txt").open("a") as pins:
        pins.write("# changed\n")
    assert bootstrap(project) == [".[local,ray,test]"]  # the pins changed: everything installed is installed again
    assert bootstrap(project, "[test,ray,local]") == []
