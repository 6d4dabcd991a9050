"""Is this file ours? One answer (reading.files.ownership) for discovery, `check`, the language server and the studio
(issue 23.2, 21.3): another tool's file is skipped with a note; a file that looks like ours but is broken is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contractstudio.cli import main
from contractstudio.lsp.analyses import ours
from contractstudio.reading.files import discover, ownership

FOREIGN = Path(__file__).parent / "fixtures" / "dialects" / "localai-rag" / "foreign"
SYMBOLIC = """\
from symai import Expression
from symai.strategy import contract


@contract(pre_remedy=False, post_remedy=False)
class Answerer(Expression):
    def forward(self, input, **kwargs):
        return input
"""


def test_check_skips_a_scenario_manifest_and_a_kubernetes_file_with_a_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--format", "json", str(FOREIGN)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["files"] == [{"path": str(FOREIGN / "answer.yaml"), "dialect": "localai-rag"}]
    assert f"skipped {FOREIGN / 'scenarios_runner.yaml'}: a LocalAI-RAG scenario manifest" in captured.err
    assert f"skipped {FOREIGN / 'service.yaml'}: a Kubernetes-style manifest (apiVersion:, kind: Service)" in captured.err


def test_a_kubernetes_file_named_explicitly_is_not_analyzed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "deploy.yaml"
    f.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n")
    main(["check", str(f)])
    captured = capsys.readouterr()
    assert "YML003" not in captured.out and "kind: Deployment" in captured.err


def test_a_file_that_looks_like_ours_but_is_broken_stays_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "typo.yaml").write_text("kind: contrct\nname: a\n")
    (tmp_path / "pipes.yaml").write_text("YAMLpipelines:\n  - name: p\n    steps: 3\n")
    assert main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "typo.yaml:1:7: error YML003 unknown kind 'contrct'" in out and "pipes.yaml" in out


def test_discovery_the_language_server_and_the_studio_give_one_answer(tmp_path: Path) -> None:
    texts = {"ok.yaml": "kind: contract\nname: a\n", "k8s.yaml": "apiVersion: v1\nkind: Pod\n", "typo.yaml": "kind: Contract\n",
             "runner.yaml": (FOREIGN / "scenarios_runner.yaml").read_text(), "compose.yaml": "services:\n  web: {}\n",
             "agent.py": SYMBOLIC, "tool.py": "print('hello')\n"}
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    found = {p.name for p in discover([tmp_path], python=True)}
    assert found == {"ok.yaml", "typo.yaml", "agent.py"}
    for name, text in texts.items():
        if name.endswith(".yaml"):
            assert ours(text) == (name in found) == ownership(text).ours, name


def test_the_kinds_and_dialects_are_named_once() -> None:
    from contractstudio import cli
    from contractstudio.analysis import check
    from contractstudio.reading import dialect_registry, dialects, kinds

    assert cli.DIALECTS is dialect_registry.CHOICES  # the registry's names, read when --dialect is given
    assert check.KNOWN_KINDS is kinds.KNOWN_KINDS
    assert dialect_registry.names() == (kinds.NATIVE, dialects.localai_rag.NAME, dialects.agentanvil.NAME)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["kind: contract", "kind: 'agent'", 'kind:\t"tools"', "kind:", " kind: pipeline", "kind: x1",
                                 "kinds: no", "# kind: no", "name: n", "", "\r", "kind: Pipeline_2"]), max_size=12))
def test_the_top_level_kinds_are_every_line_that_starts_with_kind(lines: list[str]) -> None:
    import re

    from contractstudio.reading.kinds import top_kinds

    text = "\n".join(lines)
    assert top_kinds(text) == re.findall(r"^kind:[ \t]*['\"]?([A-Za-z_]+)", text, re.M)


def test_the_kinds_of_a_big_text_are_found_without_a_regex_pass_over_every_line(monkeypatch) -> None:
    # The studio's workspace poll asks every 5 s whether each YAML file is ours: a multi-line regex over a 5 MB file
    # held the interpreter for 30-50 ms each time, and a key typed then waited for it.
    from contractstudio.reading import kinds

    class Counting:
        def __init__(self, pattern) -> None:
            self.pattern, self.scanned = pattern, 0

        def match(self, text, pos=0):
            return self.pattern.match(text, pos)

        def findall(self, text, *args):
            self.scanned += len(text)
            return self.pattern.findall(text, *args)

        def search(self, text, *args):
            self.scanned += len(text)
            return self.pattern.search(text, *args)

    from contractstudio.reading import files

    counting = Counting(kinds.KIND_LINE)
    for module in (kinds, files):  # wherever the pattern is used from
        if hasattr(module, "KIND_LINE"):
            monkeypatch.setattr(module, "KIND_LINE", counting)
    text = ("kind: contract\nname: n\n" + "prompt: a line of text\n" * 20_000) * 3
    assert kinds.top_kinds(text) == ["contract"] * 3
    # the status line's kind of a file whose kind is far down (or absent), asked again as the author types
    assert files.kind_of_text("# notes\n" * 60_000 + "kind: tools\n") == "tools"
    assert counting.scanned == 0
