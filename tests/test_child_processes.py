"""Every process ContractStudio starts begins with a `sys.path` that holds no folder the user did not trust
(issue 32.1): a cloned repository's `asyncio.py` or `pydantic.py` beside a contract never runs in an eval
worker, whatever folder `eval` is started from. The planted modules write a marker file when imported, so
"imported" is a fact on disk. (Ray's workers: tests/test_eval_ray.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_eval import GOOD, LOW, QA, qa_row

PLANTED = ("asyncio", "pydantic", "yaml")


def cloned_repository(root: Path) -> Path:
    """A folder as a clone may hold it: a contract, its rows, and modules named like the ones a worker imports."""
    root.mkdir()
    (root / "q.contract.yaml").write_text(QA.read_text())
    rows = [qa_row(f"q{i}", [GOOD] if i % 2 else [LOW, GOOD]) for i in range(6)]
    (root / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    for name in PLANTED:
        (root / f"{name}.py").write_text(f"from pathlib import Path\nPath(__file__).with_name('{name}.RAN').write_text('imported')\n")
    return root


def ran(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("*.RAN"))


def test_eval_workers_never_import_a_module_planted_in_the_current_folder(tmp_path: Path) -> None:
    clone = cloned_repository(tmp_path / "clone")
    command = [str(Path(sys.executable).with_name("contractstudio")), "eval", "q.contract.yaml", "--data", "rows.jsonl",
               "--scripted", "--workers", "2", "--out", "r.jsonl", "--json"]
    done = subprocess.run(command, cwd=clone, capture_output=True, text=True, timeout=300)
    assert ran(clone) == []
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert (summary["rows"], summary["successful"], summary["remedied"]) == (6, 6, 3)


def test_the_console_script_the_pre_commit_hook_runs_never_imports_from_the_folder_it_checks(tmp_path: Path) -> None:
    clone = cloned_repository(tmp_path / "clone")
    command = [str(Path(sys.executable).with_name("contractstudio")), "check", "--", "q.contract.yaml"]
    done = subprocess.run(command, cwd=clone, capture_output=True, text=True, timeout=120)
    assert ran(clone) == []
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_child_starts_without_its_folder_or_a_relative_pythonpath_on_sys_path(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.runtime.child_processes import python_child

    clone = cloned_repository(tmp_path / "clone")
    library = tmp_path / "library"  # a folder the user named in PYTHONPATH: theirs, kept
    library.mkdir()
    monkeypatch.setenv("PYTHONPATH", f"{library}::.:relative")  # an empty or relative entry is whatever folder a child is in
    monkeypatch.setenv("PYTHONSTARTUP", str(clone / "asyncio.py"))
    child = python_child("site")  # prints the child's sys.path
    done = subprocess.run(child.argv, env=child.env, cwd=clone, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    path = [line.strip().strip("',") for line in done.stdout.splitlines() if line.startswith("    ")]
    path = [p for p in path if "__editable__" not in p]  # `-m site` runs site again, which makes that hook's key absolute
    assert str(library) in path
    assert not [p for p in path if p in ("", ".", "relative") or p.startswith(str(clone))]
    assert "PYTHONSTARTUP" not in child.env and ran(clone) == []
