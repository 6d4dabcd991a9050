"""One hook resolver for the analyzer (TOL102) and the runtime: the file's own folder, cleaned up, fresh after edits."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.analysis.check import Context, check_file
from contractstudio.cli import main
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
QA = Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml"


def project(tmp_path: Path, name: str, verdict: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "shared_hooks.py").write_text(f"def check(text):\n    return {verdict}, '{name} said no'\n")
    (folder / "t.tools.yaml").write_text(CONTRACT)
    return folder


@pytest.fixture(autouse=True)
def _forget_hook_modules() -> Iterator[None]:
    saved = list(sys.path)
    yield
    sys.path[:] = saved
    for name in ("shared_hooks", "helper", "only_here", "first_hooks", "second_hooks"):
        sys.modules.pop(name, None)


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


def helper_project(root: Path, name: str) -> Path:
    """A folder with `c.contract.yaml` whose act hook imports `helper`, a module of the folder that says whose it is;
    the hook fails the call when the `helper` it was given is another folder's."""
    folder = root / name
    folder.mkdir()
    module = f"{name}_hooks"
    text = re.sub(r"act:.*?\n(post:)", f'act:\n  python: "{module}:retrieve"\n\\1', QA.read_text(), flags=re.S)
    (folder / "c.contract.yaml").write_text(text)
    (folder / "helper.py").write_text(f"OWNER = {name!r}\n")
    (folder / f"{module}.py").write_text(
        "import helper\n"
        "def retrieve(input, **kw):\n"
        f"    if helper.OWNER != {name!r}:\n"
        f"        raise RuntimeError('{name} was given the helper of ' + helper.OWNER)\n"
        "    return {'query': input.query, 'selected_sentences': [d.content for d in input.documents],"
        " 'target_snippet_count': 3}\n")
    return folder


def test_a_module_a_hook_imports_is_forgotten_before_another_folders_hook_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = helper_project(tmp_path, "first"), helper_project(tmp_path, "second")
    assert main(["test", "--trust", str(first / "c.contract.yaml"), str(second / "c.contract.yaml"), "-k", "first-time"]) == 0
    out = capsys.readouterr().out
    assert "first/c.contract.yaml::qa::first-time PASSED" in out and "second/c.contract.yaml::qa::first-time PASSED" in out
    assert "was given the helper" not in out
    # and back again: the first folder's hook gets its own helper once more, and no folder stays on sys.path
    resolve_hook("first_hooks:retrieve", first)
    assert sys.modules["helper"].OWNER == "first"  # type: ignore[attr-defined]
    resolve_hook("second_hooks:retrieve", second)
    assert sys.modules["helper"].OWNER == "second"  # type: ignore[attr-defined]
    assert not {str(first), str(second)} & set(sys.path)


def test_a_folder_a_hook_put_on_sys_path_is_taken_off_before_another_folders_hook_runs(tmp_path: Path) -> None:
    first, second = helper_project(tmp_path, "first"), helper_project(tmp_path, "second")
    (first / "only_here.py").write_text("OWNER = 'first'\n")
    (first / "first_hooks.py").write_text(
        "import sys, os\nsys.path.append(os.path.dirname(__file__))\nimport helper\ndef retrieve(input, **kw):\n    return None\n")
    (second / "second_hooks.py").write_text("import helper\ntry:\n    import only_here\nexcept ImportError:\n    only_here = None\n"
                                            "def retrieve(input, **kw):\n    return None\n")
    resolve_hook("first_hooks:retrieve", first)
    second_hook = resolve_hook("second_hooks:retrieve", second)
    assert second_hook.__globals__["only_here"] is None
    assert str(first) not in sys.path
