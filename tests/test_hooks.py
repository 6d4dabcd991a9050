"""One hook resolver for the analyzer (TOL102) and the runtime: the file's own folder, cleaned up, fresh after edits."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.analysis.check import Context, check_file
from contractstudio.hooks import HookError, resolve_hook
from contractstudio.trust import hook_folder

CONTRACT = """\
kind: tools
name: t
tools:
  - name: echo
    description: Echo.
    params:
      text: {type: str, description: Text.}
    preconditions:
      - python: "shared_hooks:check"
"""


def project(tmp_path: Path, name: str, verdict: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "shared_hooks.py").write_text(f"def check(text):\n    return {verdict}, '{name} said no'\n")
    (folder / "t.tools.yaml").write_text(CONTRACT)
    return folder


@pytest.fixture(autouse=True)
def _forget_hook_modules() -> None:
    yield
    sys.modules.pop("shared_hooks", None)


def test_two_folders_with_a_hook_module_of_the_same_name_each_get_their_own(tmp_path: Path) -> None:
    a, b = project(tmp_path, "a", "True"), project(tmp_path, "b", "False")
    assert resolve_hook("shared_hooks:check", a)("x") == (True, "a said no")
    assert resolve_hook("shared_hooks:check", b)("x") == (False, "b said no")
    tools_a = cs.load(a / "t.tools.yaml", trust=True)
    tools_b = cs.load(b / "t.tools.yaml", trust=True)
    assert "b said no" in str(tools_b.call("echo", text="x"))
    assert "said no" not in str(tools_a.call("echo", text="x"))


def test_the_folder_is_on_sys_path_only_while_the_hook_is_imported(tmp_path: Path) -> None:
    a = project(tmp_path, "a", "True")
    resolve_hook("shared_hooks:check", a)
    cs.load(a / "t.tools.yaml", trust=True).call("echo", text="x")
    assert str(a) not in sys.path


def test_a_hook_edited_after_it_was_imported_is_imported_afresh_at_run_time(tmp_path: Path) -> None:
    a = project(tmp_path, "a", "True")
    assert resolve_hook("shared_hooks:check", a)("x")[0] is True
    hook = a / "shared_hooks.py"
    hook.write_text("def check(text):\n    return False, 'edited'\n")
    later = time.time() + 5
    os.utime(hook, (later, later))
    assert resolve_hook("shared_hooks:check", a)("x") == (False, "edited")


def test_analysis_and_runtime_report_the_same_problem(tmp_path: Path) -> None:
    a = project(tmp_path, "a", "True")
    (a / "t.tools.yaml").write_text(CONTRACT.replace("shared_hooks:check", "shared_hooks:chek"))
    with pytest.raises(HookError, match="has no attribute 'chek'.*did you mean 'check'"):
        resolve_hook("shared_hooks:chek", a)
    report = check_file(a / "t.tools.yaml", Context(hooks=hook_folder(a, True)))
    assert [d.code for d in report.diagnostics] == ["TOL102"]
    assert "has no attribute 'chek'" in report.diagnostics[0].message
    with pytest.raises(cs.ContractError, match="has no attribute 'chek'"):
        cs.load(a / "t.tools.yaml", trust=True).call("echo", text="x")
