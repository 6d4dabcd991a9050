"""`check` on SymbolicAI-style `@contract` classes in .py files: read statically, findings at .py positions.

The fixtures under tests/fixtures/err/PYC pin each rule's findings; these tests hold what fixtures cannot:
discovery, that the file is never imported, the language server, suppression and the incremental analyzer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from contractstudio.analysis.check import check_file, check_paths, check_text
from contractstudio.analysis.incremental import Analyzer
from contractstudio.cli import main
from contractstudio.lsp.analyses import Analyses
from contractstudio.reading.files import discover

CLASS = '''\
from pydantic import Field

from contractstudio.symbolic import Expression, LLMDataModel, contract

raise SystemExit("imported!")  # check must never run this


class Question(LLMDataModel):
    text: str = Field(description="The question.")
    lang: str = "en"


class Answer(LLMDataModel):
    answer: str = Field(description="The answer.")


@contract(remedy_retry_params={"tries": 0})
class Answerer(Expression):
    @property
    def prompt(self) -> str:
        return "Answer the question."

    def post(self, output: Answer) -> bool:
        return True

    def forward(self, input: Question, **kwargs) -> Answer:
        return self.contract_result
'''

PLAIN = "def helper(x):\n    return x\n\n\nclass Contract:\n    pass\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "answerer.py").write_text(CLASS)
    (tmp_path / "helpers.py").write_text(PLAIN)
    (tmp_path / "notes.md").write_text("@contract\nclass X: pass\n")
    return tmp_path


def codes(text: str, path: str = "a.py") -> list[tuple[int, int, str]]:
    return [(d.line, d.column, d.code) for d in check_text(text, path).diagnostics]


def test_check_dir_picks_up_only_python_files_with_a_contracted_class(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert [p.name for p in discover([project], python=True)] == ["answerer.py"]
    assert list(discover([project])) == []  # the studio's workspace and `test` list YAML only
    code = main(["check", str(project)])
    out = capsys.readouterr().out
    assert code == 1
    assert f"{project / 'answerer.py'}:17:41: error SCH104 remedy_retry_params.tries" in out
    assert f"{project / 'answerer.py'}:10:11: info PYC106 field 'Question.lang'" in out
    assert "helpers.py" not in out and out.rstrip().endswith("1 file checked: 1 error, 0 warnings, 1 info")


def test_the_file_is_read_never_imported(project: Path) -> None:
    report = check_file(project / "answerer.py")  # the module raises SystemExit at import: reading it must not
    assert [d.code for d in report.diagnostics] == ["PYC106", "SCH104"]
    assert report.dialect == "symbolicai" and report.documents[0].model.name == "Answerer"


def test_the_class_reads_as_a_native_contract_with_the_models_as_types(project: Path) -> None:
    (doc,) = check_file(project / "answerer.py").documents
    contract = doc.model
    assert (contract.input, contract.output, contract.prompt) == ("Question", "Answer", "Answer the question.")
    assert set(contract.types) == {"Question", "Answer"}
    assert contract.types["Question"].fields["lang"].type == "str" and not contract.types["Question"].fields["lang"].required
    assert [c.python for c in contract.post] == ["Answerer.post"]


def test_a_python_file_without_a_contracted_class_is_silent(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(PLAIN)
    report = check_file(tmp_path / "helpers.py")  # named explicitly: read, nothing to say
    assert report.diagnostics == [] and report.documents == []


def test_types_the_file_does_not_define_read_as_any_not_as_undeclared() -> None:
    text = CLASS.replace("def forward(self, input: Question, **kwargs) -> Answer:",
                         "def forward(self, input: models.Imported, **kwargs) -> Optional[List[Answer]]:")
    report = check_text(text, "a.py")
    assert "REF201" not in [d.code for d in report.diagnostics]
    assert (report.documents[0].model.input, report.documents[0].model.output) == ("any", "list[Answer] | None")


def test_a_suppression_comment_works_in_python() -> None:
    text = CLASS.replace('    lang: str = "en"', '    lang: str = "en"  # contractstudio: ignore[PYC106]')
    assert [c for _, _, c in codes(text)] == ["SCH104"]


def test_the_incremental_analyzer_gives_what_check_text_gives() -> None:
    analyzer = Analyzer()
    first = analyzer.check(CLASS, "a.py")
    edited = CLASS.replace('"tries": 0', '"tries": 2')
    again = analyzer.check(edited, "a.py")
    assert [d.code for d in first.diagnostics] == ["PYC106", "SCH104"]
    assert [(d.line, d.code) for d in again.diagnostics] == [(d.line, d.code) for d in check_text(edited, "a.py").diagnostics]


def test_columns_count_characters_not_utf8_bytes() -> None:
    text = CLASS.replace('text: str = Field(description="The question.")', 'text: str = Field(description="Frage – über")\n    größe: int')
    assert (10, 12, "PYC106") in codes(text)  # `größe: ` is 7 characters but 9 bytes


def test_the_language_server_serves_contracted_python_files_only(project: Path) -> None:
    analyses = Analyses(lambda entry: None)
    try:
        served = analyses.analyze(str(project / "answerer.py"), CLASS)
        assert [d.code for d in served.diagnostics] == ["PYC106", "SCH104"]
        assert analyses.analyze(str(project / "helpers.py"), PLAIN).diagnostics == []
        assert analyses.analyze(str(project / "helpers.py"), PLAIN).documents == []
    finally:
        analyses.shutdown()


@pytest.mark.asyncio
async def test_the_language_server_gives_no_yaml_editing_help_in_python(project: Path) -> None:
    analyses = Analyses(lambda entry: None, debounce_s=0.0)
    try:
        analyses.open("file:///a.py", str(project / "answerer.py"), 1, CLASS)
        await asyncio.sleep(0)
        assert await analyses.current("file:///a.py") is None  # hover, rename, quick fixes: nothing
    finally:
        analyses.shutdown()


def test_the_python_samples_are_clean_and_the_broken_copy_reports_its_planted_mistakes() -> None:
    from conftest import SAMPLES

    reports = check_paths([SAMPLES / "python"])
    assert [(Path(r.path).name, r.diagnostics) for r in reports] == [("multidoc_qa_agent.py", [])]  # notes_tool.py: no class
    broken = check_file(SAMPLES / "broken" / "multidoc_qa_agent_broken.py")
    assert [(d.line, d.column, d.code, d.message) for d in broken.diagnostics] == [
        (66, 50, "SCH102", "unknown key 'max_dalay' in remedy_retry_params"),
        (88, 19, "PYC103", "`act`'s first parameter is 'request': it must be named `input`")]


def test_an_annotation_too_deep_to_read_is_a_finding_not_a_crash() -> None:
    deep = CLASS.replace("def forward(self, input: Question, **kwargs) -> Answer:",
                         "def forward(self, input: " + " | ".join(["Question"] * 1500) + ", **kwargs) -> Answer:")
    found = [(d.code, d.message) for d in check_text(deep, "a.py").diagnostics]
    assert ("YML006", "class 'Answerer' is too deeply nested to read") in found
    field = CLASS.replace('    lang: str = "en"', '    lang: ' + " | ".join(["str"] * 1500) + ' = "en"')
    found = [(d.code, d.message) for d in check_text(field, "a.py").diagnostics]
    assert ("YML006", "class 'Question' is too deeply nested to read") in found
