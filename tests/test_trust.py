"""Trust per folder on the command line (contractstudio.trust, the layer every face asks): a folder the
user remembered as trusted is trusted by `check`, `run` and `test` too, a folder next to it is not, and
`--trust` trusts the folders named on that command line only. The hook modules write a marker file when
imported, so "imported" is a fact on disk."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from contractstudio.cli import main
from contractstudio.trust import Trust, folder_of, remember_folder

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"


def hooked_folder(root: Path, name: str) -> tuple[Path, Path]:
    """A folder with a contract whose act is a Python hook; (the contract, the marker its module writes on import)."""
    folder = root / name
    folder.mkdir(parents=True)
    module = f"cli_hooks_{name}_{uuid.uuid4().hex[:8]}"
    text = re.sub(r"act:.*?\n(post:)", f'act:\n  python: "{module}:retrieve"\n\\1', QA.read_text(), flags=re.S)
    contract = folder / f"{name}.contract.yaml"
    contract.write_text(text)
    (folder / f"{module}.py").write_text(
        "from pathlib import Path\n"
        "Path(__file__).with_name('IMPORTED').write_text('imported')\n"
        "def retrieve(input, **kw):\n"
        "    return {'query': input.query, 'selected_sentences': [d.content for d in input.documents], 'target_snippet_count': 3}\n")
    return contract, folder / "IMPORTED"


def test_a_remembered_folder_is_trusted_by_check_and_its_neighbour_is_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine, mine_marker = hooked_folder(tmp_path, "mine")
    cloned, cloned_marker = hooked_folder(tmp_path, "cloned")
    remember_folder(mine.parent)  # "Always", answered in the studio
    assert main(["check", str(mine.parent), str(cloned.parent), "--fail-level", "info"]) == 1
    out = capsys.readouterr().out
    assert mine_marker.exists() and not cloned_marker.exists()
    assert [line.split(": ")[1].split()[1] for line in out.splitlines() if ": info " in line or ": error " in line] == ["TOL103"]
    assert str(cloned) in out and str(mine) + ":" not in out


def test_run_and_test_follow_the_folder_of_each_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine, mine_marker = hooked_folder(tmp_path, "mine")
    cloned, cloned_marker = hooked_folder(tmp_path, "cloned")
    remember_folder(mine.parent)
    assert main(["run", str(mine), "--scenario", "first-time"]) == 0
    assert mine_marker.exists()
    assert main(["run", str(cloned), "--scenario", "first-time"]) == 1
    assert "run only in a trusted" in capsys.readouterr().err and not cloned_marker.exists()
    assert main(["test", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "mine.contract.yaml::qa::first-time PASSED" in out and "cloned.contract.yaml::qa::first-time FAILED" in out
    assert not cloned_marker.exists()


def test_the_trust_flag_trusts_the_folders_named_on_the_command_line_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    named, named_marker = hooked_folder(tmp_path / "work", "named")
    nested, nested_marker = hooked_folder(tmp_path / "work" / "named", "nested")  # a subfolder: trusted with its parent
    other, other_marker = hooked_folder(tmp_path / "work", "other")
    assert main(["test", str(named), str(other.parent / "other.contract.yaml"), "--trust", "-k", "first-time"]) == 0
    assert named_marker.exists() and other_marker.exists()  # both files were named
    trust = Trust.for_command([named], True)
    assert trust.allows(nested) and not trust.allows(other) and not trust.allows(tmp_path / "work")
    assert not Trust().allows(named)  # --trust is for that command, not remembered
    capsys.readouterr()
    assert not nested_marker.exists()


def test_a_symlinked_file_is_judged_in_the_folder_it_really_is(tmp_path: Path) -> None:
    real, _ = hooked_folder(tmp_path / "elsewhere", "real")
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    (trusted / "link.contract.yaml").symlink_to(real)
    remember_folder(trusted)
    assert folder_of(trusted / "link.contract.yaml") == real.parent.resolve()
    assert not Trust().allows(trusted / "link.contract.yaml") and Trust().allows(trusted / "x.yaml")


def test_eval_follows_the_folder_of_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    mine, mine_marker = hooked_folder(tmp_path, "mine")
    cloned, cloned_marker = hooked_folder(tmp_path, "cloned")
    remember_folder(mine.parent)
    rows = tmp_path / "rows.jsonl"
    good = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
    rows.write_text(json.dumps({"input": {"query": "q", "documents": [{"id": "A1", "content": "t"}]}, "replies": [good]}) + "\n")
    assert main(["eval", str(mine), "--data", str(rows), "--scripted", "--quiet"]) == 0
    assert mine_marker.exists()
    assert main(["eval", str(cloned), "--data", str(rows), "--scripted", "--quiet"]) == 1
    assert "trusted" in capsys.readouterr().err and not cloned_marker.exists()


def borrowed_trust(tmp_path: Path) -> tuple[Path, Path]:
    """`trusted/` remembered; `attacker/link.contract.yaml` links to the trusted contract, whose hook module exists
    in `attacker/` only (issue 18 point 2). (the link, the marker the attacker's module writes when imported)"""
    real, _ = hooked_folder(tmp_path, "trusted")
    module = re.search(r'python: "(\w+):', real.read_text()).group(1)  # type: ignore[union-attr]
    (real.parent / f"{module}.py").unlink()  # the trusted folder has no such module: a hook that cannot resolve
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    (attacker / f"{module}.py").write_text("from pathlib import Path\nPath(__file__).with_name('PWNED').write_text('x')\n"
                                           "def retrieve(input, **kw):\n    return {}\n")
    link = attacker / "link.contract.yaml"
    link.symlink_to(Path("..") / "trusted" / real.name)
    remember_folder(real.parent)
    return link, attacker / "PWNED"


def test_the_language_server_never_imports_hooks_beside_a_link_into_a_trusted_folder(tmp_path: Path) -> None:
    from contractstudio.lsp.analyses import Analyses

    link, pwned = borrowed_trust(tmp_path)
    report = Analyses(lambda entry: None).analyze(str(link), link.read_text())
    assert not pwned.exists()
    # judged and looked up where the file really is: trusted, and its module is not there
    assert [d.code for d in report.diagnostics] == ["TOL102"] and "cannot import module" in report.diagnostics[0].message


def test_check_run_and_load_never_import_hooks_beside_a_link_into_a_trusted_folder(tmp_path: Path) -> None:
    import contractstudio as cs

    link, pwned = borrowed_trust(tmp_path)
    main(["check", str(link)])
    main(["run", str(link), "--scenario", "first-time"])
    main(["test", str(link)])
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"input": {"query": "q", "documents": [{"id": "A1", "content": "t"}]}, "replies": ["{}"]}\n')
    main(["eval", str(link), "--data", str(rows), "--scripted", "--quiet"])
    with pytest.raises(cs.ContractError):
        cs.load(link, trust=True)(query="q", documents=[])
    assert not pwned.exists()


def test_a_hooks_own_exception_named_untrustedhook_fails_the_act_like_any_other(tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # only contractstudio's UntrustedHook stops the call; a user's class of the same name is the hook's error
    mine, _ = hooked_folder(tmp_path, "mine")
    module = next(mine.parent.glob("cli_hooks_*.py"))
    module.write_text("class UntrustedHook(Exception):\n    pass\n\ndef retrieve(input, **kw):\n    raise UntrustedHook('mine')\n")
    remember_folder(mine.parent)
    main(["run", str(mine), "--scenario", "first-time"])
    captured = capsys.readouterr()
    assert "act: the Python hook raised UntrustedHook: mine" in captured.out + captured.err
