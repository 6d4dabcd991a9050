"""`eval --judge` (issue 39.1, 39.4): every condition measured against labelled outputs, with the figures checked
against values computed by hand; malformed labels are bad rows with their line; the bundled labelled sample shows a
condition that false-fails and one that false-passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contractstudio.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
LABELLED = ROOT / "samples" / "eval" / "multidoc_qa.labelled.jsonl"
DOCS = [{"id": "A1", "content": "Vector databases store embeddings."}]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def labelled(cov: float, label: str, *, evidence: bool = True, **labels: str) -> dict[str, object]:
    output = {"answer": "Embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}] if evidence else [],
              "coverage_score": cov}
    row: dict[str, object] = {"input": {"query": "What do vector databases store?", "documents": DOCS},
                              "output": output, "label": label}
    if labels:
        row["labels"] = labels
    return row


def write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def ten_rows(tmp_path: Path) -> Path:
    """coverage_floor (`output.coverage_score >= 0.55`) against ten labels:
    rows 1-4: coverage 0.2, labelled bad for it   -> it rejects, rightly      (both fail, a = 4)
    rows 5-6: coverage 0.4, good outputs          -> it rejects, wrongly      (false fails, b = 2)
    row 7:    coverage 0.7, bad for it            -> it accepts, wrongly      (false pass, c = 1)
    rows 8-10: coverage 0.9, good outputs         -> it accepts, rightly      (both pass, d = 3)"""
    rows = ([labelled(0.2, "fail", coverage_floor="fail")] * 4 + [labelled(0.4, "pass")] * 2
            + [labelled(0.7, "fail", coverage_floor="fail")] + [labelled(0.9, "pass")] * 3)
    return write(tmp_path / "ten.jsonl", rows)


def test_the_judge_report_matches_the_hand_computed_figures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "eval", str(SAMPLE), "--data", str(ten_rows(tmp_path)), "--judge", "--json", "--quiet")
    assert code == 0, err
    judge = json.loads(out)["summary"]["judge"]
    c = next(c for c in judge["conditions"] if c["check"] == "post.coverage_floor")
    assert (c["both_fail"], c["false_fail"], c["false_pass"], c["both_pass"], c["n"]) == (4, 2, 1, 3, 10)
    # Agreement 7/10 with its Wilson interval (z = 1.959964, z^2 = 3.841459, z^2/n = 0.3841459):
    #   centre = (0.7 + 3.841459/20) / 1.3841459 = 0.892073 / 1.384146 = 0.644490
    #   half   = 1.959964 * sqrt(0.7*0.3/10 + 3.841459/400) / 1.384146 = 1.959964 * 0.174939 / 1.384146 = 0.247716
    #   -> [0.396774, 0.892206]
    assert c["agreement"]["rate"] == pytest.approx(0.7)
    assert c["agreement"]["low"] == pytest.approx(0.396774, abs=1e-5)
    assert c["agreement"]["high"] == pytest.approx(0.892206, abs=1e-5)
    # Kappa: po = 0.7; pe = ((a+b)(a+c) + (c+d)(b+d)) / n^2 = (6*5 + 4*5) / 100 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4
    #   SE = sqrt(po(1-po) / (n(1-pe)^2)) = sqrt(0.21 / 2.5) = sqrt(0.084) = 0.289828
    #   interval 0.4 -+ 1.959964 * 0.289828 = 0.4 -+ 0.568052 -> [-0.168052, 0.968052]
    k = c["kappa"]
    assert k["kappa"] == pytest.approx(0.4)
    assert k["se"] == pytest.approx(0.289828, abs=1e-6)
    assert (k["low"], k["high"]) == (pytest.approx(-0.168052, abs=1e-5), pytest.approx(0.968052, abs=1e-5))
    # Rejections: precision a/(a+b) = 4/6, recall a/(a+c) = 4/5; false fails b/(b+d) = 2/5; false passes c/(a+c) = 1/5.
    # Wilson of 4/5: centre = (0.8 + 0.384146)/1.768292 = 0.669655, half = 1.959964*sqrt(0.032+0.0384146)/1.768292 = 0.294122
    #   -> [0.375533, 0.963777]
    assert c["precision"]["rate"] == pytest.approx(4 / 6)
    assert c["recall"]["rate"] == pytest.approx(0.8)
    assert (c["recall"]["low"], c["recall"]["high"]) == (pytest.approx(0.375533, abs=1e-5), pytest.approx(0.963777, abs=1e-5))
    assert c["false_fail_rate"]["rate"] == pytest.approx(0.4) and c["false_pass_rate"]["rate"] == pytest.approx(0.2)
    # The disagreements, by row: the two good outputs it rejected, the bad one it let through.
    assert [w["row"] for w in c["false_fails"]] == [5, 6] and [w["row"] for w in c["false_passes"]] == [7]
    # The whole contract against the whole-output labels: the same table here (no other condition decides a row).
    assert (judge["contract"]["both_fail"], judge["contract"]["false_fail"], judge["contract"]["false_pass"],
            judge["contract"]["both_pass"]) == (4, 2, 1, 3)


def test_the_text_report_shows_the_matrix_the_intervals_and_the_rows(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "judged.jsonl"
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(ten_rows(tmp_path)), "--judge", "--quiet", "--out", str(out_file))
    assert code == 0
    block = out[out.index("post.coverage_floor:"):]
    assert "    rejects               4           2   (false fails: 2)" in block
    assert "    accepts               1           3   (false passes: 1)" in block
    assert "agreement 70.0% [39.7, 89.2]   kappa 0.40 [-0.17, 0.97]" in block
    assert "false fails:  row 5, row 6" in block and "false passes: row 7" in block
    # each record holds what the labels and the conditions said, and the trace the debugger opens
    rec = [json.loads(line) for line in out_file.read_text().splitlines()][4]
    assert rec["verdicts"]["post.coverage_floor"] == "fail" and rec["label"] == {"output": "pass", "conditions": {}}
    assert rec["attempts"] == 0 and rec["trace"]  # judged once: no remedy asked


def test_no_model_is_asked_and_a_remedy_is_never_tried(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The rows carry no replies: only the labelled output is judged, whatever the file's llm: block says."""
    data = write(tmp_path / "one.jsonl", [labelled(0.2, "fail", coverage_floor="fail")])
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(data), "--judge", "--json", "--quiet")
    assert code == 0
    summary = json.loads(out)["summary"]
    assert summary["remedies_per_row"] == 0 and summary["cost_usd"]["total"] == 0


def test_malformed_labels_are_bad_rows_with_their_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = labelled(0.9, "pass")
    data = write(tmp_path / "bad.jsonl", [
        good,
        {**good, "label": "maybe"},
        {**good, "labels": {"coverage_flor": "fail"}},
        {k: v for k, v in good.items() if k != "label"},
        {k: v for k, v in good.items() if k != "output"},
        {**good, "labels": {"coverage_floor": 1}},
        {**good, "labels": ["coverage_floor"]},
        {"input": good["input"]},
        "{not json",
    ])
    code, out, err = run(capsys, "eval", str(SAMPLE), "--data", str(data), "--judge", "--quiet")
    assert code == 0 and "Traceback" not in err
    assert "row 2: 'label' must be \"pass\" or \"fail\" (the whole output acceptable or not), not \"maybe\" (skipped)" in err
    assert ("row 3: 'labels' names 'coverage_flor', which is not a post condition of the contract (its conditions: "
            "answer_present, coverage_floor, evidence_for_high_coverage, snippet_budget, cites_known_documents)") in err
    assert "row 4: the row has an 'output' but no 'label'" in err
    assert "row 5: 'label' labels an output, but the row has no 'output'" in err
    assert "row 6: 'labels'.coverage_floor must be \"pass\" or \"fail\", not 1" in err
    assert "row 7: 'labels' must be an object" in err
    assert "row 8: no 'output' to judge: --judge needs rows" in err
    assert "row 9: not a JSON value" in err
    assert "judged: 1 labelled output(s)" in out


def test_a_pipeline_cannot_be_judged(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "eval", str(ROOT / "samples" / "rag_router.pipeline.yaml"), "--data", str(LABELLED), "--judge")
    assert code == 1 and "is a pipeline: --judge measures a contract's conditions" in err


def test_the_bundled_sample_has_a_condition_that_false_fails_and_one_that_false_passes(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(LABELLED), "--judge", "--json", "--quiet")
    assert code == 0
    judge = json.loads(out)["summary"]["judge"]
    by = {c["check"]: c for c in judge["conditions"]}
    floor, evidence = by["post.coverage_floor"], by["post.evidence_for_high_coverage"]
    assert floor["false_fail"] == 6 and floor["false_pass"] == 0  # good, cited answers with a modest coverage_score
    assert evidence["false_pass"] == 5 and evidence["false_fail"] == 0  # claims at 0.6-0.75 with no evidence
    assert all(c["false_fail"] == c["false_pass"] == 0 for name, c in by.items() if name not in (floor["check"], evidence["check"]))
