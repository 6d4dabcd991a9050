"""Graph mode as a user sees it: routes with their prefixes, PIP201 paths, simulate, jump, export."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from contractstudio.studio.widgets.findings import FindingsPanel
from contractstudio.studio.widgets.stepgraph import StepGraphView

from .conftest import settle, tree_labels


def plain(renderable) -> str:
    console = Console(width=120, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text()


def graph_text(view: StepGraphView) -> str:
    return "\n".join(plain(view.get_option_at_index(i).prompt) for i in range(view.option_count))


async def test_graph_shows_routing_prefixes_entry_and_end(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        text = graph_text(app.screen.query_one(StepGraphView))
        for prefix in ("[SEMANTIC:]", "[BM25:]", "[HYBRID:]", "[DIRECT:]", "other"):
            assert prefix in text
        assert "route" in text and "▶ entry" in text
        assert "persist" in text and "■ end" in text
        assert "[BM25:] ──────▶ search" in text


async def test_simulating_a_reply_highlights_its_path(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("slash", *"[DIRECT:] hello", "enter")
        await pilot.pause()
        view = app.screen.query_one(StepGraphView)
        assert view.highlight.steps == ["route", "dispatch", "answer", "persist"]
        assert ("dispatch", "answer") in view.highlight.edges
        details = plain(app.screen.query_one("#graph-details").content)
        assert "route → dispatch → answer → persist → end" in details
        await pilot.press("escape")
        assert view.highlight.steps == []


async def test_a_pip201_finding_highlights_the_path_where_the_field_is_unset(make_app) -> None:
    app = make_app("maybe_unset.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        view = app.screen.query_one(StepGraphView)
        assert "● error" in graph_text(view)  # the step with the finding is marked
        panel = app.screen.query_one("#graph-findings", FindingsPanel)
        assert [d.code for d in panel.diagnostics] == ["PIP201"]
        panel.focus()
        panel.highlighted = 0
        await pilot.pause()
        assert view.highlight.steps == ["route", "dispatch", "expand"]
        assert "PIP201 path: route → dispatch → expand" in plain(app.screen.query_one("#graph-details").content)


async def test_selecting_a_step_shows_its_contract_and_j_jumps_to_its_yaml(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        view = app.screen.query_one(StepGraphView)
        view.select_step("search")
        await pilot.pause()
        details = plain(app.screen.query_one("#graph-details").content)
        assert "requires: retrieval_mode" in details
        assert "ensures: context_blocks, seed_nodes" in details
        assert "known here on every path:" in details and "last_model_response" in details
        await pilot.press("j")
        await pilot.pause()
        assert app.current_mode == "edit"
        row, _ = app.screen.editor.cursor_location
        assert app.screen.editor.document.get_line(row).strip().startswith("- id: search")


async def test_the_graph_exports_as_mermaid_and_dot(make_app, workspace: Path) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
    mermaid = (workspace / "rag_router.mmd").read_text()
    dot = (workspace / "rag_router.dot").read_text()
    assert "BM25" in mermaid and "BM25" in dot
    assert "digraph" in dot


async def test_an_agent_shows_tools_policies_and_tasks(make_app, regex_on_ui_thread: list[str]) -> None:
    app = make_app("billing_support.agent.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        tree = app.screen.query_one("#agent-tree")
        assert tree.display
        text = tree_labels(tree)
        assert "search_kb(query)" in text
        assert "must-search" in text and "require tool search_kb" in text
        assert "forbid pattern issue_.* → issue_refund" in text
        assert "answer_billing" in text and "expects tool search_kb" in text
        assert regex_on_ui_thread == []  # the tree draws the analysis's pattern matches


async def test_the_simulated_path_survives_an_export_dialog(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("slash", *"[DIRECT:] hi", "enter")
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        await pilot.press("escape")  # cancel the export
        await pilot.pause()
        assert app.screen.query_one(StepGraphView).highlight.steps == ["route", "dispatch", "answer", "persist"]


def emphasised(view: StepGraphView, step: str) -> list[str]:
    """The route labels drawn in reverse video (taken) in a step's entry of the graph."""
    index = next(i for i in range(view.option_count) if f" {step} " in view.get_option_at_index(i).prompt.plain)
    text = view.get_option_at_index(index).prompt
    lines = text.plain.split("\n")
    taken, offset = [], 0
    for line in lines:
        label = line.strip().split(" ")[0] if line.startswith("     ") else ""
        if label:
            at = offset + line.index(label)
            if any(s.start <= at < s.end and "reverse" in str(s.style) for s in text.spans):
                taken.append(label)
        offset += len(line) + 1
    return taken


async def test_the_simulated_path_highlights_only_the_route_taken(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("slash", *"[BM25:] refunds", "enter")
        await pilot.pause()
        view = app.screen.query_one(StepGraphView)
        # on_semantic, on_bm25 and on_hybrid all lead to search: only the one the reply took is drawn taken
        assert emphasised(view, "dispatch") == ["[BM25:]"]
        assert emphasised(view, "route") == ["next"]


ONE_LINE = ("kind: pipeline\nname: one_line\nentry_step_id: route\n"
            # every step on the one line below (adjacent literals, no line breaks between them)
            "steps: [{id: route, action: call_model, prompt: router_v1, next: dispatch}, "
            "{id: dispatch, action: prefix_router, semantic_prefix: \"[SEMANTIC:]\", on_semantic: search, on_other: expand}, "
            "{id: search, action: search_nodes, next: expand}, {id: expand, action: expand_dependency_tree, next: persist}, "
            "{id: persist, action: persist_turn, end: true}]\n")


async def test_findings_belong_to_the_step_they_are_about_even_when_steps_share_a_line(make_app, workspace: Path) -> None:
    (workspace / "one_line.pipeline.yaml").write_text(ONE_LINE)
    app = make_app("one_line.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        view = app.screen.query_one(StepGraphView)
        marked = [line for line in graph_text(view).splitlines() if "● error" in line]
        assert len(marked) == 1 and " expand " in marked[0]  # PIP201 is about 'expand', not the last step on its line
        view.select_step("persist")
        await pilot.pause()
        assert "PIP201" not in plain(app.screen.query_one("#graph-details").content)
        view.select_step("expand")
        await pilot.pause()
        assert "PIP201" in plain(app.screen.query_one("#graph-details").content)


async def test_another_file_of_the_list_is_analyzed_in_a_worker_never_on_the_ui_thread(make_app, monkeypatch) -> None:
    import threading

    from contractstudio.analysis import check

    on_ui_thread: list[str] = []
    analyze = check.check_text

    def watched(text: str, path: str = "<text>", *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            on_ui_thread.append(path)
        return analyze(text, path, *args, **kwargs)

    monkeypatch.setattr(check, "check_text", watched)
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await pilot.pause()
        chooser = app.screen.query_one("#graph-files")
        index = next(i for i in range(chooser.option_count) if "maybe_unset" in str(chooser.get_option_at_index(i).prompt))
        chooser.highlighted = index
        chooser.action_select()
        await settle(pilot)
        view = app.screen.query_one(StepGraphView)
        assert view.border_title == "pipeline maybe_unset" and "● error" in graph_text(view)
        view.select_step("search")
        await pilot.pause()
        assert "known here on every path" in plain(app.screen.query_one("#graph-details").content)
    assert on_ui_thread == []


def panel_lines(panel) -> list[str]:
    """What the findings panel shows on screen, line by line."""
    left, width = panel.styles.gutter.left, panel.scrollable_content_region.width  # inside the border and scrollbar
    return [strip.text[left:left + width].rstrip() for strip in panel.render_lines(panel.size.region)][1:]


async def test_a_long_hint_in_the_graph_findings_is_shown_whole_under_its_finding(make_app, workspace: Path) -> None:
    """Issue 19.10: at 80 columns the hint wraps, every wrapped line indented under its finding, none cut."""
    broken = Path(__file__).resolve().parents[2] / "samples" / "broken" / "rag_router_broken.pipeline.yaml"
    (workspace / "rag_router_broken.pipeline.yaml").write_text(broken.read_text())
    app = make_app("rag_router_broken.pipeline.yaml")
    async with app.run_test(size=(80, 60)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        panel = app.screen.query_one("#graph-findings", FindingsPanel)
        shown = panel_lines(panel)
        first = next(i for i, line in enumerate(shown) if "RTE301" in line)
        block = [shown[first]]
        for line in shown[first + 1:]:
            if not line.startswith("  "):  # the next finding starts at the left edge
                break
            block.append(line)
        joined = " ".join(line.strip() for line in block)
        assert "hint: add 'on_bm25: <step>'" in joined  # the CLI's words, whole
        assert len(block) > 2  # message and hint wrapped, each line under the finding


async def test_after_switching_pipelines_the_findings_show_every_hint_line_and_the_simulate_box_is_empty(make_app,
                                                                                                         workspace: Path) -> None:
    """Issue 35.11: chosen from the graph's own list, a pipeline's hints lost their last wrapped line, and the
    simulate box kept the reply typed for the previous pipeline."""
    broken = Path(__file__).resolve().parents[2] / "samples" / "broken" / "rag_router_broken.pipeline.yaml"
    (workspace / "rag_router_broken.pipeline.yaml").write_text(broken.read_text())

    async def hint_lines(app, pilot) -> list[str]:
        await settle(pilot)
        return panel_lines(app.screen.query_one("#graph-findings", FindingsPanel))

    app = make_app("rag_router_broken.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        direct = await hint_lines(app, pilot)
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("slash", *"[DIRECT:] hello", "enter")
        await pilot.pause()
        screen = app.screen
        chooser = screen.query_one("#graph-files")
        screen.load(next(p for p in screen._choices if p.name == "rag_router_broken.pipeline.yaml"))
        chooser.focus()
        switched = await hint_lines(app, pilot)
        assert switched == direct, "\n".join(direct) + "\n-----\n" + "\n".join(switched)
        assert screen.query_one("#simulate").value == ""
