"""`eval` against hostile files (issue 18 points 9-11, issue 21 point 7): a dataset row, a results file or a
recorded trace path that is out to crash, exhaust or mislead the run is refused with a message, never exit 3."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from contractstudio.cli import main

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def qa_row(query: str, replies: list[str] | None = None) -> str:
    return json.dumps({"id": query, "input": {"query": query, "documents": [{"id": "A1", "content": "text"}]},
                       "replies": replies if replies is not None else [GOOD]})


def dataset(tmp_path: Path, *lines: str) -> Path:
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data


# 18.10: one row kills the eval


def test_a_lone_surrogate_in_a_row_is_a_bad_row_and_resume_gets_past_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lone = '{"id": "s", "input": {"query": "\\ud800", "documents": []}, "replies": ["x"]}'
    data = dataset(tmp_path, qa_row("q1"), lone, qa_row("q3"))
    out_file = tmp_path / "r.jsonl"
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--json")
    assert code == 0, err
    assert "row 2: not a JSON value: a string holds a lone surrogate (\\ud800), which is not text" in err
    assert json.loads(out)["summary"]["rows"] == 2
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--resume", "--json")
    assert code == 0, err
    assert json.loads(out)["summary"]["rows"] == 2


def test_a_surrogate_pair_is_still_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = dataset(tmp_path, qa_row(b"smile \\ud83d\\ude00".decode("unicode_escape")))
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--json")
    assert code == 0 and json.loads(out)["summary"]["rows"] == 1


def test_an_overlong_line_is_capped_while_it_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.evaluation import dataset as ds

    monkeypatch.setattr(ds, "MAX_ROW_BYTES", 1 << 20)
    huge = '{"query": "' + "x" * (40 << 20) + '"}'
    data = dataset(tmp_path, qa_row("q1"), huge, qa_row("q3"))
    tracemalloc.start()
    try:
        code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0, err
    assert "row 2: the line is longer than 1,048,576 " in err
    assert json.loads(out)["summary"]["rows"] == 2
    assert peak < 16 << 20  # the 40 MB line was never held whole (a cap-sized piece at most)


def test_a_reply_with_a_lone_surrogate_is_a_failed_attempt_not_a_crash(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = '{"answer": "\\udc80", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
    data = dataset(tmp_path, qa_row("q1", [bad, GOOD]))
    out_file = tmp_path / "r.jsonl"
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--json")
    assert code == 0, err
    record = json.loads(out_file.read_text())
    assert record["outcome"] == "remedied"
    message = record["failures"][0]["failed"][0]["message"]
    assert message == "the reply is not valid JSON text: a string holds a lone surrogate (\\udc80), which is not text"


# 18.11: tampered results files


def finished_run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *extra: str) -> tuple[Path, Path]:
    data = dataset(tmp_path, qa_row("q1"), qa_row("q2"), qa_row("q3"))
    out_file = tmp_path / "r.jsonl"
    code, _, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), *extra)
    assert code == 0, err
    return data, out_file


TAMPERED = {
    "a 5,000-digit integer": ('"attempts":0', '"attempts":' + "9" * 5000, "a number is too long"),
    "100,000-deep nesting": ('"output":{', '"output":' + "[" * 100_000 + "]" * 100_000 + ', "x": {',
                             "it nests arrays/objects more than 200 levels deep"),
    "Infinity": ('"cost_usd":0.0', '"cost_usd":Infinity', "Infinity is not a JSON number"),
    "attempts: 'abc'": ('"attempts":0', '"attempts":"abc"', "attempts: Input should be a valid integer"),
    "failures: 'string'": ('"failures":[]', '"failures":"string"', "failures: Input should be a valid list"),
    "tokens: 'many'": ('"tokens":{', '"tokens":"many","x":{', "tokens: Input should be"),
    "latency_s: [1]": ('"latency_s":', '"latency_s":[1],"x":', "latency_s: Input should be a valid number"),
    "transport: [1]": ('"transport":[]', '"transport":[1]', "transport.0: Input should be"),
    "successful while it fell back": ('"outcome":"first_try"', '"outcome":"fallback"', "successful is true but the outcome is fallback"),
    "cache hits: -1": ('"cache":{"hits":0', '"cache":{"hits":-1', "cache.hits: Input should be greater than or equal to 0"),
    "structured: 'xml'": ('"structured":', '"structured":"xml","x":', "structured: Input should be"),
}


@pytest.mark.parametrize("name", list(TAMPERED))
def test_a_tampered_results_file_is_refused_with_its_line_on_resume_and_baseline(
        name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, out_file = finished_run(capsys, tmp_path)
    old, new, message = TAMPERED[name]
    lines = out_file.read_text().splitlines(keepends=True)
    assert old in lines[1]
    lines[1] = lines[1].replace(old, new, 1)
    out_file.write_text("".join(lines))
    for flags in (("--out", str(out_file), "--resume"), ("--baseline", str(out_file))):
        code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", *flags)
        assert code == 2, err
        assert f"{out_file}:2: not a results record: " in err and message in err
        assert "internal error" not in err and out == ""


def test_a_record_without_its_contract_is_refused_not_counted_as_done(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, out_file = finished_run(capsys, tmp_path)
    forged = json.loads(out_file.read_text().splitlines()[0])
    del forged["contract_sha"]
    out_file.write_text(json.dumps(forged) + "\n")
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--resume")
    assert code == 2 and f"{out_file}:1: not a results record: contract_sha: Field required" in err
    forged["contract_sha"] = "0" * 16
    out_file.write_text(json.dumps(forged) + "\n")
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--resume")
    assert code == 2 and f"{out_file}:1: holds results of a different version of contract 'qa' (qa.contract.yaml" in err


def test_a_pipeline_results_file_is_not_a_baseline_for_a_contract(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, out_file = finished_run(capsys, tmp_path)
    pipeline = json.loads(out_file.read_text().splitlines()[0])
    pipeline.update(kind="pipeline", outcome="end", path=["a"], end_step="a", failed_step=None, assertion=None)
    other = tmp_path / "pipeline.jsonl"
    other.write_text(json.dumps(pipeline) + "\n")
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--baseline", str(other))
    assert code == 2 and f"{other}:1: holds results of a pipeline, not of a contract" in err


def test_an_untouched_results_file_still_resumes_and_compares(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, out_file = finished_run(capsys, tmp_path)
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--resume",
                         "--baseline", str(out_file), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["summary"]["rows"] == 3 and doc["baseline"]["matched_rows"] == 3


# 18.9: --replay follows only a trace file beside the results file


def traced_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[Path, Path]:
    """A finished run whose traces are in traces/ beside its results file."""
    data, out_file = finished_run(capsys, tmp_path, "--traces", str(tmp_path / "traces"))
    return data, out_file


def name_trace_file(out_file: Path, target: str) -> None:
    lines = out_file.read_text().splitlines(keepends=True)
    rec = json.loads(lines[0])
    rec["trace_file"] = target
    lines[0] = json.dumps(rec) + "\n"
    out_file.write_text("".join(lines))


def test_replay_reads_the_traces_of_its_traces_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, out_file = traced_run(capsys, tmp_path)
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--replay", str(out_file), "--json")
    assert code == 0, err
    assert json.loads(out)["summary"]["first_try"] == 3
    name_trace_file(out_file, "traces/row-1.jsonl")  # relative: beside the results file
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--replay", str(out_file), "--json")
    assert code == 0 and json.loads(out)["summary"]["first_try"] == 3


@pytest.mark.parametrize("target", ["/dev/zero", "/etc/passwd", "/proc/self/environ", "fifo", "folder", "../outside.jsonl",
                                    "link.jsonl"])
def test_replay_refuses_a_trace_file_that_is_not_a_file_beside_the_results(
        target: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import os

    here = tmp_path / "run"
    here.mkdir()
    data, out_file = traced_run(capsys, here)
    (here / "folder").mkdir()
    os.mkfifo(here / "fifo")
    (tmp_path / "outside.jsonl").write_text((here / "traces" / "row-1.jsonl").read_text())
    (here / "link.jsonl").symlink_to(tmp_path / "outside.jsonl")
    name_trace_file(out_file, target)
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--replay", str(out_file))
    assert code == 2, err
    assert f"{out_file}:1: trace_file '{target}' is not read: " in err
    assert "a recorded trace is a file beside the results file" in err
    assert "root:" not in err and "PATH=" not in err and out == ""


# issue 21.7: a run that checked nothing does not pass


def test_eval_where_no_row_ran_fails_with_a_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = dataset(tmp_path, "{not json", '{"id": "x", "input": {"query": "q"}, "replies": ["r"]}')
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted")
    assert code == 1
    assert "rows: 0 (2 bad row(s) skipped)" in out
    assert err.splitlines()[-1] == "contractstudio: eval failed: no row ran (2 bad row(s) skipped, none valid)"
    empty = dataset(tmp_path, "")
    code, out, err = run(capsys, "eval", str(QA), "--data", str(empty), "--scripted", "--json")
    assert code == 1 and json.loads(out)["summary"]["rows"] == 0
    assert err.splitlines()[-1] == "contractstudio: eval failed: no row ran (the dataset has no rows)"


def test_eval_where_every_row_failed_on_transport_fails_with_a_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from openai_server import OpenAIServer, Received, Reply

    monkeypatch.setenv("CONTRACTSTUDIO_CACHE", str(tmp_path / "cache"))

    def denied(received: Received) -> Reply:
        return Reply(status=401, content="bad key")

    data = dataset(tmp_path, qa_row("q1"), qa_row("q2"))
    with OpenAIServer(responder=denied) as server:
        code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--model", "openai/gpt-4o-mini",
                             "--api-base", server.base_url, "--no-wait", "--no-cache")
        assert code == 1
        assert "transport faults: authentication 2; rows failed for good: 2" in out
        assert err.splitlines()[-1] == ("contractstudio: eval failed: every row that ran (2) failed on transport "
                                        "(authentication 2); no reply was judged")
    # a run where some rows were judged still exits 0: tests/test_eval_live.py::test_a_row_whose_call_fails_for_good_is_recorded_as_failed


def test_a_refused_run_leaves_no_traces_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, traces = dataset(tmp_path, qa_row("q1")), tmp_path / "traces"
    (tmp_path / "base.jsonl").write_text('{"nope": 1}\n', encoding="utf-8")  # not a results file: refused
    code, _, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--baseline",
                       str(tmp_path / "base.jsonl"), "--traces", str(traces))
    assert code == 2 and "not a results record" in err
    assert not traces.exists()


def test_a_run_that_writes_no_trace_makes_no_traces_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, traces = dataset(tmp_path, '{"bad": '), tmp_path / "deep" / "traces"
    code, _, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--traces", str(traces))
    assert code == 1 and "no row ran" in err
    assert not (tmp_path / "deep").exists()


def test_a_traces_folder_that_is_a_file_is_refused_before_the_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, traces = dataset(tmp_path, qa_row("q1")), tmp_path / "traces"
    traces.write_text("mine\n", encoding="utf-8")
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--traces", str(traces))
    assert code == 2 and f"cannot write the traces: {traces} is a file, not a folder" in err
    assert traces.read_text(encoding="utf-8") == "mine\n" and "rows:" not in out


# issue 32.2: files the tool names inside a folder never go through a symlink planted there, nor leave the folder


def test_a_symlink_planted_in_the_traces_folder_is_never_written_through(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data, traces, victim = dataset(tmp_path, qa_row("q1")), tmp_path / "traces", tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    traces.mkdir()
    (traces / "row-1.jsonl").symlink_to(victim)
    code, _, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--traces", str(traces))
    assert code == 1
    assert f"could not write {traces / 'row-1.jsonl'}: it is a symbolic link" in err
    assert victim.read_text(encoding="utf-8") == "mine\n" and (traces / "row-1.jsonl").is_symlink()


def test_a_hard_link_planted_in_the_traces_folder_leaves_its_other_name_alone(capsys: pytest.CaptureFixture[str],
                                                                              tmp_path: Path) -> None:
    import os

    data, traces, victim = dataset(tmp_path, qa_row("q1")), tmp_path / "traces", tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    traces.mkdir()
    os.link(victim, traces / "row-1.jsonl")
    code, _, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--traces", str(traces))
    assert code == 0, err
    assert victim.read_text(encoding="utf-8") == "mine\n"  # the trace took the name in the folder, not the file behind it
    assert '"type": "stage_start"' in (traces / "row-1.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("side", ["replies.sqlite3", "replies.sqlite3-wal"])
def test_a_symlink_planted_in_the_reply_cache_folder_is_never_opened(side: str, tmp_path: Path) -> None:
    from contractstudio.evaluation.cache import ReplyCache

    folder, victim = tmp_path / "cache", tmp_path / "victim"
    folder.mkdir()
    victim.write_bytes(b"")  # SQLite takes an empty file for an empty database and would write into it
    (folder / side).symlink_to(victim)
    with pytest.raises(OSError, match="is a symbolic link") as err:
        ReplyCache(folder)
    assert err.value.filename == str(folder / side)
    assert victim.read_bytes() == b"" and (folder / side).is_symlink()
