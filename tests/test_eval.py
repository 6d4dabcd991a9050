"""`contractstudio eval` offline: the bundled sample dataset with scripted replies, bad rows, formats,
sampling, the baseline comparison, replay of a results file, and pipelines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from contractstudio.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
ROWS = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"
PIPELINE = ROOT / "samples" / "rag_router.pipeline.yaml"
PIPELINE_ROWS = ROOT / "samples" / "eval" / "rag_router.rows.jsonl"
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def qa_row(query: str, replies: list[str], **extra: object) -> dict:
    return {"id": query, "input": {"query": query, "documents": [{"id": "A1", "content": "text"}], **extra}, "replies": replies}


ENGINES = {"local": [], "workers": ["--workers", "2"]}  # one process; worker processes sharing one hub


@pytest.mark.parametrize("engine", list(ENGINES))
def test_the_sample_dataset_shows_remedies_and_fallbacks(capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str) -> None:
    out_file = tmp_path / "r.jsonl"
    code, out, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--out", str(out_file), "--json",
                         *ENGINES[engine])
    assert code == 0
    s = json.loads(out)["summary"]
    assert (s["rows"], s["bad_rows"], s["successful"], s["first_try"], s["remedied"]) == (48, 2, 42, 24, 18)
    assert s["remedied_by_attempt"] == {"1": 14, "2": 3, "3": 1}
    assert (s["fallback"], s["raised"], s["errors"]) == (6, 0, 0)
    top = s["failing_conditions"][0]
    assert (top["check"], top["count"], top["rows"]) == ("post.coverage_floor", 17, 13)
    assert top["messages"][0].startswith("Coverage score 0.30 is below the minimum 0.55.")
    assert {c["check"] for c in s["failing_conditions"]} >= {"output.type", "pre.query_present", "post.cites_known_documents"}
    assert "row 9: input.max_snippets = 20: Input should be less than or equal to 10" in err
    assert "row 20: input.documents: required field is missing (skipped)" in err
    recs = records(out_file)
    assert len(recs) == 48 and len({r["key"] for r in recs}) == 48
    fell_back = next(r for r in recs if r["outcome"] == "fallback" and r["llm_calls"] == 6)
    assert fell_back["attempts"] == 5 and fell_back["used"] == "fallback"
    assert fell_back["output"]["answer"] == "I am not confident enough to answer precisely."
    assert [f["attempt"] for f in fell_back["failures"]] == [0, 1, 2, 3, 4, 5]
    assert fell_back["trace"][0]["type"] == "stage_start"  # the trace is embedded, ready to replay
    if engine == "workers":  # each worker makes its rows' results lines: the same lines one process writes, timings aside
        one = tmp_path / "one.jsonl"
        assert run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--out", str(one))[0] == 0
        assert sorted(map(_untimed, recs), key=str) == sorted(map(_untimed, records(one)), key=str)


def _untimed(value: object) -> object:
    """A record with its timings (which differ from run to run) left out; the order of its keys kept."""
    if isinstance(value, dict):
        return [(k, _untimed(v)) for k, v in value.items() if k not in ("t", "seconds", "latency_s", "duration_s")]
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def test_text_summary_and_plain_progress_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted")
    assert code == 0
    assert "successful: 42 (87.5% [75.3, 94.1])   first try: 24 (50.0% [36.4, 63.6])   remedied: 18 (37.5% [25.2, 51.6])" in out
    assert "remedied at attempt: #1: 14, #2: 3, #3: 1" in out
    assert "fallback: 6   raised: 0" in out
    assert "   17    13  post.coverage_floor: Coverage score 0.30 is below the minimum 0.55." in out
    lines = [line for line in err.splitlines() if line.startswith("eval: ")]
    assert lines and lines[-1].startswith("eval: 48/48 rows (100%)")  # not a terminal: plain lines, no bar
    assert "\r" not in err


def test_bad_rows_are_reported_with_their_number_and_skipped(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    good = json.dumps(qa_row("q1", [GOOD]))
    data.write_text("\n".join([good, "{not json", json.dumps(qa_row("q3", [GOOD], max_snippets="many")),
                               json.dumps({"id": "x", "input": {"query": "q"}, "replies": ["r"]}),
                               json.dumps({"id": "y", "input": {"query": "q", "documents": []}, "replies": [1]}), good, ""]))
    out_file = tmp_path / "r.jsonl"
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--json")
    assert code == 0
    assert "row 2: not a JSON value: Expecting property name enclosed in double quotes (column 2) (skipped)" in err
    assert "row 3: input.max_snippets = \"many\": Input should be a valid integer" in err
    assert "row 4: input.documents: required field is missing (skipped)" in err
    assert "row 5: 'replies' must be a list of strings" in err
    doc = json.loads(out)
    assert doc["summary"]["rows"] == 2 and doc["summary"]["bad_rows"] == 4
    assert [b["row"] for b in doc["bad_rows"]] == [2, 3, 4, 5]
    assert [r["row"] for r in records(out_file)] in ([1, 6], [6, 1])


def test_csv_and_json_datasets(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    csv_file = tmp_path / "rows.csv"
    documents = json.dumps([{"id": "A1", "content": "text"}]).replace('"', '""')
    csv_file.write_text("query,documents,max_snippets\n"
                        f'why,"{documents}",2\n'
                        f'how,"{documents}",\n'
                        f'bad,"{documents}",eleven\n')
    rows = [qa_row("why", [GOOD], max_snippets=2), qa_row("how", [LOW, GOOD])]
    json_file = tmp_path / "rows.json"
    json_file.write_text(json.dumps(rows))
    code, out, err = run(capsys, "eval", str(QA), "--data", str(json_file), "--scripted", "--json")
    s = json.loads(out)["summary"]
    assert code == 0 and (s["rows"], s["first_try"], s["remedied"]) == (2, 1, 1)
    # a CSV with the envelope's columns: input and replies cells hold JSON
    env = tmp_path / "env.csv"
    env.write_text('id,input,replies\n'
                   f'a,"{json.dumps(rows[0]["input"]).replace(chr(34), chr(34) * 2)}",'
                   f'"{json.dumps([GOOD]).replace(chr(34), chr(34) * 2)}"\n'
                   f'b,"{json.dumps({"query": "q"}).replace(chr(34), chr(34) * 2)}","[]"\n')
    code, out, err = run(capsys, "eval", str(QA), "--data", str(env), "--scripted", "--json")
    s = json.loads(out)["summary"]
    assert code == 0 and (s["rows"], s["successful"], s["bad_rows"]) == (1, 1, 1)
    assert "row 2: input.documents: required field is missing (skipped)" in err
    # plain columns: one field per column, an empty cell is the field's default, a bad cell a bad row
    from contractstudio.evaluation.dataset import Row, read_rows

    seen = list(read_rows(csv_file))
    assert isinstance(seen[0], Row) and seen[0].value == {"query": "why", "documents": [{"id": "A1", "content": "text"}],
                                                          "max_snippets": "2"}
    assert isinstance(seen[1], Row) and "max_snippets" not in seen[1].value


def test_sample_and_limit_pick_the_same_rows_for_the_same_seed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    picked = []
    for i in range(2):
        out_file = tmp_path / f"s{i}.jsonl"
        code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--sample", "10",
                           "--seed", "7", "--out", str(out_file), "--json")
        assert code == 0
        picked.append(sorted(r["row"] for r in records(out_file)))
    assert picked[0] == picked[1] and len(picked[0]) <= 10
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--sample", "10", "--seed", "8",
                       "--out", str(tmp_path / "s2.jsonl"), "--json")
    assert sorted(r["row"] for r in records(tmp_path / "s2.jsonl")) != picked[0]
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--limit", "5",
                       "--out", str(tmp_path / "l.jsonl"), "--json")
    assert sorted(r["row"] for r in records(tmp_path / "l.jsonl")) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("engine", list(ENGINES))
def test_baseline_shows_changed_metrics_and_flipped_rows(capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str) -> None:
    before = tmp_path / "before.jsonl"
    assert run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--out", str(before))[0] == 0
    looser = tmp_path / "looser.contract.yaml"  # a coverage floor of 0.25 lets 0.3 pass
    looser.write_text(SAMPLE.read_text().replace("output.coverage_score >= 0.55", "output.coverage_score >= 0.25"))
    code, out, _ = run(capsys, "eval", str(looser), "--data", str(ROWS), "--scripted", "--baseline", str(before), "--json",
                       *ENGINES[engine])
    assert code == 0
    report = json.loads(out)["baseline"]
    assert report["matched_rows"] == 48
    metrics = {m["metric"]: m for m in report["metrics"]}
    assert metrics["first_try_rate"]["before"] == 0.5 and metrics["first_try_rate"]["after"] > 0.5
    flipped = {f["id"]: (f["before"], f["after"]) for f in report["flipped"]}
    assert flipped and all(after in ("first_try", "remedied") for _, after in flipped.values())
    assert report["broken"] == 0 and report["fixed"] == len(flipped)
    code, out, _ = run(capsys, "eval", str(looser), "--data", str(ROWS), "--scripted", "--baseline", str(before))
    assert f"flipped rows: {len(flipped)} now successful, 0 now failing" in out
    assert "first_try_rate" in out and "-> " in out


def test_replay_of_a_results_file_reproduces_it_offline(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    first = tmp_path / "first.jsonl"
    assert run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--out", str(first))[0] == 0
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--replay", str(first), "--json",
                       "--out", str(tmp_path / "again.jsonl"))
    s = json.loads(out)["summary"]
    assert code == 0 and (s["successful"], s["first_try"], s["fallback"]) == (42, 24, 6)
    again = {r["key"]: r["outcome"] for r in records(tmp_path / "again.jsonl")}
    assert again == {r["key"]: r["outcome"] for r in records(first)}


def test_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "r.jsonl"
    out_file.write_text('{"key": "1:x", "outcome": "first_try"}\n')
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--out", str(out_file))
    assert code == 2 and "pass --resume to continue that run, or --overwrite" in err
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(tmp_path / "none.jsonl"))
    assert code == 2 and "no such file" in err and "none.jsonl" in err
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--resume")
    assert code == 2 and "--resume needs --out" in err
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--concurrency", "0")
    assert code == 2
    bad_json = tmp_path / "rows.json"
    bad_json.write_text('{"a": 1}')
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(bad_json), "--scripted")
    assert code == 2 and "a JSON dataset is an array of rows" in err and "Traceback" not in err


def test_fail_under_and_a_contract_with_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--fail-under", "0.9")
    assert code == 1  # 87.5% < 90%
    # 87.5% of 48 rows: its 95% lower bound, 75.3%, passes a gate of 0.75 (and fails 0.8: tests/test_eval_confidence.py)
    assert run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--fail-under", "0.75")[0] == 0
    broken = tmp_path / "b.contract.yaml"
    broken.write_text(SAMPLE.read_text().replace("output: AnswerWithEvidence", "output: Nope"))
    code, _, err = run(capsys, "eval", str(broken), "--data", str(ROWS), "--scripted")
    assert code == 1 and "fix them before running" in err


def test_results_are_redacted(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    key = "sk-proj-abcdef0123456789abcdef"
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(qa_row(f"my key is {key}", [GOOD.replace('"ok"', f'"echo {key}"')])) + "\n")
    out_file = tmp_path / "r.jsonl"
    assert run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file))[0] == 0
    text = out_file.read_text()
    assert key not in text and "***" in text


def test_a_pipeline_over_a_dataset(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "p.jsonl"
    code, out, err = run(capsys, "eval", str(PIPELINE), "--data", str(PIPELINE_ROWS), "--out", str(out_file), "--json")
    assert code == 0, err
    s = json.loads(out)["summary"]
    assert s["kind"] == "pipeline" and s["rows"] == 12 and s["bad_rows"] == 1
    assert s["outcomes"] == {"end": 10, "assertion_failed": 2}
    assert s["end_steps"] == {"persist": 10}
    paths = {" ".join(p["path"]): p["count"] for p in s["paths"]}
    assert paths["route dispatch search expand fetch rerank answer persist"] == 7
    assert paths["route dispatch answer persist"] == 3
    [failure] = s["assertion_failures"]
    assert (failure["step"], failure["action"], failure["count"]) == ("search", "search_nodes", 2)
    assert failure["fields"] == {"requires_state followup_query | retrieval_query": 2}
    code, out, _ = run(capsys, "eval", str(PIPELINE), "--data", str(PIPELINE_ROWS))
    assert "runtime assertion failures per step:" in out and "2  search [search_nodes]" in out
    assert "      7  route -> dispatch -> search -> expand -> fetch -> rerank -> answer -> persist" in out


def test_the_local_engine_never_imports_ray(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import sys; from contractstudio.cli import main; "
            f"rc = main(['eval', {str(SAMPLE)!r}, '--data', {str(ROWS)!r}, '--scripted', '--quiet']); "
            "import contractstudio.evaluation.ray_engine; "  # the Ray engine itself loads ray only when a run starts
            "print(rc, 'ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.stdout.strip().splitlines()[-1] == "0 False", done.stderr


def test_a_terminal_gets_a_live_bar(tmp_path: Path) -> None:
    import io

    from rich.progress import Progress

    from contractstudio.commands.eval import ProgressView
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    view = ProgressView(screen, quiet=False)
    evaluate(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted"), on_progress=view)
    assert isinstance(view.bar, Progress)  # rich draws the bar (issue 23.5), not a hand-written one
    view.finish()
    drawn = screen.getvalue()
    assert drawn.count("\r\x1b[2K") > 1  # redrawn in place, frame after frame
    plain = [line for line in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn).replace("\r", "\n").splitlines() if line]
    last = plain[-1]
    assert "48/48 rows (100%)" in last and "rows/s" in last  # rows done of the total
    assert "ok 87.5%" in last  # the running success rate: 6 of 48 rows failed
    assert any(line.startswith("contractstudio: row 9: input.max_snippets = 20") for line in plain)  # its own line


def test_traces_can_go_to_their_own_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file, traces = tmp_path / "r.jsonl", tmp_path / "traces"
    code, _, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--limit", "3", "--out", str(out_file),
                     "--traces", str(traces))
    assert code == 0
    recs = records(out_file)
    assert all("trace" not in r and Path(r["trace_file"]).parent == traces.resolve() for r in recs)
    from contractstudio.runtime.trace import Trace

    first = Trace.read(recs[0]["trace_file"])
    assert first[0].type == "stage_start" and first.of_type("result")


def test_hostile_rows_get_the_input_limits_and_are_skipped_with_their_number(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Rows are inputs: the limits of `run --input` hold (no NaN, no number too long to print, no nesting past 200)."""
    good = json.dumps(qa_row("q1", [GOOD]))
    nan_row = good.replace('"max_snippets": 3', '"max_snippets": NaN') if '"max_snippets": 3' in good else \
        good[:-1] + ', "score": NaN}'
    huge = good[:-1] + ', "big": ' + "9" * 5000 + "}"
    deep = good[:-1] + ', "deep": ' + "[" * 300 + "]" * 300 + "}"
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join([good, nan_row, huge, deep, good]) + "\n")
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--json")
    assert code == 0
    doc = json.loads(out)
    assert [b["row"] for b in doc["bad_rows"]] == [2, 3, 4]
    assert "row 2: not a JSON value: NaN is not a JSON number" in err
    assert "row 3:" in err and "digits" in err
    assert "row 4:" in err and "200 levels" in err
    json_file = tmp_path / "rows.json"
    json_file.write_text("[" + ",".join([good, deep]) + "]")
    code, out, err = run(capsys, "eval", str(QA), "--data", str(json_file), "--scripted", "--json")
    assert code == 0 and [b["row"] for b in json.loads(out)["bad_rows"]] == [2]


def test_a_localai_rag_pipeline_is_evaluated_as_it_is_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A file of another format (no kind:) is read by its dialect, detected or forced with --dialect."""
    target = ROOT / "samples" / "localai_rag" / "pipelines" / "repo_qa.yaml"
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({"id": f"r{i}", "input": {"user_query": "q"}, "replies": replies})
                              for i, replies in enumerate([["[DIRECT:] hello", "Hi."], ["nothing matches", "Hi."]])) + "\n")
    for extra in ([], ["--dialect", "localai-rag"]):
        code, out, err = run(capsys, "eval", str(target), "--data", str(rows), "--json", *extra)
        assert code == 0, err
        s = json.loads(out)["summary"]
        assert s["kind"] == "pipeline" and s["rows"] == 2
        paths = {" ".join(p["path"]) for p in s["paths"]}
        assert any(p.startswith("translate_in history route dispatch answer_direct") for p in paths), paths
    code, out, err = run(capsys, "eval", str(target), "--data", str(rows), "--dialect", "contractstudio")
    assert code == 1 and "YML003" in err  # forced native: the file has no kind


def test_a_run_leaves_what_was_there_before_it_out_of_its_collections_and_gives_it_back(tmp_path: Path) -> None:
    # the imports, the contract and litellm's client are never garbage: collecting through them every few hundred
    # rows cost a live run about 0.3 ms of its 6 to 9 ms of CPU per row
    import gc

    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    kept_out: list[int] = []

    def progress(kind: str, record: object, _progress: object) -> None:
        if kind == "record":
            kept_out.append(gc.get_freeze_count())

    assert gc.get_freeze_count() == 0
    outcome = evaluate(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted"), on_progress=progress)
    assert outcome.summary.rows == 48 and len(kept_out) == 48
    assert min(kept_out) > 10_000
    assert gc.get_freeze_count() == 0  # the caller's heap is as it was: its garbage is collected again


def test_the_library_refuses_to_replace_a_results_file_unless_told(tmp_path: Path) -> None:
    # evaluate() itself decides, not only the CLI: a library caller's earlier results are not truncated by default
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate
    from contractstudio.evaluation.results import ResultsError

    out_file = tmp_path / "r.jsonl"
    assert evaluate(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted", out=out_file)).summary.rows == 48
    before = out_file.read_bytes()
    with pytest.raises(ResultsError) as refused:
        evaluate(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted", out=out_file, limit=2))
    assert str(out_file) in str(refused.value) and "overwrite" in str(refused.value)
    assert out_file.read_bytes() == before  # untouched
    assert evaluate(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted", out=out_file, limit=2,
                               overwrite=True)).summary.rows == 2
    assert len(records(out_file)) == 2
    assert evaluate(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted", out=out_file, limit=4,
                               resume=True)).summary.rows == 4  # resume appends to it
    assert len(records(out_file)) == 4


def test_a_missing_ray_is_told_before_the_results_file_is_replaced(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    out_file = tmp_path / "r.jsonl"
    out_file.write_text("an earlier run\n")
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as it does where Ray is not installed
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--engine", "ray",
                       "--out", str(out_file), "--overwrite")
    assert code == 2 and "--engine ray needs Ray: pip install 'contractstudio[ray]'" in err
    assert out_file.read_text() == "an earlier run\n"  # told before anything was replaced


def test_an_import_error_inside_an_installed_ray_is_not_called_a_missing_ray(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a dependency of Ray that is broken (its message says "ray": multiarray) is that dependency's error, not "install Ray"
    import sys
    import tempfile

    fake = tmp_path / "site" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('numpy.core.multiarray failed to import', name='numpy.core.multiarray')\n")
    for name in [n for n in sys.modules if n == "ray" or n.startswith("ray.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the crash report of the internal error
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--engine", "ray")
    assert "needs Ray" not in err and "numpy.core.multiarray failed to import" in err and code != 0


@pytest.mark.parametrize(("option", "value", "known"), [("engine", "rey", "local, ray"),
                                                         ("mode", "scripte", "live, scripted, replay, judge")])
def test_a_library_option_the_cli_would_not_accept_is_refused_not_run_another_way(option: str, value: str, known: str,
                                                                                   tmp_path: Path) -> None:
    # the CLI's --engine choices are the library's one list; evaluate() holds a caller to it (it ran "rey" as local)
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    config = EvalConfig(target=SAMPLE, data=ROWS, mode="scripted", out=tmp_path / "r.jsonl")
    setattr(config, option, value)
    with pytest.raises(ValueError, match=f"{option} {value!r}: one of {known}"):
        evaluate(config)
    assert not (tmp_path / "r.jsonl").exists()
