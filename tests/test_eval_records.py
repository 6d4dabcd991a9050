"""Results records are read through the one typed model (evaluation/record_model.py), never as a dict with .get():
every reader (the tally, the judge, a baseline, the progress sink, the studio) gets the model's fields, and a record
a run makes is checked against that model as it is made, not first when the file is resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest

from contractstudio.evaluation import rows
from contractstudio.evaluation.evaluate import EvalConfig, evaluate
from contractstudio.evaluation.record_model import ContractRecord, PipelineRecord
from contractstudio.evaluation.results import read_records
from contractstudio.evaluation.run_summary import results_summary

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
ROWS = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"
PIPELINE = ROOT / "samples" / "rag_router.pipeline.yaml"
PIPELINE_ROWS = ROOT / "samples" / "eval" / "rag_router.rows.jsonl"


def test_every_reader_gets_the_typed_record(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    sunk: list[Any] = []
    outcome = evaluate(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted", out=out),
                       on_progress=lambda kind, payload, _p: sunk.append(payload) if kind == "record" else None)
    assert sunk and all(isinstance(rec, ContractRecord) for rec in sunk)  # the progress sink
    read = list(read_records(out))  # --resume, --baseline, --replay and the studio read a file so
    assert all(isinstance(rec, ContractRecord) for rec in read)
    assert sum(rec.tokens.prompt for rec in read) == outcome.summary.tokens.prompt
    kept: list[Any] = []
    results_summary(out, keep=kept.append)
    assert [type(rec) for rec in kept] == [ContractRecord] * len(read)
    piped = tmp_path / "p.jsonl"
    evaluate(EvalConfig(target=PIPELINE, data=PIPELINE_ROWS, out=piped))
    assert all(isinstance(rec, PipelineRecord) for rec in read_records(piped, None))


def test_a_record_the_model_refuses_is_caught_as_the_run_makes_it_not_when_the_file_is_resumed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = rows.record

    def unknown_mode(*args: Any, **kwargs: Any) -> dict[str, Any]:  # a writer's bug: a mode the reader does not know
        return {**made(*args, **kwargs), "structured": "xml"}

    monkeypatch.setattr(rows, "record", unknown_mode)
    out = tmp_path / "r.jsonl"
    with pytest.raises(pydantic.ValidationError, match="structured"):
        evaluate(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted", out=out, concurrency=1))
    assert out.read_text() == ""  # the first such record stopped the run before it was written
