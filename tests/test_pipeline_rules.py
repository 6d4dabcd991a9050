"""PIP and RTE rules as a user sees them: which steps, which fields, which path."""

from __future__ import annotations

import textwrap

from conftest import FIXTURES, SAMPLES

from contractstudio.analysis.check import check_text
from contractstudio.findings.diagnostics import Diagnostic


def diags(yaml_text: str) -> list[Diagnostic]:
    return check_text(textwrap.dedent(yaml_text), "p.pipeline.yaml").diagnostics


def codes(yaml_text: str) -> list[str]:
    return [d.code for d in diags(yaml_text)]


HEAD = """\
kind: pipeline
name: t
entry_step_id: a
"""


def test_sample_rag_router_is_clean() -> None:
    text = (SAMPLES / "rag_router.pipeline.yaml").read_text()
    assert check_text(text, "rag_router.pipeline.yaml").diagnostics == []


def test_state_maybe_unset_names_a_concrete_path_in_related() -> None:
    found = check_text((FIXTURES / "err/PIP/maybe_unset.yaml").read_text(), "m.yaml").diagnostics
    [d] = found
    assert d.code == "PIP201" and "'seed_nodes'" in d.message and "'expand'" in d.message
    notes = [r.message for r in d.related]
    assert notes[0] == "step 'route' (call_model) does not set it"
    assert notes[1] == "step 'dispatch' (prefix_router) does not set it"
    assert notes[-1] == "requires 'seed_nodes' here"
    assert [r.line for r in d.related] == [7, 11, 19]
    assert "route -> dispatch -> expand" in (d.hint or "") and "search" in (d.hint or "")


def test_field_set_on_every_branch_before_a_join_is_not_reported() -> None:
    assert diags((FIXTURES / "ok/pip_branches_join.yaml").read_text()) == []


def test_any_of_group_satisfied_by_different_fields_on_different_branches() -> None:
    assert diags((FIXTURES / "ok/pip_any_of_on_each_branch.yaml").read_text()) == []


def test_router_loop_with_exit_is_not_reported() -> None:
    assert diags((FIXTURES / "ok/pip_router_loop_with_exit.yaml").read_text()) == []


def test_field_set_only_inside_a_skippable_loop_is_reported_after_it() -> None:
    text = HEAD + """\
inputs: [retrieval_mode, retrieval_query]
steps:
  - id: a
    action: call_model
    prompt: judge_v1
    next: decide
  - id: decide
    action: prefix_router
    more_prefix: "[MORE:]"
    on_more: search
    on_other: fetch
  - id: search
    action: search_nodes
    next: a
  - id: fetch
    action: fetch_node_texts
    end: true
"""
    found = diags(text)
    assert [(d.code, d.line) for d in found] == [("PIP201", 19)]
    assert "'seed_nodes'" in found[0].message


def test_one_of_group_unset_on_a_branch_is_reported_once_with_both_names() -> None:
    text = HEAD + """\
inputs: [retrieval_mode]
steps:
  - id: a
    action: search_nodes
    end: true
"""
    [d] = diags(text)
    assert d.code == "PIP202"
    assert "one of 'followup_query', 'retrieval_query'" in d.message


def test_unknown_action_does_not_cascade_into_unset_fields() -> None:
    text = HEAD + """\
steps:
  - id: a
    action: fetch_context
    next: b
  - id: b
    action: fetch_node_texts
    end: true
"""
    assert codes(text) == ["PIP106"]


def test_unknown_target_hint_suggests_the_close_step_and_does_not_add_no_way_to_end() -> None:
    [d, unreachable] = diags((FIXTURES / "err/PIP/unknown_target.yaml").read_text())
    assert d.code == "PIP102" and d.hint == "did you mean 'persist'?"
    assert unreachable.code == "PIP104"


def test_a_typo_in_the_only_exit_of_a_loop_is_one_finding_not_also_a_loop_that_never_ends() -> None:
    found = diags((FIXTURES / "err/PIP/typo_in_loop_exit.yaml").read_text())
    assert [(d.code, d.message, d.hint) for d in found] == [
        ("PIP102", "step 'review': on_done names 'persst', which is not a step", "did you mean 'persist'?"),
        ("PIP104", "step 'persist' cannot be reached from the entry step 'draft'", "route to it with next or on_*, or remove it"),
    ]


def test_dead_end_reports_the_cause_only() -> None:
    found = diags((FIXTURES / "err/PIP/dead_end.yaml").read_text())
    assert [(d.code, d.message) for d in found] == [
        ("PIP105", "step 'persist' is a dead end: it has no next, on_* target or end: true")
    ]


def test_trap_cycle_is_one_finding_listing_the_loop() -> None:
    [d] = diags((FIXTURES / "err/PIP/trap_cycle.yaml").read_text())
    assert d.code == "PIP105" and "'retry', 'again'" in d.message
    assert [r.message for r in d.related] == ["step 'again' is part of the loop"]


def test_detached_cycle_is_unreachable_and_cannot_end() -> None:
    text = HEAD + """\
steps:
  - id: a
    action: call_model
    prompt: p
    end: true
  - id: x1
    action: call_model
    prompt: p
    next: x2
  - id: x2
    action: call_model
    prompt: p
    next: x1
"""
    assert [(d.code, d.line) for d in diags(text)] == [("PIP104", 9), ("PIP104", 13)]


def test_no_entry_still_reports_dead_ends_and_keys() -> None:
    text = """\
kind: pipeline
name: t
steps:
  - id: a
    action: call_model
"""
    assert codes(text) == ["PIP101", "PIP105", "PIP203"]


def test_router_mismatch_error_points_at_router_and_relates_the_declared_prefix() -> None:
    found = diags((FIXTURES / "err/RTE/router_mismatch.yaml").read_text())
    error, warning = found
    assert error.severity == "error" and "'[SEMANTIC_RERANK:]'" in error.message
    assert error.related[0].line == 8
    assert warning.severity == "warning" and "'[WEB:]'" in warning.message


def test_longer_prefix_first_is_not_shadowed() -> None:
    assert diags((FIXTURES / "ok/rte_router_agrees.yaml").read_text()) == []


def test_suppression_comment_silences_a_pipeline_rule() -> None:
    text = HEAD + """\
steps:
  - id: a
    action: call_model
    prompt: p
    end: true
  - id: b   # contractstudio: ignore[PIP104]
    action: call_model
    prompt: p
    end: true
"""
    assert codes(text) == []


def test_docs_actions_table_matches_the_builtin_catalog() -> None:
    from conftest import ROOT

    from contractstudio.documents.actions import BUILTIN_ACTIONS

    rows = {ln.split("|")[1].strip().strip("`"): ln for ln in (ROOT / "docs" / "actions.md").read_text().splitlines()
            if ln.startswith("| `")}
    for name, spec in BUILTIN_ACTIONS.items():
        cells = [c.strip() for c in rows[name].split("|")[2:6]]
        assert cells[0] == ", ".join(f"`{f}`" for f in spec.requires_state)
        assert cells[1] == ", ".join("`[" + ", ".join(g) + "]`" for g in spec.requires_any_state)
        assert cells[2] == ", ".join(f"`{f}`" for f in spec.requires_step)
        assert cells[3] == ", ".join(f"`{f}`" for f in spec.ensures_state)


def test_many_fields_unset_keep_every_finding_and_show_paths_for_the_first_ones() -> None:
    from contractstudio.analysis.rules.pipeline_state import MAX_WITNESS_FIELDS

    n = MAX_WITNESS_FIELDS + 6
    actions = "".join(f"  use{i}: {{requires_state: [f{i}]}}\n  set{i}: {{ensures_state: [f{i}]}}\n" for i in range(n))
    steps = "".join(f"  - {{id: u{i}, action: use{i}, next: {'u' + str(i + 1) if i + 1 < n else 's0'}}}\n" for i in range(n))
    steps += "".join(f"  - {{id: s{i}, action: set{i}, {'next: s' + str(i + 1) if i + 1 < n else 'end: true'}}}\n" for i in range(n))
    found = diags(f"kind: pipeline\nname: t\nentry_step_id: u0\nactions:\n{actions}steps:\n{steps}")
    assert [d.code for d in found] == ["PIP201"] * n
    assert all(d.related for d in found[:MAX_WITNESS_FIELDS])
    assert not found[-1].related and found[-1].hint == "set it on every path to this step"
