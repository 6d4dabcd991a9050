"""A new dialect is one module (issue 23.4): a toy dialect registered here, and nothing else edited, is read by
`check`, found by discovery, owned by the language server and accepted by `--dialect`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from contractstudio.cli import main
from contractstudio.findings.diagnostics import Diagnostic
from contractstudio.reading import dialect_registry
from contractstudio.reading.dialect_registry import BaseDialect, YamlFile
from contractstudio.reading.dialects.synth import data_of, entry, mapping
from contractstudio.reading.nodes import MapNode, Node, ScalarNode, SourceDocument

QA = Path(__file__).parent / "runtime_contracts" / "qa.contract.yaml"
_TOY_LINE = re.compile(r"^toykind:[ \t]*([a-z]+)", re.M)


class ToyReader:
    """The toy's reading: the document itself, its `toykind:` key read as `kind:`."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def read(self, doc: SourceDocument) -> list[SourceDocument]:
        assert isinstance(doc.root, MapNode)
        pairs = [entry("kind", v, k) if isinstance(k, ScalarNode) and k.value == "toykind" else (k, v) for k, v in doc.root.pairs]
        native = mapping(pairs, doc.root)
        return [SourceDocument(doc.index, native, data_of(native), doc.line, dialect="toy")]


class Toy(BaseDialect):
    """A format that says `toykind:` where ours says `kind:`."""

    name = "toy"
    kinds: tuple[str, ...] = ("contract",)
    described = "toy files (toykind:)"

    def sniff(self, text: str) -> str | None:
        m = _TOY_LINE.search(text)
        return m.group(1) if m else None

    def shaped(self, root: Node | None) -> bool:
        return isinstance(root, MapNode) and root.get("toykind") is not None and root.get("kind") is None

    def reader(self, file: YamlFile) -> ToyReader:
        return ToyReader()


@pytest.fixture
def toy_file(tmp_path: Path) -> Path:
    """A QA contract in the toy format, its output type misspelt (REF201 on line 36)."""
    path = tmp_path / "qa.toy.yaml"
    path.write_text(QA.read_text().replace("kind: contract", "toykind: contract", 1).replace("output: Answer", "output: Answr", 1))
    return path


@pytest.fixture
def toy() -> Iterator[Toy]:
    registered = Toy()
    dialect_registry.register(registered)
    yield registered
    dialect_registry.forget(registered.name)


def test_a_toy_dialect_is_not_ours_until_it_is_registered(toy_file: Path) -> None:
    from contractstudio.lsp.analyses import ours
    from contractstudio.reading.files import discover

    assert list(discover([toy_file.parent])) == [] and not ours(toy_file.read_text())


def test_check_discovery_and_the_language_server_pick_up_a_registered_dialect(
        toy: Toy, toy_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from contractstudio.lsp.analyses import ours
    from contractstudio.reading.files import discover

    assert list(discover([toy_file.parent])) == [toy_file]  # discovery: `check DIR` and the studio's file list
    assert ours(toy_file.read_text(), toy_file.parent)  # the language server serves it
    code = main(["check", str(toy_file.parent)])
    out = capsys.readouterr().out
    assert code == 1 and f"{toy_file}:36:9: error REF201" in out and "'Answr'" in out  # every native rule, at the toy's lines
    assert main(["check", str(toy_file), "--dialect", "toy"]) == 1  # --dialect names it
    assert "REF201" in capsys.readouterr().out


def test_an_unknown_kind_hint_names_a_registered_dialect(toy: Toy, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "bare.yaml"
    bare.write_text("name: x\n")
    assert main(["check", str(bare)]) == 1
    out = capsys.readouterr().out
    assert "YML003" in out and "toy files (toykind:)" in out and "--dialect contractstudio|localai-rag|agentanvil|toy" in out


def test_a_dialect_reading_as_a_kind_the_analyzer_does_not_know_is_refused_at_registration() -> None:
    class Misspelt(Toy):
        kinds: tuple[str, ...] = ("contrct",)

    with pytest.raises(ValueError, match="dialect 'toy': .*; not a kind: contrct"):
        dialect_registry.register(Misspelt())
    assert dialect_registry.named("toy") is None
