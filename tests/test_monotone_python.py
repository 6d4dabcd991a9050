"""A Python contract's monotone post conditions (issue 37.2): `monotone_post = (...)` on the class, in the expression
language, is what `monotone: true` is on a YAML condition: checked after the reply as every condition, checked by
the analyzer (CON133 at the .py position), and watched while a streamed reply is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

import contractstudio as cs
from contractstudio.analysis.check import Context, check_file
from contractstudio.runtime.events import EarlyStop
from contractstudio.symbolic import Expression, LLMDataModel, contract, use_model
from contractstudio.trust import hook_folder


class Text(LLMDataModel):
    body: str = Field(description="The text.")


class Summary(LLMDataModel):
    summary: str = Field(description="The summary.")


@contract(post_remedy=True, remedy_retry_params={"tries": 2, "delay": 0, "jitter": 0})
class Summarize(Expression):
    monotone_post = ("len(output.summary) <= 20", "'TODO' not in output.summary")

    @property
    def prompt(self) -> str:
        return "Summarize the text."

    def forward(self, input: Text, **kwargs: Any) -> Summary:
        return self.contract_result if self.contract_successful else Summary(summary="")


DOOMED = 'Here it is:\n```json\n{"summary": "a TODO ' + "and much more text " * 10 + '"}\n```'  # read leniently: fenced
GOOD = '{"summary": "short and done"}'


def test_a_monotone_post_condition_of_a_class_stops_a_streamed_reply_and_is_remedied() -> None:
    summarize = Summarize()
    with use_model(cs.ScriptedModel([DOOMED, GOOD], streamed=True), wait=False):
        out = summarize(input=Text(body="..."))
    assert out == Summary(summary="short and done")
    stops = summarize.contract_trace.of(EarlyStop)
    assert len(stops) == 1 and stops[0].clause == "Summarize.monotone_post[1]"
    assert stops[0].position == DOOMED.index("TODO") + 3  # the O: "TOD" may still be "TODAY"
    remedy = summarize.contract_trace.of_type("llm_request")[1]["messages"][-1]["content"]
    assert "'TODO' not in output.summary" in remedy


def test_without_streaming_it_is_checked_after_the_reply_as_every_condition() -> None:
    summarize = Summarize()
    with use_model(cs.ScriptedModel([DOOMED, GOOD]), wait=False):
        out = summarize(input=Text(body="..."))
    assert out == Summary(summary="short and done")
    assert summarize.contract_trace.of(EarlyStop) == []
    errors = [e for e in summarize.contract_trace.of_type("validation_error")]
    assert errors and any("len(output.summary) <= 20" in m for m in errors[0]["errors"])


CLASS_FILE = '''\
from pydantic import Field

from contractstudio.symbolic import Expression, LLMDataModel, contract


class Text(LLMDataModel):
    body: str = Field(description="The text.")


class Summary(LLMDataModel):
    summary: str = Field(description="The summary.")
    words: int = Field(description="How many words.")


@contract()
class Summarize(Expression):
    monotone_post = ("len(output.summary) <= 200", "output.words < 50")

    @property
    def prompt(self) -> str:
        return "Summarize the text."

    def forward(self, input: Text, **kwargs) -> Summary:
        return self.contract_result
'''


def test_check_reads_monotone_post_and_refuses_what_is_not_monotone_at_its_string(tmp_path: Path) -> None:
    path = tmp_path / "summarize.py"
    path.write_text(CLASS_FILE)
    found = [d for d in check_file(path, Context(hooks=hook_folder(path, False))).diagnostics if d.code == "CON133"]
    assert len(found) == 1
    assert found[0].line == 17 and "post[1] is marked monotone but is not monotone" in found[0].message
    assert "an upper bound is monotone only on `len(output.f)`" in found[0].message
