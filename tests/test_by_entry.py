"""Within one document, an edit in one entry of a long list is analyzed again for what it can change, and the findings
are exactly a fresh analysis's (analysis/by_entry.py, issue 35.1).

A pipeline of many steps and a contract of many examples, each with findings of every family the reuse touches (graph
findings after the edit, a finding inside an edited step, literal secrets, invalid examples), are edited at random,
edit after edit, by one `Analyzer`; after each edit its findings (with their hints, related places, subjects and
payloads) must be those of `check_text` on the same text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contractstudio.analysis.check import check_text
from contractstudio.analysis.facts import state_flow, step_graph
from contractstudio.analysis.incremental import Analyzer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_pipeline import generate  # noqa: E402

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def pipeline(steps: int = 140, duplicate: bool = True) -> str:
    """bench_pipeline's chain of routed blocks, with a description on every route step and some findings in it."""
    text = generate(steps)
    text = text.replace("    action: call_model\n", "    action: call_model\n    description: routes the query\n")
    text = text.replace("    next: b3_dispatch\n", "    next: b3_dispatc\n", 1)  # PIP102 with a did-you-mean, PIP104/105
    text = text.replace("  - id: b5_search\n", "  - id: b5_search\n    description: " + TOKEN + "\n", 1)  # YML007
    if duplicate:  # PIP103: a duplicate id (a rename is then analyzed whole by the rules that read the ids)
        text = text.replace("  - id: b7_answer\n", "  - id: b6_answer\n", 1)
    return text


def contract(examples: int = 120) -> str:
    """The bundled sample with many examples first, some with an input that is not valid, one with a secret."""
    sample = (ROOT / "samples" / "multidoc_qa.contract.yaml").read_text()
    head, rest = sample.split("examples:\n", 1)
    at = rest.index("\nscenarios:") + 1
    items = []
    for n in range(examples):
        query = "Why?" if n % 17 else "42" if n % 2 else TOKEN
        documents = "[]" if n % 13 == 5 else "\n        - {id: B2, content: Vector databases store embeddings.}"
        items.append(f"  - name: ex-{n}\n    input:\n      query: {query}\n      documents: {documents}\n")
    return f"examples:\n{''.join(items)}{rest[:at]}{head}{rest[at:]}"


SNIPPETS = ["x", "ab", " ", "\n", "\n    ", ":", ": ", "- ", "#", "'", "{", "[", "0", "b1_route", "b2_answer", "sk-", TOKEN,
            "\n    description: more", "\n    next: b4_route", "\n    prompt: router_v1", "\n    end: true",
            "\n    extra: 5", "id", "on_bm25", "      query: 7\n", "name: other", "query", "documents"]
PLACES = ["description: ", "name: ex-", "query: ", "next: ", "id: ", "action: ", "on_", "content: ", "\n  - ", "prompt: "]
EDITS = st.lists(st.tuples(st.sampled_from(PLACES), st.floats(0, 1), st.sampled_from(["insert", "delete", "delete line"]),
                           st.sampled_from(SNIPPETS), st.integers(1, 6)), min_size=1, max_size=6)


def edited(text: str, edit: tuple[str, float, str, str, int]) -> str:
    """The text after one edit right after one occurrence of a place (a key most often), chosen by a fraction."""
    place, where, kind, snippet, n = edit
    starts = [i for i in range(len(text)) if text.startswith(place, i)][:400] or [int(where * len(text))]
    at = starts[min(int(where * len(starts)), len(starts) - 1)] + len(place)
    at = min(at, len(text))
    if kind == "insert":
        return text[:at] + snippet + text[at:]
    if kind == "delete":
        return text[:at] + text[at + n:]
    start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
    return text[:start] + text[end + 1:] if end >= 0 else text[:start]


def findings(report: Any) -> list[tuple[Any, ...]]:
    return [(d, d.hint, d.subject, d.payload) for d in report.diagnostics]


def graph(report: Any) -> Any:
    """What the editing help reads of a pipeline's step graph and state flow (None for other documents)."""
    loaded = report.documents[0] if len(report.documents) == 1 else None
    sg, flow = (step_graph(loaded), state_flow(loaded)) if loaded is not None else (None, None)
    if sg is None or flow is None:
        return None
    steps = loaded.pipeline.steps  # type: ignore[union-attr]
    assert all(any(s is t for t in steps) for s in sg.steps.values())  # the steps of this analysis's model
    return ([(sid, s.model_dump()) for sid, s in sg.steps.items()], {sid: [(r.key, r.label, r.target, r.step.id) for r in rs]
            for sid, rs in sg.routes.items()}, sg.succ, sg.pred, sg.entry, sg.reachable(), sg.catalog.keys(),
            (flow.bits, flow.gen, flow.known, flow.inputs))


def edit_and_compare(text: str, edits: list[Any], path: str) -> int:
    """Analyze the text, then each edit of it, with one Analyzer; each time its findings are check_text's, and so
    are the step graph and state flow the editing help reads. How many analyses reused the last one's."""
    analyzer = Analyzer()
    assert findings(analyzer.check(text, path)) == findings(check_text(text, path))
    for edit in edits:
        text = edited(text, edit)
        got, fresh = analyzer.check(text, path), check_text(text, path)
        assert findings(got) == findings(fresh), edit
        assert graph(got) == graph(fresh), edit
    return analyzer.entries.again


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=EDITS)
def test_random_edits_of_a_long_pipeline_give_a_fresh_analysis_s_findings(edits: list[Any]) -> None:
    edit_and_compare(pipeline(), edits, "p.pipeline.yaml")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=EDITS)
def test_random_edits_of_a_contract_with_many_examples_give_a_fresh_analysis_s_findings(edits: list[Any]) -> None:
    edit_and_compare(contract(), edits, "c.contract.yaml")


ACTIONS = ["call_model", "rerank", "search_nodes", "prefix_router", "expand_dependency_tree", "no_such_action"]
STEP_EDITS = st.lists(st.tuples(st.sampled_from(["rename", "rename the suggested", "missing target", "cycle", "back edge",
                                                 "delete route", "add route", "action", "prompt", "retarget"]),
                                st.floats(0, 1), st.integers(0, 1000)), min_size=1, max_size=8)


def step_edited(text: str, edit: tuple[str, float, int]) -> str:
    """The text after one edit of what the pipeline rules read of one step (chosen by a fraction): its id (a step
    that others target renamed), a target (a missing one, its own id, an earlier step's, another step's), a route
    deleted or added, its action or its prompt."""
    kind, where, pick = edit
    starts = [i for i in range(len(text)) if text.startswith("\n  - id: ", i)]
    n = min(int(where * len(starts)), len(starts) - 1)
    if kind == "rename the suggested":  # the step an unknown target's 'did you mean' names: the hint changes
        kind, n = "rename", next((k for k, at in enumerate(starts) if text.startswith("\n  - id: b3_dispatch", at)), n)
    begin, end = starts[n] + 1, starts[n + 1] + 1 if n + 1 < len(starts) else text.index("\n", starts[n] + 1) + 1
    block = text[begin:end]
    while end < len(text) and text.startswith("    ", end):  # the last step: its lines up to the next top-level key
        end = text.index("\n", end) + 1
        block = text[begin:end]
    ids = [text[i + 9:text.index("\n", i + 1)] for i in starts]
    own, other = ids[n], ids[pick % len(ids)]
    lines = block.split("\n")
    routes = [k for k, line in enumerate(lines) if line.startswith(("    next: ", "    on_"))]
    if kind == "rename":
        lines[0] += "x" if pick % 2 else "_renamed"
    elif kind in ("missing target", "cycle", "back edge", "retarget") and routes:
        k = routes[pick % len(routes)]
        target = {"missing target": "no_such_step", "cycle": own, "back edge": ids[max(0, n - 1 - pick % 5)],
                  "retarget": other}[kind]
        lines[k] = lines[k].split(": ", 1)[0] + ": " + target
    elif kind == "delete route" and routes:
        del lines[routes[pick % len(routes)]]
    elif kind == "add route" or kind in ("missing target", "cycle", "back edge", "retarget"):
        lines.insert(1, f"    on_extra: {other}" if pick % 2 else f"    next: {other}")
    elif kind == "action":
        at = next((k for k, line in enumerate(lines) if line.startswith("    action: ")), None)
        action = "    action: " + ACTIONS[pick % len(ACTIONS)]
        if at is None:
            lines.insert(1, action)
        else:
            lines[at] = action
    elif kind == "prompt":
        at = next((k for k, line in enumerate(lines) if line.startswith("    prompt: ")), None)
        prompt = "    prompt: " + ["router_v1", "answer_v1", "no_such_prompt"][pick % 3]
        if at is None:
            lines.insert(1, prompt)
        else:
            del lines[at]
    return text[:begin] + "\n".join(lines) + text[end:]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=STEP_EDITS, duplicate=st.booleans())
def test_edits_of_ids_actions_targets_and_prompts_give_a_fresh_analysis_s_findings_graph_and_flow(edits: Any,
                                                                                                  duplicate: bool) -> None:
    """Renaming a step others target, pointing a target at a missing step, at the step itself or an earlier one (a
    cycle), deleting or adding a route, changing an action or a prompt: the rules that say which steps' findings an
    edit can change (`Touched`) and the step graph patched for the edited step's edges must give what a fresh analysis
    gives, edit after edit."""
    text, path = pipeline(60, duplicate), "p.pipeline.yaml"
    analyzer = Analyzer()
    assert findings(analyzer.check(text, path)) == findings(check_text(text, path))
    for edit in edits:
        text = step_edited(text, edit)
        got, fresh = analyzer.check(text, path), check_text(text, path)
        assert findings(got) == findings(fresh), edit
        assert graph(got) == graph(fresh), edit


@pytest.mark.parametrize(("make", "place", "path"), [(pipeline, "description: routes the query", "p.pipeline.yaml"),
                                                      (contract, "name: ex-3", "c.contract.yaml")])
def test_typing_in_one_entry_reuses_the_rest_and_finds_what_a_fresh_analysis_finds(make: Any, place: str, path: str) -> None:
    """Typing a word, a line break and a secret into one step's description or one example's name: every analysis
    after the first is made from the last one, with the findings of a fresh one (those after the entry moved down)."""
    text = make()
    analyzer = Analyzer()
    analyzer.check(text, path)
    at = text.index(place) + len(place)
    line = text[:at].count("\n") + 1
    for typed in ["a", "b", " ", "c", "\n      ", "x ", TOKEN, " "]:
        text = text[:at] + typed + text[at:]
        at += len(typed)
        got = analyzer.check(text, path)
        assert findings(got) == findings(check_text(text, path)), typed
    assert any(d.code == "YML007" and d.line == line for d in got.diagnostics)
    assert analyzer.entries.again == 8


def test_after_analyses_stopped_midway_the_next_one_is_still_per_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The studio stops the running analysis when a key comes: the analysis of the text after a burst of keys starts
    from the last one that finished (not whole, which on 44,000 steps takes seconds and is stopped again by the next
    key) and finds what a fresh one finds."""
    from contractstudio.analysis import check

    text, path = pipeline(), "p.pipeline.yaml"
    analyzer = Analyzer()
    analyzer.check(text, path)
    at = text.index("description: routes the query") + len("description: routes the query")
    load = check.load

    def stopped(*args: Any) -> Any:
        raise KeyboardInterrupt  # like studio/stoppable.py's Stopped, raised in the worker's thread

    for typed in "abc":  # three keys, each one's analysis stopped after its reading, as it loads the document
        text = text[:at] + typed + text[at:]
        at += 1
        monkeypatch.setattr(check, "load", stopped)
        with pytest.raises(KeyboardInterrupt):
            analyzer.check(text, path)
        monkeypatch.setattr(check, "load", load)
    text = text[:at] + "d" + text[at:]
    got = analyzer.check(text, path)
    assert findings(got) == findings(check_text(text, path))
    assert analyzer.entries.again == 1


def test_a_letter_typed_and_erased_while_its_analysis_was_stopped_is_not_analyzed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # The studio stops the analysis of a text a key made stale. `x` then Backspace: the text is the last one analyzed
    # again, and was read and analyzed whole (2-3 s of the interpreter in a 5 MB file, issue 35.1's slowest keys).
    from contractstudio.analysis import by_entry, check

    text = contract()
    analyzer = Analyzer()
    first = analyzer.check(text, "c.contract.yaml")
    at = text.index("name: ", text.index("examples:")) + len("name: ")

    class Stopped(BaseException):
        pass

    def stopped(*args: Any, **kwargs: Any) -> Any:
        raise Stopped  # what studio/stoppable.py raises in the worker

    with monkeypatch.context() as m:
        m.setattr(by_entry.EntriesKept, "analyze", stopped)
        with pytest.raises(Stopped):
            analyzer.check(text[:at] + "x" + text[at:], "c.contract.yaml")
    whole: list[int] = []
    original = check.analyze_document
    monkeypatch.setattr(check, "analyze_document", lambda *a, **k: whole.append(1) or original(*a, **k))
    again = analyzer.check(text, "c.contract.yaml")
    assert whole == [] and again.diagnostics == first.diagnostics == check_text(text, "c.contract.yaml").diagnostics
    typed = text[:at] + "y" + text[at:]  # and the next key is analyzed per entry, from the reading kept
    whole.clear()  # check_text's own
    report = analyzer.check(typed, "c.contract.yaml")
    assert whole == [] and report.diagnostics == check_text(typed, "c.contract.yaml").diagnostics
