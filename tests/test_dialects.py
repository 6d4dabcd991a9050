"""Dialects: LocalAI-RAG pipelines and AgentAnvil contracts analyzed as they are written.

Fixtures under tests/fixtures/dialects/<dialect>/: each err/*.yaml has a .out of
finding lines (tests/fixtures/README.md), `path:line:col: ...` for a finding in another
file (a base), the path relative to the fixture's folder. Files of a clean folder
(localai-rag/pipelines, with its base/) report nothing; an AgentAnvil contract
cannot declare judges, annotators or a model, so a clean one reports exactly the
"not checkable" infos its .out lists, and nothing above info.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, SAMPLES
from fixture_output import expected, found

from contractstudio.analysis.check import check_file
from contractstudio.cli import main

DIALECTS = FIXTURES / "dialects"
ERR = sorted(DIALECTS.glob("*/err/*.yaml"))
OK_LOCALAI = sorted((DIALECTS / "localai-rag" / "pipelines").rglob("*.yaml"))
OK_ANVIL = sorted((DIALECTS / "agentanvil" / "ok").glob("*.yaml"))


@pytest.mark.parametrize("case", ERR, ids=lambda p: f"{p.parts[-3]}/{p.stem}")
def test_broken_dialect_file_reports_exactly_its_out_file(case: Path) -> None:
    assert found(case) == expected(case)


@pytest.mark.parametrize("case", OK_LOCALAI, ids=lambda p: p.stem)
def test_clean_localai_pipeline_is_silent(case: Path) -> None:
    assert found(case) == []


@pytest.mark.parametrize("case", OK_ANVIL, ids=lambda p: p.stem)
def test_clean_agentanvil_contract_reports_only_what_cannot_be_checked(case: Path) -> None:
    report = check_file(case)
    assert {d.severity for d in report.diagnostics} <= {"info"}
    assert found(case) == expected(case)
    assert all((d.hint or "").startswith("not checkable: AgentAnvil") for d in report.diagnostics)


def test_every_branch_key_is_an_edge_of_the_graph(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(DIALECTS / "localai-rag" / "pipelines" / "compare_snapshots.yaml")]) == 0
    out = capsys.readouterr().out
    for edge in ("[LOOKUP:] ──▶ prepare", "answer ────────▶ reply_grounded", "search_again ──▶ repeat_check",
                 "ok ────▶ judge", "over ──▶ retry_guard", "allow ──▶ shrink", "deny ───▶ reply_unsure",
                 "repeat ──▶ reply_unsure", "search_action ──▶ find", "done ───────────▶ fit", "back ──▶ each_snapshot"):
        assert edge in out


def test_check_on_a_localai_pipelines_folder_analyzes_every_pipeline_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    folder = DIALECTS / "localai-rag" / "pipelines"
    assert main(["check", "--format", "json", str(folder)]) == 0
    out = json.loads(capsys.readouterr().out)
    read_as = {Path(f["path"]).name: f["dialect"] for f in out["files"]}
    assert read_as == {name: "localai-rag" for name in (
        "code_help.yaml", "code_help_strict.yaml", "compare_snapshots.yaml", "fetch_default_budget.yaml", "guarded_retry.yaml",
        "legacy_router.yaml", "pack.yaml",
        "code_help_base.yaml")}
    assert out["diagnostics"] == []


def test_a_broken_base_is_reported_once_per_place_when_a_folder_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--format", "json", str(DIALECTS / "localai-rag" / "err")]) == 1
    diagnostics = json.loads(capsys.readouterr().out)["diagnostics"]
    places = [(d["file"], d["line"], d["column"], d["code"]) for d in diagnostics]
    assert len(places) == len(set(places))
    in_base = [d for d in diagnostics if d["file"].endswith("broken_base.yaml") and d["code"] == "PIP204"]
    assert len(in_base) == 1


def test_inherited_finding_names_the_extends_line_that_brought_it(tmp_path: Path) -> None:
    report = check_file(DIALECTS / "localai-rag" / "err" / "uses_broken_base.yaml")
    [pip204] = [d for d in report.diagnostics if d.code == "PIP204"]
    assert pip204.file.endswith(os.path.join("base", "broken_base.yaml"))
    assert [(Path(r.file).name, r.line, r.column) for r in pip204.related] == [("uses_broken_base.yaml", 4, 12)]


def test_text_output_says_what_each_file_was_read_as_and_shows_the_base_line(capsys: pytest.CaptureFixture[str]) -> None:
    case = DIALECTS / "localai-rag" / "err" / "uses_broken_base.yaml"
    assert main(["check", str(case)]) == 1
    out = capsys.readouterr().out
    assert f"{case}: read as localai-rag" in out
    assert "edge_allowlist_from_settings: graph_edge_list" in out  # the base's own line under its finding


def test_a_file_of_no_known_format_gets_yml003_with_a_hint_listing_the_dialects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "other.yaml"
    f.write_text("title: not ours\nitems: [1, 2]\n")
    assert main(["check", str(f)]) == 1
    out = capsys.readouterr().out
    assert "YML003 the document has no 'kind:'" in out
    assert "LocalAI-RAG" in out and "AgentAnvil" in out and "--dialect" in out


def test_dialect_option_forces_the_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "contract.yaml"
    f.write_text("name: minimal\n")  # no AgentAnvil lists: not detected by shape
    assert main(["check", str(f)]) == 1
    assert "YML003" in capsys.readouterr().out
    assert main(["check", "--dialect", "agentanvil", "--format", "json", str(f)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["files"] == [{"path": str(f), "dialect": "agentanvil"}]
    native = DIALECTS / "localai-rag" / "pipelines" / "pack.yaml"
    assert main(["check", "--dialect", "contractstudio", str(native)]) == 1
    assert "YML003" in capsys.readouterr().out


def test_folder_setting_reads_every_yaml_file_below_it_as_its_dialect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".contractstudio.yaml").write_text("dialect: agentanvil\n")
    sub = tmp_path / "contracts"
    sub.mkdir()
    (sub / "tiny.yaml").write_text("name: tiny\n")
    assert main(["check", "--format", "json", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [Path(f["path"]).name for f in out["files"]] == ["tiny.yaml"]
    assert out["files"][0]["dialect"] == "agentanvil"


def test_pipelines_root_from_the_folder_setting_resolves_extends_by_name(tmp_path: Path) -> None:
    shutil.copytree(DIALECTS / "localai-rag" / "pipelines", tmp_path / "pipes")
    (tmp_path / "pipes" / "code_help.yaml").write_text(
        (tmp_path / "pipes" / "code_help.yaml").read_text().replace("./base/code_help_base.yaml", "base/code_help_base"))
    (tmp_path / "elsewhere").mkdir()
    moved = tmp_path / "elsewhere" / "code_help.yaml"
    (tmp_path / "pipes" / "code_help.yaml").rename(moved)
    assert "REF203" in [d.code for d in check_file(moved).diagnostics]
    (tmp_path / ".contractstudio.yaml").write_text("pipelines_root: pipes\n")
    assert check_file(moved).diagnostics == []


def test_convert_writes_the_native_document_that_reads_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = DIALECTS / "localai-rag" / "pipelines" / "compare_snapshots.yaml"
    out = tmp_path / "compare_snapshots.pipeline.yaml"
    assert main(["convert", str(source), "--to", "contractstudio", "-o", str(out)]) == 0
    text = out.read_text()
    assert "\nkind: pipeline\n" in text and "catalog: localai-rag" in text and "extends" not in text
    assert check_file(out).diagnostics == []
    capsys.readouterr()
    assert main(["graph", str(out)]) == 0
    native_graph = capsys.readouterr().out
    assert main(["graph", str(source)]) == 0
    assert capsys.readouterr().out == native_graph


def test_convert_of_an_agentanvil_contract_keeps_its_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = DIALECTS / "agentanvil" / "ok" / "support_desk.yaml"
    assert main(["convert", str(source), "--to", "contractstudio"]) == 0
    text = capsys.readouterr().out
    for piece in ("kind: agent", "version: '2.1'", "oracle: functional", "max_cost_usd: 0.08", "max_tool_calls: 6",
                  "tool_pattern: issue_.*", "check: metric", "inputs:"):
        assert piece in text


def test_convert_refuses_a_native_file_and_a_broken_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert", str(SAMPLES / "rag_router.pipeline.yaml"), "--to", "contractstudio"]) == 1
    assert "already" in capsys.readouterr().err
    assert main(["convert", str(DIALECTS / "localai-rag" / "err" / "branches.yaml"), "--to", "contractstudio"]) == 1


def test_simulate_follows_prefix_and_json_decision_routes(capsys: pytest.CaptureFixture[str]) -> None:
    pipeline = str(DIALECTS / "localai-rag" / "pipelines" / "code_help.yaml")
    assert main(["simulate", pipeline, "--reply", "[ANSWER:] it is in utils", "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)
    assert sim["path"][:5] == ["to_english", "past_turns", "plan", "plan_route", "reply_direct"]
    # One reply answers every model call: the router's prefix, then the judge's JSON decision.
    assert main(["simulate", pipeline, "--reply", '[LOOKUP:] {"decision": "Answer"}', "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    path = [s["step"] for s in steps]
    assert path[path.index("plan_route") + 1] == "find"
    assert path[path.index("enough") + 1] == "reply_grounded"
    assert steps[path.index("enough")]["label"] == "answer"


def test_export_keeps_a_dialect_file_in_its_own_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = DIALECTS / "localai-rag" / "pipelines" / "code_help.yaml"
    assert main(["export", str(source)]) == 0
    assert capsys.readouterr().out == source.read_text()
    assert main(["export", str(DIALECTS / "localai-rag" / "err" / "uses_broken_base.yaml")]) == 1
    err = capsys.readouterr().err
    assert "export refused" in err and "broken_base.yaml:23:37" in err


def test_samples_hold_one_pipeline_and_one_contract_of_each_dialect_and_check_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--format", "json", str(SAMPLES)]) == 0
    read_as = {Path(f["path"]).name: f["dialect"] for f in json.loads(capsys.readouterr().out)["files"]}
    assert read_as["repo_qa.yaml"] == read_as["repo_qa_base.yaml"] == "localai-rag"
    assert read_as["refund_desk.yaml"] == "agentanvil"


def test_agentanvil_readme_shape_with_hybrid_and_no_criteria_passes_check(capsys: pytest.CaptureFixture[str]) -> None:
    """AgentAnvil's default oracle with no criteria is a warning, not a failed CI (issue 21.4)."""
    case = DIALECTS / "agentanvil" / "err" / "hybrid_defaults.yaml"
    assert main(["check", str(case)]) == 0
    assert "warning AGT202 task 'triage' uses oracle: hybrid" in capsys.readouterr().out


def test_the_analyzer_counts_a_base_finding_once_for_every_face() -> None:
    # findings_of lives below the faces: check, and any other face that counts a folder's findings, use it
    from contractstudio.analysis.check import check_paths, findings_of

    reports = check_paths([DIALECTS / "localai-rag" / "err"])
    every = [d for r in reports for d in r.diagnostics if d.file.endswith("broken_base.yaml") and d.code == "PIP204"]
    once = [d for d in findings_of(reports) if d.file.endswith("broken_base.yaml") and d.code == "PIP204"]
    assert len(every) > 1 and len(once) == 1
    assert not once[0].related  # the base's own finding, not one seen through an extending file


def test_simulate_counts_a_loop_guard_to_its_bound_instead_of_looping_forever(capsys: pytest.CaptureFixture[str]) -> None:
    """A loop_guard allows while under settings.max_turn_loops, then denies: the path ends (issue 21.1)."""
    case = DIALECTS / "localai-rag" / "pipelines" / "guarded_retry.yaml"
    assert main(["simulate", str(case), "--reply", "just text"]) == 0
    out = capsys.readouterr().out
    assert "loops forever" not in out
    assert out.count("retry_guard") >= 4  # three passes allowed, the fourth denied
    assert "denied after 3 passes (settings.max_turn_loops)" in out
    assert "end: reached the end step 'finalize'" in out


def test_simulate_names_the_branch_it_assumed_when_a_loop_rests_on_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A handler's route cannot be known statically: no 'loops forever' verdict, but the step, the route taken
    and how to steer it (issue 21.1)."""
    f = tmp_path / "repeat.yaml"
    f.write_text("YAMLpipeline:\n  name: repeat\n  settings: {entry_step_id: ask, behavior_version: '0.2.0', compat_mode: latest}\n"
                 "  steps:\n    - {id: ask, action: call_model, prompt_key: r/ask_v1, next: same_query}\n"
                 "    - {id: same_query, action: repeat_query_guard, on_ok: ask, on_repeat: done}\n"
                 "    - {id: done, action: finalize, end: true}\n")
    assert main(["simulate", str(f), "--reply", "just text"]) == 0  # an assumption stated, not a failure (issue 21.1)
    out = capsys.readouterr().out
    assert "loops forever" not in out
    assert ("assumed: the path returns to 'ask' because step 'same_query' was assumed to take route 'ok' "
            "(its handler chooses at run time): steer it with --route same_query=ROUTE") in out
    assert main(["simulate", str(f), "--reply", "just text", "--route", "same_query=repeat"]) == 0
    capsys.readouterr()
    assert main(["simulate", str(f), "--reply", "just text", "--route", "same_query=ok"]) == 1  # chosen, not assumed
    assert "loops forever" in capsys.readouterr().out


def test_an_agentanvil_contract_with_its_lists_left_empty_is_read_as_agentanvil(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`policies:`, `tasks:` and `constraints:` left empty are AgentAnvil's (issue 34.13): the same findings as
    `--dialect agentanvil` (its pydantic refuses None for them too), not "YML003 no 'kind:'"."""
    f = tmp_path / "draft.yaml"
    f.write_text('name: refund_agent\nversion: "0.1"\npolicies:\ntasks:\nconstraints:\n')
    assert main(["check", str(f)]) == 1
    detected = capsys.readouterr().out
    assert "YML003" not in detected and "read as agentanvil" in detected
    assert "3:10: error SCH103 policies: input should be a valid list (got None)" in detected
    assert main(["check", "--dialect", "agentanvil", str(f)]) == 1
    assert capsys.readouterr().out == detected
    other = tmp_path / "other.yaml"  # a name and an empty `tasks:` among keys AgentAnvil does not have: not claimed
    other.write_text("name: build\ntasks:\nsteps: [1]\n")
    assert main(["check", str(other)]) == 1
    assert "YML003" in capsys.readouterr().out


def test_a_native_contract_forced_to_another_dialect_is_not_told_to_add_the_kind_it_has(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`check --dialect localai-rag` on a `kind: contract` file: the hint names the dialect, not "add 'kind: contract'"."""
    contract = SAMPLES / "review_extraction.contract.yaml"
    assert main(["check", "--dialect", "localai-rag", str(contract)]) == 1
    out = capsys.readouterr().out
    assert "YML003 read as localai-rag" in out
    assert "add 'kind: contract'" not in out
    assert "it has kind: contract (the native format): drop --dialect localai-rag" in out
