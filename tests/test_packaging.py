"""The built wheel is complete: installed away from the source tree, the studio opens with its bundled theme."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Runs in a process whose sys.path starts with the installed copy (never the source tree): the app
# starts headless on a sample and reports where the package and its theme came from.
PROBE = """
import asyncio, sys
sys.path.insert(0, sys.argv[1])
import contractstudio
from contractstudio.studio.app import StudioApp

async def main():
    app = StudioApp([sys.argv[2]])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        print(contractstudio.__file__)
        print(app.theme)
        print(sorted(app.available_themes))

asyncio.run(main())
"""


@pytest.mark.slow
def test_the_installed_wheel_ships_its_themes_and_types(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(ROOT)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    wheel = next(wheels.glob("contractstudio-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "contractstudio/studio/bundled_themes/contractstudio-dark.yaml" in names
    assert "contractstudio/studio/bundled_themes/contractstudio-light.yaml" in names
    assert "contractstudio/py.typed" in names
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                                "--target", str(target), str(wheel)],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    probe = subprocess.run([sys.executable, "-c", PROBE, str(target), str(ROOT / "samples" / "multidoc_qa.contract.yaml")],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                                                                         "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert probe.returncode == 0, probe.stderr
    where, theme, available = probe.stdout.strip().splitlines()[-3:]
    assert where.startswith(str(target))  # the installed copy, not the source tree
    assert theme == "contractstudio-dark"  # the bundled default theme, read from package data
    assert "'contractstudio-light'" in available
