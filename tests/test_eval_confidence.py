"""Rates with confidence (issue 39.3): every rate eval prints carries its Wilson interval; --fail-under reads the
interval's lower bound (--fail-under-point the rate itself); --stop-when-decided stops when a sequential test decides
the gate, keeping its stated error rates (a simulation over many runs with a fixed seed) and saying what it saved."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from contractstudio.cli import main
from contractstudio.evaluation.stats import Sprt, wilson

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
ROWS = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
BAD = '{"answer": "", "evidence": [], "coverage_score": 0.9}'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_wilson_matches_hand_computed_bounds() -> None:
    # 9 of 10: p = 0.9, z^2/n = 0.3841459, denominator 1.3841459; centre = (0.9 + 0.1920729)/1.3841459 = 0.788757
    # half = 1.959964 * sqrt(0.09/10 + 3.841459/400) / 1.3841459 = 1.959964 * 0.136392 / 1.3841459 = 0.193132
    # -> [0.595850, 0.982120]: nine of ten is not "at least 90%"
    low, high = wilson(9, 10)
    assert (low, high) == (pytest.approx(0.595850, abs=1e-5), pytest.approx(0.982120, abs=1e-5))
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0 and wilson(0, 0) == (0.0, 1.0)


def test_every_rate_is_printed_with_its_interval(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--quiet")
    assert code == 0
    # 42 of 48, 24 of 48, 18 of 48 with their Wilson 95% bounds
    assert "successful: 42 (87.5% [75.3, 94.1])   first try: 24 (50.0% [36.4, 63.6])   remedied: 18 (37.5% [25.2, 51.6])" in out
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--quiet", "--json")
    intervals = json.loads(out)["summary"]["intervals"]
    assert intervals["success_rate"] == {"low": pytest.approx(wilson(42, 48)[0]), "high": pytest.approx(wilson(42, 48)[1])}


def test_fail_under_reads_the_lower_bound_and_fail_under_point_the_rate(capsys: pytest.CaptureFixture[str]) -> None:
    """87.5% of 48 rows: its lower bound is 75.3%. A gate of 0.8 passes on the point and fails on the interval."""
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--quiet", "--fail-under", "0.8")
    assert code == 1
    assert ("eval failed: the success rate 87.5% [75.3, 94.1] is not surely at or above --fail-under 80.0%: the lower "
            "bound of its 95% interval, 75.3%, is under it") in err
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--quiet", "--fail-under-point", "0.8")
    assert code == 0 and "eval failed" not in err
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--quiet", "--fail-under", "0.75")
    assert code == 0, err  # 75.3% >= 75%


def test_nine_of_ten_does_not_pass_a_gate_of_ninety_percent(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "ten.jsonl"
    rows = [{"input": {"query": f"q{i}", "documents": [{"id": "A1", "content": "t"}]}, "replies": [GOOD if i else BAD] * 6}
            for i in range(10)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(data), "--scripted", "--quiet", "--fail-under", "0.9")
    assert code == 1 and "90.0% [59.6, 98.2] is not surely at or above --fail-under 90.0%" in err


def simulate(p: float, gate: float, runs: int, rng: random.Random, margin: float = 0.05) -> tuple[int, int, int]:
    """(passes, fails, undecided) of `runs` sequential tests on rows that succeed with probability p."""
    passes = fails = undecided = 0
    for _ in range(runs):
        test = Sprt(gate, margin)
        decision = None
        for _row in range(20_000):
            decision = test.add(rng.random() < p)
            if decision is not None:
                break
        passes += decision == "pass"
        fails += decision == "fail"
        undecided += decision is None
    return passes, fails, undecided


@pytest.mark.parametrize("gate", [0.5, 0.8, 0.9, 0.95])
def test_the_sequential_stop_keeps_its_error_rates_on_simulated_rows(gate: float) -> None:
    """alpha = beta = 0.05: at the edge of the zone below the gate, a `pass` is the wrong decision and must come at
    most alpha/(1-beta) = 5.26% of the time; at the edge above, `fail` at most as often. 1,500 runs each, seeded; the
    bound is given three standard errors of slack (3 * sqrt(0.0526 * 0.9474 / 1500) = 0.0173), no more."""
    rng = random.Random(39)
    runs, bound = 1500, 0.05 / 0.95 + 0.0173
    margin = min(0.05, gate / 2, (1 - gate) / 2)
    wrong_pass, _, undecided = simulate(gate - margin, gate, runs, rng)
    assert undecided == 0 and wrong_pass / runs <= bound, wrong_pass / runs
    _, wrong_fail, undecided = simulate(gate + margin, gate, runs, rng)
    assert undecided == 0 and wrong_fail / runs <= bound, wrong_fail / runs
    # and far from the gate it is nearly always right
    right, _, _ = simulate(min(gate + 3 * margin, 0.999), gate, 200, rng)
    assert right >= 195


def test_a_test_that_stopped_too_eagerly_would_be_caught() -> None:
    """The simulation can fail: a test that decides on the first row (bounds of +-0.01) is wrong far too often."""
    rng = random.Random(39)
    eager = 0
    for _ in range(1000):
        test = Sprt(0.8, 0.05)
        test.upper, test.lower = 0.01, -0.01
        decision = None
        while decision is None:
            decision = test.add(rng.random() < 0.75)
        eager += decision == "pass"
    assert eager / 1000 > 0.05 / 0.95 + 0.0173  # the bound the real test is held to above


def test_stop_when_decided_stops_and_says_what_it_saved(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "many.jsonl"
    rows = [{"input": {"query": f"q{i}", "documents": [{"id": "A1", "content": "t"}]}, "replies": [GOOD] * 6}
            for i in range(400)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out_file = tmp_path / "r.jsonl"
    code, out, err = run(capsys, "eval", str(SAMPLE), "--data", str(data), "--scripted", "--quiet", "--fail-under", "0.8",
                         "--stop-when-decided", "--out", str(out_file))
    assert code == 0, err
    # every row succeeds: each adds log(0.85/0.75) = 0.125163 to the test; pass at log(0.95/0.05) = 2.944439,
    # so after ceil(2.944439 / 0.125163) = 24 rows
    assert "stopped when decided: the gate passes after 24 row(s) (SPRT of 75.0% against 85.0%" in out
    assert "376 row(s) not run" in out
    assert len(out_file.read_text().splitlines()) == 24
    code, out, err = run(capsys, "eval", str(SAMPLE), "--data", str(data), "--scripted", "--quiet", "--fail-under", "0.8",
                         "--stop-when-decided", "--json")
    seq = json.loads(out)["summary"]["sequential"]
    assert seq["decision"] == "pass" and seq["rows"] == 24 and seq["rows_not_run"] == 376


def test_stop_when_decided_needs_a_gate(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--stop-when-decided")
    assert code == 2 and "--stop-when-decided decides a gate: give it --fail-under RATE" in err


def test_results_record_the_seed_model_version_and_fingerprint_the_provider_gives(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openai_server import OpenAIServer, Reply

    monkeypatch.setenv("CONTRACTSTUDIO_CACHE", str(tmp_path / "cache"))
    contract = tmp_path / "qa.contract.yaml"
    contract.write_text(SAMPLE.read_text().replace("  temperature: 0\n", "  temperature: 0\n  seed: 7\n"))
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"query": "q", "documents": [{"id": "A1", "content": "t"}]}) + "\n")
    reply = Reply(GOOD, model="gpt-4o-mini-2024-07-18", system_fingerprint="fp_39abc")
    out_file = tmp_path / "r.jsonl"
    with OpenAIServer([reply]) as server:
        code, out, err = run(capsys, "eval", str(contract), "--data", str(data), "--model", "openai/gpt-4o-mini",
                             "--api-base", server.base_url, "--quiet", "--no-wait", "--out", str(out_file))
    assert code == 0, err
    rec = json.loads(out_file.read_text())
    # the reply streamed (an OpenAI-compatible server, a clause decided on a prefix): litellm names the requested model
    # in a stream's chunks, so the version that answered is not known; the fingerprint is
    assert rec["reproducibility"] == {"seed": [7], "model_version": [], "system_fingerprint": ["fp_39abc"]}
    assert "reproducibility: seed 7; system fingerprint fp_39abc" in out
    # a scripted run has nothing of the kind to say, and says nothing
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--quiet")
    assert "reproducibility" not in out
