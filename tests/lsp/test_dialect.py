"""`contractstudio lsp --dialect` reads every document as that format, as the other commands do."""

from __future__ import annotations

from pathlib import Path

from contractstudio.cli import build_parser
from contractstudio.lsp.analyses import Analyses

ROOT = Path(__file__).resolve().parents[2]
LOCALAI = ROOT / "samples" / "localai_rag" / "pipelines" / "repo_qa.yaml"


def codes(analyses: Analyses) -> list[str]:
    report = analyses.analyze(str(LOCALAI), LOCALAI.read_text())
    assert report.documents, "the file was not analyzed at all"
    return [d.code for d in report.diagnostics]


def test_the_server_reads_by_shape_unless_a_dialect_is_forced() -> None:
    assert codes(Analyses(lambda entry: None)) == []  # detected as LocalAI-RAG, analyzed: clean
    assert "YML003" in codes(Analyses(lambda entry: None, dialect="contractstudio"))  # forced native: no kind
    assert build_parser().parse_args(["lsp", "--dialect", "localai-rag"]).dialect == "localai-rag"


def test_files_of_a_dialect_are_ours_and_other_yaml_is_not(tmp_path: Path) -> None:
    from contractstudio.lsp.analyses import ours

    assert ours(LOCALAI.read_text())  # by its shape (a top-level YAMLpipeline:)
    assert not ours("apiVersion: v1\nkind: Pod\n")
    assert ours("steps: []\n", dialect="localai-rag")
    (tmp_path / ".contractstudio.yaml").write_text("dialect: localai-rag\n")
    assert ours("steps: []\n", folder=tmp_path) and not ours("steps: []\n", folder=tmp_path.parent)
