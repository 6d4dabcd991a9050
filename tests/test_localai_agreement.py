"""`check`, `simulate` and the runner agree on LocalAI-RAG's e2e pipelines (issue 34.10-12).

The files under tests/conformance/localai_rag/ are ours, shaped like LocalAI-RAG's own e2e pipelines
(their README.md says which is which). For every pipeline and every reply a router can see (each
prefix, and text no prefix matches), `simulate` and a run (`eval` of the pipeline: the real runner with
simulated actions) end the same way with the same words, and `check` has an error exactly where some
reply cannot reach an end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contractstudio.analysis.check import check_file
from contractstudio.analysis.loaded_pipeline import LoadedPipeline
from contractstudio.cli import main
from contractstudio.documents.models import Pipeline
from contractstudio.evaluation.dataset import Row
from contractstudio.evaluation.pipelines import PipelineRowRunner
from contractstudio.runtime.loading import Refused
from contractstudio.runtime.pipeline_runner import step_prefixes
from contractstudio.runtime.route_simulation import simulate

HERE = Path(__file__).parent / "conformance" / "localai_rag"
FILES = sorted(HERE.glob("*.yaml"))
NO_PREFIX = "Just some text no router knows."


def pipelines(path: Path) -> list[Pipeline]:
    return [d.pipeline for d in check_file(path).documents if isinstance(d, LoadedPipeline)]


def replies(pipeline: Pipeline) -> list[str]:
    """Each prefix any router of the pipeline handles (with a payload), and a reply none of them matches."""
    found = [f"{prefix} the payload" for step in pipeline.steps for _route, prefix in step_prefixes(step)]
    return [*dict.fromkeys(found), NO_PREFIX]


def run_row(path: Path, pipeline: Pipeline, reply: str) -> dict[str, object]:
    runner = PipelineRowRunner(path, name=pipeline.name)
    return runner.run(Row(1, "r1", {f: "given" for f in pipeline.inputs}, "d" * 16, replies=[reply]))


def errors_by_pipeline(path: Path) -> dict[str, list[str]]:
    """Each pipeline's error findings (a pack's pipelines told apart by the line their `- name:` entry starts on)."""
    text = path.read_text(encoding="utf-8")
    starts = [(i + 1, line.split(":", 1)[1].strip()) for i, line in enumerate(text.splitlines())
              if line.lstrip().startswith(("- name:", "name:")) and line.startswith(("  - name:", "  name:"))]
    out: dict[str, list[str]] = {name: [] for _, name in starts}
    for d in check_file(path).diagnostics:
        if d.severity == "error":
            owner = [name for line, name in starts if line <= d.line][-1]
            out[owner].append(f"{d.code} {d.message}")
    return out


CASES = [(path, p.name) for path in FILES for p in pipelines(path)]


def test_the_conformance_folder_holds_every_e2e_shape() -> None:
    assert [p.name for p in FILES] == ["graph_search.yaml", "pack.yaml", "smoke.yaml"]
    assert len(CASES) == 7


@pytest.mark.parametrize(("path", "name"), CASES, ids=[f"{p.stem}-{n}" for p, n in CASES])
def test_simulate_and_a_run_end_alike_for_every_reply_and_check_agrees(path: Path, name: str) -> None:
    pipeline = next(p for p in pipelines(path) if p.name == name)
    errors = errors_by_pipeline(path)
    failing = []
    for reply in replies(pipeline):
        sim = simulate(pipeline, reply)
        if any(errors.values()):  # the one loader refuses to run a file check finds an error in
            with pytest.raises(Refused):
                run_row(path, pipeline, reply)
            failing += [reply] if sim.outcome != "end" else []
            continue
        rec = run_row(path, pipeline, reply)
        assert (sim.outcome, rec["outcome"]) in {("end", "end"), ("assertion", "assertion_failed"),
                                                 ("dead_end", "dead_end")}, (reply, sim.message, rec["errors"])
        assert sim.path == rec["path"], reply
        if sim.outcome != "end":
            assert [sim.message] == rec["errors"], reply  # the same words
            failing.append(reply)
    assert bool(errors[name]) == bool(failing), (errors[name], failing)


def test_fetch_without_max_context_tokens_runs_on_the_runtime_default(capsys: pytest.CaptureFixture[str]) -> None:
    """Their runner fills settings.max_context_tokens (5,000) when a pipeline leaves it out; check knew, simulate did not."""
    assert main(["simulate", str(HERE / "graph_search.yaml"), "--reply", "[BM25:] the payload"]) == 0
    out = capsys.readouterr().out
    assert "read_texts" in out and "end: reached the end step 'done'" in out
    assert "requires the key 'budget_tokens'" not in out


def test_a_follow_up_loop_ends_at_the_guard_in_simulate_and_in_a_run() -> None:
    """loop_guard allows settings.max_turn_loops passes, then denies: a run counts as the simulation does."""
    path = HERE / "graph_search.yaml"
    pipeline = pipelines(path)[0]
    reply = "[Requesting data on:] more"
    sim = simulate(pipeline, reply)
    rec = run_row(path, pipeline, reply)
    assert sim.outcome == "end" and rec["outcome"] == "end"
    assert sim.path.count("guard") == 3 and rec["path"] == sim.path  # max_turn_loops: 2 passes, then denied


def test_expand_without_seeds_goes_on_in_simulate_saying_what_it_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    """LocalAI-RAG's expand_dependency_tree treats missing seeds as 'no_seeds' and goes on; P3 reaches finalize."""
    assert main(["simulate", str(HERE / "pack.yaml"), "--reply", "[Answer:] done", "--json"]) == 0
    sims = {s["pipeline"]: s for s in json.loads(capsys.readouterr().out)}
    p3 = sims["P3"]
    assert p3["outcome"] == "end" and p3["path"][-1] == "done"
    widen = next(s for s in p3["steps"] if s["step"] == "widen")
    assert widen["missing"] == [] and "retrieval_seed_nodes" in (widen["note"] or "") and "no_seeds" in widen["note"]


def test_expand_without_seeds_is_a_warning_in_check_and_convert_goes_on(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(HERE / "pack.yaml")]) == 0
    out = capsys.readouterr().out
    assert "warning PIP202 step 'widen' (action expand_dependency_tree) requires 'retrieval_seed_nodes'" in out
    assert "no_seeds" in out
    assert main(["convert", str(HERE / "pack.yaml"), "--to", "contractstudio", "-o", str(tmp_path / "pack.yaml")]) == 0


STRICT = Path(__file__).parent / "fixtures" / "dialects" / "localai-rag" / "err" / "strict_router.yaml"


def test_an_empty_prefix_is_named_as_the_cause_not_blamed_on_the_routes_after_it(capsys: pytest.CaptureFixture[str]) -> None:
    """LocalAI-RAG refuses a prefix_router with an empty route prefix on every run: one error that says so, no RTE304."""
    assert main(["check", str(STRICT)]) == 1
    out = capsys.readouterr().out
    assert "error RTE307 step 'pick': route 'direct' has an empty prefix, and its runtime refuses the step on every run" in out
    assert "RTE304" not in out and "the earlier prefix ''" not in out


def test_a_router_without_on_other_is_an_error_for_localai_rag_and_every_run_stops_there(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Their prefix_router raises ValueError without on_other even when a prefix matches: RTE305 is an error there,
    and simulate stops at the router for a reply it would route."""
    assert main(["check", str(STRICT)]) == 1
    assert "error RTE305 prefix_router step 'pick' has no on_other, and its runtime refuses" in capsys.readouterr().out
    sims = {p.name: simulate(p, "[DIRECT:] hello") for p in pipelines(STRICT)}
    for sim in sims.values():
        assert sim.outcome == "assertion" and sim.path == ["ask", "pick"]
    assert "has an empty prefix" in sims["blank_route"].message
    assert "it has no on_other" in sims["no_fallback"].message
