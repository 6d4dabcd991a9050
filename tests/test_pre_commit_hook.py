"""`.pre-commit-hooks.yaml`: `contractstudio check` as a pre-commit hook, run by pre-commit on a scratch repository
whose `.pre-commit-config.yaml` names this checkout, as a user's config names a hook's repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROKEN = """\
kind: pipeline
name: rag
entry_step_id: answer
steps:
  - id: answer
    action: call_model
    prompt: answer_v1
    next: persst
  - id: persist
    action: persist_turn
    end: true
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def this_checkout_as_a_commit(tmp_path: Path) -> tuple[Path, str]:
    """A clone of this checkout with its uncommitted changes to tracked files committed (what `try-repo` does), and
    that commit: a config names a repository and a revision, and the hook is tried as it is in the working tree."""
    shadow = tmp_path / "shadow"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(shadow)], check=True, capture_output=True)
    diff = subprocess.run(["git", "-C", str(ROOT), "diff", "HEAD", "--binary"], check=True, capture_output=True).stdout
    if diff:
        subprocess.run(["git", "-C", str(shadow), "apply", "-"], input=diff, check=True, capture_output=True)
    git(shadow, "-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-am", "as tried")
    rev = subprocess.run(["git", "-C", str(shadow), "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    return shadow, rev


@pytest.mark.slow
@pytest.mark.timeout(900)  # pre-commit installs the package and its dependencies into a fresh virtualenv first
def test_the_hook_fails_on_a_broken_pipeline_and_passes_once_it_is_fixed(tmp_path: Path) -> None:
    shadow, rev = this_checkout_as_a_commit(tmp_path)
    repo = tmp_path / "scratch"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {shadow.as_uri()}\n    rev: {rev}\n    hooks:\n      - id: contractstudio-check\n", encoding="utf-8")
    (repo / "rag.pipeline.yaml").write_text(BROKEN, encoding="utf-8")
    (repo / "deploy.yaml").write_text("apiVersion: v1\nkind: Service\n", encoding="utf-8")  # not ours: not checked
    git(repo, "add", ".")
    # One pre-commit home for both runs: the hook's environment is installed once (about 40 s), as on a user's machine.
    # No byte-compiling of the hook environment's packages (litellm is thousands of modules): the hook runs the same.
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_COMPILE": "1"}
    pre_commit = [sys.executable, "-m", "pre_commit", "run", "contractstudio-check", "--all-files"]

    failed = subprocess.run(pre_commit, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "contractstudio check" in failed.stdout and "Failed" in failed.stdout
    assert "rag.pipeline.yaml:8:11: error PIP102 step 'answer': next names 'persst', which is not a step" in failed.stdout
    assert "deploy.yaml" not in failed.stdout

    (repo / "rag.pipeline.yaml").write_text(BROKEN.replace("persst", "persist"), encoding="utf-8")
    git(repo, "add", ".")
    passed = subprocess.run(pre_commit, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_the_hook_definition_names_the_check_command() -> None:
    import yaml

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "contractstudio-check" and hook["entry"] == "contractstudio check" and hook["language"] == "python"
    assert shutil.which("git") is not None


def test_a_staged_file_whose_name_starts_with_a_dash_is_checked_not_read_as_an_option(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from contractstudio.cli import main

    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-h.pipeline.yaml").write_text(BROKEN, encoding="utf-8")
    # pre-commit runs the entry, then the hook's args, then the staged files (relative to the repository)
    argv = [*hook["entry"].split()[1:], *hook.get("args", []), "-h.pipeline.yaml"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "-h.pipeline.yaml:8:11: error PIP102" in out and "usage:" not in out


def test_a_users_args_without_the_closing_dashes_still_check_a_staged_file_named_like_an_option(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from contractstudio.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "-h.pipeline.yaml").write_text(BROKEN, encoding="utf-8")
    (tmp_path / "ok.pipeline.yaml").write_text(BROKEN.replace("persst", "persist"), encoding="utf-8")
    # a user's `args: [--fail-level, warning]` (no `--`): pre-commit appends the staged files after them
    assert main(["check", "--fail-level", "warning", "-h.pipeline.yaml", "ok.pipeline.yaml"]) == 1
    out = capsys.readouterr().out
    assert "-h.pipeline.yaml:8:11: error PIP102" in out and "usage:" not in out
