"""`graph` and `simulate` on the samples: what the user sees in the terminal, Mermaid, DOT and JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import FIXTURES, SAMPLES

from contractstudio.analysis.check import check_file, check_text
from contractstudio.analysis.graph_layout import layout
from contractstudio.analysis.step_graph import END, START, StepGraph, state_flow, strongly_connected
from contractstudio.cli import main
from contractstudio.reports.graphs import render

RAG = SAMPLES / "rag_router.pipeline.yaml"

RAG_TEXT = """\
pipeline rag_router: 8 steps, entry route

 0  start ──▶ route
 1  route  [call_model] prompt router_v1  (entry)
      next ──▶ dispatch
 2  dispatch  [prefix_router]
      [SEMANTIC:] ──▶ search
      [BM25:] ──────▶ search
      [HYBRID:] ────▶ search
      [DIRECT:] ────▶ answer
      other ────────▶ answer
 3  search  [search_nodes]
      next ──▶ expand
 4  expand  [expand_dependency_tree]
      next ──▶ fetch
 5  fetch  [fetch_node_texts]
      next ──▶ rerank
 6  rerank  [rerank]
      next ──▶ answer
 7  answer  [call_model] prompt answer_v1
      next ──▶ persist
 8  persist  [persist_turn]  (end)
      end ──▶ end
 9  end"""


def graph_of(path):  # type: ignore[no-untyped-def]
    [doc] = check_file(path).documents
    return StepGraph.build(doc.model)


def test_graph_text_of_the_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(RAG)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip("\n") == RAG_TEXT
    assert max(len(line) for line in out.splitlines()) <= 80


def test_graph_mermaid_has_prefixes_on_edges_and_marks_entry_and_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(RAG), "--format", "mermaid"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flowchart TD\n")
    assert '  n2 -->|"[SEMANTIC:], [BM25:], [HYBRID:]"| n3' in out
    assert '  n2 -->|"[DIRECT:], other"| n7' in out
    assert "  n0((start))" in out and "  n9((end))" in out
    assert '  n2{"dispatch<br/>prefix_router"}' in out
    assert "  style n1 stroke-width:3px" in out  # the entry step


def test_graph_dot_is_a_digraph_with_labelled_edges(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(RAG), "--format", "dot"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('digraph "rag_router" {') and out.rstrip().endswith("}")
    assert '"dispatch" -> "answer" [label="[DIRECT:], other"];' in out
    assert '"persist" [label="persist\\npersist_turn", peripheries=2];' in out
    assert '"route" [label="route\\ncall_model", penwidth=3];' in out


def test_loop_edges_are_marked_in_every_format() -> None:
    sg = graph_of(FIXTURES / "ok/pip_router_loop_with_exit.yaml")
    text = render(sg, "text")
    assert "[MORE:] ────▶ expand  ↺ loop" in text
    assert "-.->" in render(sg, "mermaid")
    assert '"decide" -> "expand" [label="[MORE:]", style=dashed];' in render(sg, "dot")


def test_layout_is_plain_data_for_the_studio() -> None:
    lay = layout(graph_of(RAG))
    assert lay.layers[0] == [START] and lay.layers[-1] == [END]
    byid = {n.id: n for n in lay.nodes}
    assert byid["route"].entry and byid["persist"].ends and byid["dispatch"].kind == "router"
    assert byid["search"].layer == 3 and byid["answer"].layer == 7
    edge = next(e for e in lay.edges if (e.source, e.target) == ("dispatch", "answer"))
    assert edge.labels == ("[DIRECT:]", "other") and not edge.back
    loop = layout(graph_of(FIXTURES / "ok/pip_router_loop_with_exit.yaml"))
    assert [(e.source, e.target) for e in loop.edges if e.back] == [("decide", "expand")]


def test_dataflow_on_the_sample_knows_router_fields_at_the_join() -> None:
    sg = graph_of(RAG)
    flow = state_flow(sg)
    # 'answer' is reached directly from the router and after retrieval: only what both paths set.
    assert flow.names(flow.known["answer"]) == ["followup_query", "last_model_response", "retrieval_mode", "user_query"]


def test_graph_of_a_broken_file_draws_what_it_can_and_counts_diagnostics(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(FIXTURES / "err/PIP/unknown_target.yaml")]) == 1
    captured = capsys.readouterr()
    assert "1 error(s), 1 warning(s)" in captured.err
    assert "next ──▶ persst  (no such step)" in captured.out
    assert "persist  [persist_turn]  (end, unreachable)" in captured.out


def test_graph_of_a_non_pipeline_file_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    path = SAMPLES / "billing_support.agent.yaml"
    assert main(["graph", str(path)]) == 2
    assert "is not a pipeline file (kind: agent)" in capsys.readouterr().err
    assert main(["graph", "no/such/file.yaml"]) == 2


def test_simulate_bm25_reply_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(RAG), "--reply", "  [BM25:] invoice 42 refund"]) == 0
    out = capsys.readouterr().out
    assert "retrieval_mode = 'bm25', followup_query = 'invoice 42 refund'" in out
    assert " 2. dispatch  [prefix_router]\n      known: last_model_response, user_query\n" in out
    assert "      [BM25:] ──▶ search\n" in out
    assert out.rstrip().endswith("end: reached the end step 'persist'")


def test_simulate_unrecognised_reply_takes_on_other_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(RAG), "--reply", "just answer it", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["path"] == ["route", "dispatch", "answer", "persist"]
    dispatch = data["steps"][1]
    assert dispatch["route"] == "on_other" and dispatch["label"] == "other" and dispatch["target"] == "answer"
    assert dispatch["values"] == {"retrieval_mode": "other", "followup_query": "just answer it"}
    assert data["steps"][2]["known"] == ["followup_query", "last_model_response", "retrieval_mode", "user_query"]
    assert data["outcome"] == "end" and data["ok"] is True


def test_simulate_shows_a_missing_field_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(FIXTURES / "err/PIP/maybe_unset.yaml"), "--reply", "no prefix"]) == 1
    out = capsys.readouterr().out
    assert "MISSING: seed_nodes (a run fails here)" in out


def test_simulate_a_loop_that_the_same_reply_never_leaves(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(FIXTURES / "ok/pip_router_loop_with_exit.yaml"), "--reply", "[MORE:] deps"]) == 1
    out = capsys.readouterr().out
    assert "loop: the reply leads back to 'expand'" in out
    assert main(["simulate", str(FIXTURES / "ok/pip_router_loop_with_exit.yaml"), "--reply", "[ENOUGH:]"]) == 0


def test_graph_command_runs_as_a_program() -> None:
    done = subprocess.run([sys.executable, "-m", "contractstudio", "graph", str(RAG)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("pipeline rag_router: 8 steps")


def test_renderers_escape_quotes_in_names() -> None:
    text = textwrap.dedent('''\
        kind: pipeline
        name: 'say "hi"'
        entry_step_id: a
        steps:
          - id: a
            action: prefix_router
            quote_prefix: '["Q"]'
            on_quote: b
            on_other: b
          - id: b
            action: persist_turn
            end: true
        ''')
    [doc] = check_text(text, "q.yaml").documents
    sg = StepGraph.build(doc.model)
    assert '[label="[\\"Q\\"], other"]' in render(sg, "dot") and 'digraph "say \\"hi\\""' in render(sg, "dot")
    assert '-->|"[#quot;Q#quot;], other"|' in render(sg, "mermaid")


def test_newlines_in_a_routing_prefix_are_escaped_in_mermaid_and_dot() -> None:
    text = textwrap.dedent('''\
        kind: pipeline
        name: p
        entry_step_id: a
        steps:
          - id: a
            action: prefix_router
            evil_prefix: "[X:]\\nclick n0 call alert()"
            on_evil: b
            on_other: b
          - id: b
            action: persist_turn
            end: true
        ''')
    [doc] = check_text(text, "p.yaml").documents
    sg = StepGraph.build(doc.model)
    mermaid = render(sg, "mermaid")
    assert '|"[X:]\\nclick n0 call alert(), other"|' in mermaid
    assert not any(line.strip().startswith("click") for line in mermaid.splitlines())
    dot = render(sg, "dot")
    assert 'label="[X:]\\\\nclick n0 call alert(), other"' in dot
    assert 'label="a\\nprefix_router"' in dot  # the step's own line break stays DOT's \n


def test_graph_falls_back_to_ascii_arrows_on_a_terminal_without_them() -> None:
    import os

    env = {**os.environ, "PYTHONIOENCODING": "cp1252"}
    done = subprocess.run([sys.executable, "-m", "contractstudio", "graph", str(RAG)], capture_output=True, text=True,
                          timeout=60, env=env, encoding="cp1252")
    assert done.returncode == 0, done.stderr
    assert "      [BM25:] ------> search" in done.stdout and "▶" not in done.stdout


def test_simulate_steers_a_custom_router_with_route(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "ok/pip_any_of_on_each_branch.yaml")
    assert main(["simulate", path, "--reply", "x", "--route", "pick=rewrite", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == ["pick", "rewrite", "search"]
    assert main(["simulate", path, "--reply", "x", "--route", "pick=on_router"]) == 0
    assert " 1. pick      [pick_source]" in capsys.readouterr().out
    for route, message in [
        ("pick=nope", "--route pick=nope: step 'pick' has no route 'nope' (routes: router, rewrite)"),
        ("dispatch=other", "--route dispatch=other: step 'dispatch' is a prefix_router: the reply decides its route"),
        ("search=x", "--route search=x: step 'search' does not route (it has no on_* targets)"),
        ("nosuch=x", "--route nosuch=x: no step 'nosuch' (steps: pick, route, dispatch, rewrite, search)"),
        ("pick", "--route pick: write STEP=ROUTE"),
    ]:
        assert main(["simulate", path, "--reply", "x", "--route", route]) == 2
        assert message in capsys.readouterr().err


def test_simulate_fails_on_a_blank_payload_like_the_runner(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(RAG), "--reply", "[BM25:]   "]) == 1
    out = capsys.readouterr().out
    assert "MISSING: followup_query | retrieval_query (a run fails here)" in out
    assert out.rstrip().endswith("assertion: step 'search' (action 'search_nodes') requires one of the state fields "
                                 "followup_query, retrieval_query, but none is set")


def test_strongly_connected_finds_loops_and_single_steps() -> None:
    succ = {"a": ["b"], "b": ["c", "a"], "c": ["d"], "d": ["c"], "e": ["e"], "f": ["a"]}
    found = sorted(sorted(c) for c in strongly_connected(["a", "b", "c", "d", "e", "f"], succ))
    assert found == [["a", "b"], ["c", "d"], ["e"], ["f"]]


def test_strongly_connected_keeps_to_the_given_steps_and_handles_long_loops() -> None:
    ring = {str(i): [str((i + 1) % 5000)] for i in range(5000)}
    assert [len(c) for c in strongly_connected(list(ring), ring)] == [5000]  # no recursion limit on a long loop
    assert sorted(map(sorted, strongly_connected(["1", "2"], ring))) == [["1"], ["2"]]  # edges out of the set are ignored
