""".py discovery and reading are bounded before they cost (issue 32, finding 5).

`check big/decorators.py` (12 MB of decorator lines) took 85 s: the discovery pattern `[\\s\\S]{0,4000}?^class` read
up to 4,000 characters after every decorator line, before the size bound. A 4 MB file with a contracted class and a
2,000,000-item list took 2 GB and 19 s in `ast.parse`. Now: the size bound first, a per-line search, and a token
bound before `ast.parse`. The work is counted, not timed. docs/security.md ("Limits") names these tests.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from regex_work import Work

from contractstudio.analysis.check import check_file, check_text
from contractstudio.reading.dialects import symbolicai
from contractstudio.reading.dialects.symbolicai import _CONTRACTED, MAX_PY_BYTES, MAX_PY_TOKENS, is_contracted

CLASS = '''\
from pydantic import Field

from contractstudio.symbolic import Expression, LLMDataModel, contract


class Question(LLMDataModel):
    text: str = Field(description="The question.")


@contract()
class Answerer(Expression):
    @property
    def prompt(self) -> str:
        return "Answer the question."

    def post(self, output: Question) -> bool:
        return True

    def forward(self, input: Question, **kwargs) -> Question:
        return self.contract_result

'''


def test_the_discovery_pattern_never_reads_past_the_line_it_starts_on() -> None:
    work = Work(_CONTRACTED)
    costs = {lines: work.count("@contract\n" + "x = 1\n" * lines, search=False) for lines in (10, 1000)}
    assert costs[10] == costs[1000]  # the old pattern read on to the 4,000th character after the decorator


def test_discovery_still_finds_a_class_a_few_lines_below_its_decorator_and_not_one_far_below() -> None:
    assert is_contracted("@contract(\n    pre_remedy=False,\n)\nclass A(Expression):\n    pass\n")
    assert is_contracted("@strategy.contract\n@other\nclass A:\n    pass\n")
    assert not is_contracted("@contract\n" + "x = 1\n" * 1000 + "class A:\n    pass\n")
    assert not is_contracted("@contractor\nclass A:\n    pass\n")


def test_discovery_looks_only_at_the_head_of_a_file_past_the_size_bound() -> None:
    head = "x = 1\n" * (MAX_PY_BYTES // 6 + 1)
    assert not is_contracted(head + CLASS)  # the class is past the bound: never searched for
    assert is_contracted(CLASS + head)


def test_a_big_file_of_decorator_lines_is_refused_by_the_size_bound(tmp_path: Path) -> None:
    path = tmp_path / "decorators.py"
    path.write_text("@contract\n" * (MAX_PY_BYTES // 10 * 3) + "class A:\n    pass\n")  # 12 MB
    [d] = check_file(path).diagnostics
    assert (d.code, d.line, d.message) == ("YML006", 1, "the file is larger than 4 MiB: not read")


def test_a_file_of_too_many_tokens_is_refused_before_ast_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[Any] = []
    real = ast.parse
    monkeypatch.setattr(symbolicai.ast, "parse", lambda *a, **k: parsed.append(1) or real(*a, **k))
    text = CLASS + "DATA = [" + "1," * (MAX_PY_TOKENS // 2) + "]\n"  # 1 MB: under the size bound
    assert len(text) < MAX_PY_BYTES
    [d] = check_text(text, "big.py").diagnostics
    assert (d.code, d.line, d.column) == ("YML006", 1, 1)
    assert d.message == f"the file has more than {MAX_PY_TOKENS:,} tokens: not parsed (parsing it could take gigabytes)"
    assert parsed == []


def test_a_file_just_under_the_token_bound_is_read() -> None:
    from contractstudio.reading.dialects.symbolicai import token_count

    text = CLASS + "DATA = [" + "1," * 1000 + "]\n"
    tokens = token_count(text, MAX_PY_TOKENS)
    padded = text + "# " + "x " * (MAX_PY_TOKENS - tokens - 1) + "\n"  # the comment's words count too
    assert token_count(padded, MAX_PY_TOKENS) == MAX_PY_TOKENS
    report = check_text(padded, "big.py")
    assert report.diagnostics == [] and [d.contract.name for d in report.documents] == ["Answerer"]  # type: ignore[attr-defined]
