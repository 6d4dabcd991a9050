"""One project object (issue 36.2): a path's project root and its ignore rules (`.contractstudioignore`, with
gitignore's semantics through `pathspec`), found once per root and cached, and the one answer to "is this file ours,
and of which kind" that `check`, `test`, the studio's workspace, eval and the language server all ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from contractstudio.cli import main
from contractstudio.reading import files as files_module
from contractstudio.reading import project as project_module
from contractstudio.reading.files import discover
from contractstudio.reading.project import kind_of_path, project_for
from contractstudio.studio.workspace import Workspace

BROKEN = "kind: contract\nname: b\nnope: 1\n"  # an error wherever it is checked
TOOLS = "kind: tools\nname: t\ntools: []\n"


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / ".git").mkdir(exist_ok=True)  # a checkout: the root of its project
    return root


def test_a_root_pattern_skips_matching_files_in_every_subfolder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tree(tmp_path, {".contractstudioignore": "*.gen.yaml\n", "ok.yaml": TOOLS, "sub/x.gen.yaml": BROKEN,
                           "sub/deeper/y.gen.yaml": BROKEN})
    code = main(["check", str(repo)])
    out = capsys.readouterr().out
    assert code == 0 and "x.gen.yaml" not in out and "y.gen.yaml" not in out and "1 file checked" in out
    code = main(["check", str(repo / "sub")])  # the root's rules hold for a subfolder given on its own
    out = capsys.readouterr().out
    assert "x.gen.yaml" not in out
    code = main(["check", str(repo / "sub" / "x.gen.yaml")])  # named: analyzed
    assert code == 1 and "x.gen.yaml" in capsys.readouterr().out


def test_ignore_files_have_gitignores_semantics(tmp_path: Path) -> None:
    repo = tree(tmp_path, {
        ".contractstudioignore": "# generated\n*.gen.yaml\n!keep.gen.yaml\n/top.yaml\nbuild/\n",
        "top.yaml": TOOLS, "sub/top.yaml": TOOLS,  # anchored: only the root's
        "sub/x.gen.yaml": TOOLS, "sub/keep.gen.yaml": TOOLS,  # negated
        "build/a.yaml": TOOLS, "sub/build/b.yaml": TOOLS,  # a folder pattern, at any depth
        "sub/.contractstudioignore": "local.yaml\n!x.gen.yaml\n", "sub/local.yaml": TOOLS, "local.yaml": TOOLS,
    })
    found = sorted(str(p.relative_to(repo)) for p in discover([repo]))
    # a deeper file's rules win over the root's (sub/x.gen.yaml taken back), and apply under their folder only
    assert found == ["local.yaml", "sub/keep.gen.yaml", "sub/top.yaml", "sub/x.gen.yaml"]


def test_the_project_is_found_once_per_root_and_follows_an_edited_ignore_file(tmp_path: Path) -> None:
    repo = tree(tmp_path, {".contractstudioignore": "*.gen.yaml\n", "a/x.gen.yaml": TOOLS, "b/y.yaml": TOOLS})
    first = project_for(repo / "a" / "x.gen.yaml")
    assert first is project_for(repo / "b" / "y.yaml") and first.root == repo.resolve()
    assert first.ignored(repo / "a" / "x.gen.yaml")
    (repo / ".contractstudioignore").write_text("b/\n", encoding="utf-8")
    assert not first.ignored(repo / "a" / "x.gen.yaml") and first.ignored(repo / "b", folder=True)


def test_every_face_asks_the_one_kind_decision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tree(tmp_path, {"one.contract.yaml": BROKEN, "calls.jsonl": '{"seq": 1, "type": "stage_start"}\n'})
    assert kind_of_path(repo / "one.contract.yaml") == "contract" and kind_of_path(repo / "calls.jsonl") == "trace"
    workspace = Workspace.open([repo])
    assert {f.path.name: f.kind for f in workspace.files} == {"one.contract.yaml": "contract", "calls.jsonl": "trace"}
    # a mutant of the one decision: every face that asks it follows (none keeps a second copy)
    monkeypatch.setattr(project_module, "kind_of_text", lambda text: "pipeline")
    workspace = Workspace.open([repo])
    assert {f.path.name: f.kind for f in workspace.files}["one.contract.yaml"] == "pipeline"


def test_the_studio_lists_what_check_looks_at_with_the_same_ignore_rules_and_link_policy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.contract.yaml").write_text(TOOLS, encoding="utf-8")
    repo = tree(tmp_path / "repo", {".contractstudioignore": "*.gen.yaml\nbuild/\n", "ok.tools.yaml": TOOLS,
                                    "sub/x.gen.yaml": TOOLS, "sub/deeper/y.gen.yaml": TOOLS, "build/b.tools.yaml": TOOLS,
                                    "sub/calls.jsonl": '{"seq": 1, "type": "stage_start"}\n', "notes/t.txt": TOOLS})
    (repo / "link.contract.yaml").symlink_to(outside / "secret.contract.yaml")  # leaves the project
    (repo / "sub" / "inside.tools.yaml").symlink_to(repo / "notes" / "t.txt")  # stays in it

    def studio(root: Path) -> set[str]:
        return {f.path.name for f in Workspace.open([root]).files}

    def check(root: Path) -> set[str]:
        return {p.name for p in discover([root])}

    # a root pattern hides sub/x.gen.yaml and sub/deeper/y.gen.yaml from both faces, whichever folder is opened
    assert studio(repo) == {"ok.tools.yaml", "inside.tools.yaml", "calls.jsonl"}
    assert check(repo) == {"ok.tools.yaml", "inside.tools.yaml"}
    assert studio(repo / "sub") == {"inside.tools.yaml", "calls.jsonl"} and check(repo / "sub") == {"inside.tools.yaml"}
    # a mutant of the one ignore decision (the project skips nothing): both faces follow it, none keeps its own walk
    monkeypatch.setattr(project_module.Project, "skipper", lambda self, folder, **how: lambda name, is_folder=False: False)
    assert {"x.gen.yaml", "y.gen.yaml", "b.tools.yaml"} <= studio(repo) & check(repo)
    assert "link.contract.yaml" not in studio(repo) | check(repo)  # a link out of the project, as for check
    # a mutant of the link policy (every link allowed): both follow it too
    monkeypatch.setattr(files_module, "base_problem", lambda path, bases: None)
    assert "link.contract.yaml" in studio(repo) & check(repo)


def test_which_files_hold_python_classes_is_the_dialect_registrys_one_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.analysis.check import is_python
    from contractstudio.runtime.python_classes import python_target

    assert python_target("agents/qa.py:Answerer") == (Path("agents/qa.py"), "Answerer") and is_python("agents/qa.py")
    assert python_target("qa.contract.yaml:Answerer") is None and not is_python("qa.contract.yaml")
    assert python_target("agents/qa.py:not-a-name") is None
    # a mutant of the one decision (no file dialect owns .py): the analyzer and `run path.py:Class` both follow it
    monkeypatch.setattr(project_module, "for_file", lambda path: None)
    assert python_target("agents/qa.py:Answerer") is None and not is_python("agents/qa.py")


def test_the_analysis_gets_the_folder_settings_in_its_context_and_reads_none_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.analysis.check import Context, check_file, check_text
    from contractstudio.reading import folder_settings as settings_module
    from contractstudio.reading.folder_settings import FolderSettings
    from contractstudio.studio.app import StudioApp

    repo = tree(tmp_path, {".contractstudioignore": "", ".contractstudio.yaml": "dialect: agentanvil\n",
                           "contracts/tiny.yaml": "name: tiny\n"})
    tiny = repo / "contracts" / "tiny.yaml"
    reads: list[Path] = []
    read = settings_module.read_data_file
    monkeypatch.setattr(settings_module, "read_data_file", lambda path, cap: reads.append(path) or read(path, cap))

    def dialects(report: object) -> list[str]:
        return [d.dialect for d in report.documents]  # type: ignore[attr-defined]

    # the analysis of a text reads no settings from disk: what its context says, it applies
    assert dialects(check_text("name: tiny\n", str(tiny), Context(settings=FolderSettings()))) == ["contractstudio"]
    assert dialects(check_text("name: tiny\n", "elsewhere/t.yaml", Context(settings=FolderSettings(dialect="agentanvil")))) == [
        "agentanvil"]
    assert reads == []
    # the faces hand them over, read from the file's project: once, and again only when the file changes
    assert dialects(check_file(tiny)) == ["agentanvil"]
    studio = StudioApp([repo])
    for _ in range(3):  # the studio's analysis of every key
        assert dialects(check_text("name: tiny\n", str(tiny), studio.context_for(tiny))) == ["agentanvil"]
    assert len(reads) == 1
    (repo / ".contractstudio.yaml").write_text("dialect: contractstudio\n", encoding="utf-8")
    assert dialects(check_text("name: tiny\n", str(tiny), studio.context_for(tiny))) == ["contractstudio"]
    assert len(reads) == 2


def test_a_folder_named_explicitly_is_walked_even_when_an_ignore_file_skips_it(tmp_path: Path) -> None:
    repo = tree(tmp_path, {".contractstudioignore": "broken/\n*.gen.yaml\n", "ok.tools.yaml": TOOLS,
                           "broken/a.tools.yaml": TOOLS, "broken/x.gen.yaml": TOOLS, "broken/deeper/b.tools.yaml": TOOLS})
    assert {p.name for p in discover([repo])} == {"ok.tools.yaml"}  # skipped where the walk meets it
    # named, it is walked (README: `check samples/broken` still analyzes it); the other patterns still apply inside it
    assert {p.name for p in discover([repo / "broken"])} == {"a.tools.yaml", "b.tools.yaml"}
    assert {f.path.name for f in Workspace.open([repo / "broken"]).files} == {"a.tools.yaml", "b.tools.yaml"}
