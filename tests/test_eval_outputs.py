"""What `eval` prints (its text and its --json, byte for byte) and what the studio's Eval summary shows, against the
outputs recorded before the run summary became a typed model (issue 36.5): the model changed how the summary is
held, never what a user reads. Only timings (and the temporary folder) are masked; every other byte is compared.

Recorded with CONTRACTSTUDIO_RECORD_OUTPUTS=1 (the files in tests/fixtures/eval_outputs/ are then written anew)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from contractstudio.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "eval_outputs"
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
ROWS = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"
LABELLED = ROOT / "samples" / "eval" / "multidoc_qa.labelled.jsonl"
PIPELINE = ROOT / "samples" / "rag_router.pipeline.yaml"
PIPELINE_ROWS = ROOT / "samples" / "eval" / "rag_router.rows.jsonl"
TIMED = re.compile(r'("(?:duration_s|rows_per_s|p50|p95|p99|mean|max|seconds_at_cut|saved_s)": )-?[0-9][0-9.e+-]*')
TIMED_TEXT = [(re.compile(r"run now in [0-9.]+ s \([0-9.]+ rows/s\)"), "run now in T s (T rows/s)"),
              (re.compile(r"latency per row: .*"), "latency per row: T"),
              (re.compile(r"  latency_p\d\d_s .*\n"), ""),  # a baseline's line, there when the timings differ
              (re.compile(r'("metric": "latency_p\d\d_s",\s+"before": )[^,]+(,\s+"after": )[^,]+(,\s+"delta": )[^\s]+'),
               r"\1T\2T\3T")]


def masked(text: str, tmp_path: Path) -> str:
    text = TIMED.sub(r"\1T", text.replace(str(tmp_path), "TMP"))
    for pattern, shown in TIMED_TEXT:
        text = pattern.sub(shown, text)
    return text


def same_as_recorded(name: str, text: str) -> None:
    path = FIXTURES / name
    if os.environ.get("CONTRACTSTUDIO_RECORD_OUTPUTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, _err = capsys.readouterr()
    return code, out


RUNS = {
    "contract": [str(SAMPLE), "--data", str(ROWS), "--scripted"],
    "baseline": [str(SAMPLE), "--data", str(ROWS), "--scripted", "--baseline", "{first}"],
    "sequential": [str(SAMPLE), "--data", str(ROWS), "--scripted", "--fail-under", "0.5", "--stop-when-decided"],
    "pipeline": [str(PIPELINE), "--data", str(PIPELINE_ROWS)],
    "judge": [str(SAMPLE), "--data", str(LABELLED), "--judge", "--sweep", "coverage_floor"],
}


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("name", list(RUNS))
def test_eval_prints_what_it_printed_before_the_summary_was_typed(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                  name: str, as_json: bool) -> None:
    first = tmp_path / "first.jsonl"
    assert cli(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--limit", "20", "--quiet",
               "--concurrency", "1", "--out", str(first))[0] == 0
    argv = [a.replace("{first}", str(first)) for a in RUNS[name]]
    code, out = cli(capsys, "eval", *argv, "--quiet", "--concurrency", "1", "--out", str(tmp_path / "r.jsonl"),
                    *(["--json"] if as_json else []))
    same_as_recorded(f"{name}.{'json' if as_json else 'txt'}", f"exit {code}\n" + masked(out, tmp_path))


@pytest.mark.parametrize("name", ["contract", "pipeline", "judge"])
def test_the_studio_s_summary_of_a_results_file_is_what_it_was(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                               name: str) -> None:
    from contractstudio.studio import evals

    out = tmp_path / "r.jsonl"
    assert cli(capsys, "eval", *[a for a in RUNS[name] if a not in ("--sweep", "coverage_floor")], "--quiet",
               "--concurrency", "1", "--out", str(out))[0] == 0
    rows, summary = evals.load_results(out)
    shown = [evals.summary_text(summary), repr(evals.filter_choices(summary)), repr(evals.attempts_bars(summary)),
             repr(evals.check_bars(summary)), repr(evals.cost_series(rows))]
    same_as_recorded(f"{name}.studio.txt", masked("\n".join(shown), tmp_path))
