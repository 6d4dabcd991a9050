"""samples/python/multidoc_qa_agent.py: seed 000's example class runs offline with scripted replies."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.runtime.events import ModelRequest
from contractstudio.symbolic import use_model

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "python" / "multidoc_qa_agent.py"


@pytest.fixture(scope="module")
def sample():
    spec = importlib.util.spec_from_file_location("multidoc_qa_agent_sample", SAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through the module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_the_sample_answers_after_one_remedy_and_writes_its_trace(sample, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    calls = tmp_path / "calls.jsonl"
    assert sample.main([str(calls)]) == 0
    out = capsys.readouterr().out
    assert "answer: They store embeddings and retrieve text similar to a query vector." in out
    assert "successful: True | model calls: 2" in out
    trace = cs.Trace.read(calls)
    remedy = trace.of(ModelRequest)[1]
    assert remedy.purpose == "remedy_post" and remedy.errors == ["Coverage score 0.30 is below the minimum 0.60."]
    assert '"selected_sentences"' in trace.of(ModelRequest)[0].messages[1]["content"]  # the model reads act's output


def test_act_s_history_persists_across_calls(sample) -> None:
    agent = sample.MultiDocQAgent()
    with use_model(cs.ScriptedModel(sample.SCRIPTED_REPLIES[1:] * 2), wait=False):
        agent(input=sample.QUESTION)
        agent(input=sample.QUESTION)
    assert [entry["top_doc_ids"][0] for entry in agent.interaction_log] == ["B2", "B2"]
