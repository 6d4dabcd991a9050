"""Graph mode: a pipeline's step graph (routes, findings, PIP201 paths, simulate) or an agent's references.

It draws an analysis result: the edit screen's when it is of the same text, else one made in a worker. The step
graph and the state flow are the analyzer's (LoadedPipeline facts), and findings belong to a step by their subject.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, OptionList, Static, Tree
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from contractstudio.analysis.check import FileReport, Loaded
from contractstudio.analysis.loaded_agent import LoadedAgent
from contractstudio.analysis.loaded_pipeline import LoadedPipeline
from contractstudio.analysis.step_graph import StateFlow, StepGraph
from contractstudio.findings.diagnostics import Diagnostic, Subject
from contractstudio.studio.analyses import Analysis, AnalysisDone, analyze, findings_of, path_of, worst_by
from contractstudio.studio.screens.agent_tree import fill_agent_tree
from contractstudio.studio.screens.base import StudioScreen
from contractstudio.studio.screens.dialogs import PathPrompt
from contractstudio.studio.widgets.files import unique_labels
from contractstudio.studio.widgets.findings import FindingsPanel, Place
from contractstudio.studio.widgets.footer import StudioFooter
from contractstudio.studio.widgets.stepgraph import Highlight, StepGraphView
from contractstudio.studio.workspace import kind_of_text


class GraphScreen(StudioScreen):
    """The graph screen (mode `graph`)."""

    BINDINGS = [
        Binding("j", "jump", "Jump to YAML", id="graph.jump"),
        Binding("slash", "simulate", "Simulate", id="graph.simulate"),
        Binding("m", "export('mermaid')", "Mermaid", id="graph.export_mermaid"),
        Binding("d", "export('dot')", "DOT", id="graph.export_dot"),
        Binding("escape", "clear", "Clear path", show=False, id="graph.clear"),
    ]

    def __init__(self) -> None:
        super().__init__(id="graph-screen")
        self.path: Path | None = None
        self.report: FileReport | None = None
        self.loaded: Loaded | None = None
        self.graph: StepGraph | None = None
        self.flow: StateFlow | None = None
        self.pipeline: LoadedPipeline | None = None
        self._choices: list[Path] = []
        self.banner: Text | None = None  # the simulated path or chosen finding, shown above the step
        self._loaded_text: str | None = None
        self._labels: tuple[int, list[str]] = (0, [])  # the file list's room and labels as drawn

    def compose(self) -> ComposeResult:
        with Horizontal(id="graph-main"):
            with Vertical(id="graph-side"):
                yield OptionList(id="graph-files")
                yield FindingsPanel(id="graph-findings")
            with Vertical():
                yield StepGraphView(id="graph-view")
                yield Tree("agent", id="agent-tree")
                yield Static("", id="graph-details")
                yield Input(placeholder="/ simulate a router reply, e.g. [BM25:] how do I reset?", id="simulate", compact=True)
        yield StudioFooter()

    def on_mount(self) -> None:
        self.query_one("#graph-files").border_title = "Pipelines & agents"
        self.query_one("#graph-findings").border_title = "Findings"
        self.query_one("#graph-details").border_title = "Step"
        self.query_one("#agent-tree").display = False

    def on_screen_resume(self) -> None:
        studio = self.studio
        files = studio.workspace.of_kind("pipeline", "agent")
        current = studio.buffer.path if studio.buffer is not None else None
        self._choices = [f.path for f in files]
        if current is not None and str(kind_of_text(studio.current_text())) in ("pipeline", "agent") and current not in self._choices:
            self._choices.insert(0, current)
        target = current if current in self._choices else (self.path if self.path in self._choices else None)
        if target is None and self._choices:
            target = self._choices[0]
        self._label_files()
        self.on_resize()
        if target is not None and target == self.path and self._loaded_text == self._text_of(target):
            return  # back from a dialog or another mode with nothing changed: keep the selection and the path
        self.load(target)

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "narrow")
        self.call_after_refresh(self._label_files)  # the list's new width, once laid out

    def _label_files(self) -> None:
        """The files with the edit list's labels: each fits the list and reads apart from the others (files.py)."""
        chooser = self.query_one("#graph-files", OptionList)
        inside = chooser.scrollable_content_region.width - chooser.get_component_styles("option-list--option").padding.width
        room = inside if inside > 0 else 10_000  # not laid out yet: labelled again once it is
        labels = unique_labels([self.studio.workspace.display(p) for p in self._choices], room)
        if self._labels == (room, labels) and chooser.option_count:
            return
        self._labels = (room, labels)
        keep = chooser.highlighted
        chooser.clear_options()
        chooser.add_options([Option(Text(label, no_wrap=True)) for label in labels])
        if not self._choices:
            chooser.add_option(Option(Text("No pipeline or agent in the workspace.", style="dim"), disabled=True))
        elif keep is not None:
            chooser.highlighted = min(keep, len(labels) - 1)

    @on(OptionList.OptionSelected, "#graph-files")
    def _choose(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.load(self._choices[event.option_index])

    # Loading ---------------------------------------------------------------------------

    def _text_of(self, path: Path) -> str:
        studio = self.studio
        if studio.buffer is not None and studio.buffer.path == path:
            return studio.current_text()
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def load(self, path: Path | None) -> None:
        """Draw a file's analysis (unsaved edits included): the edit screen's when it is current, else one in a worker."""
        self.path = path
        self.graph, self.flow, self.pipeline, self.loaded, self.report = None, None, None, None, None
        if path is None:
            self.query_one(StepGraphView).show(None)
            self.query_one("#graph-details", Static).update("Open a pipeline or an agent to see its graph.")
            return
        text = self._text_of(path)
        self._loaded_text = text
        self.banner = None
        self.query_one("#simulate", Input).value = ""  # a reply typed for the previous file is not this one's
        self.query_one("#graph-files", OptionList).highlighted = self._choices.index(path) if path in self._choices else None
        analysis = self.studio.analysis
        if analysis is not None and analysis.path == path and analysis.text == text:
            self.draw(analysis)
            return
        self.query_one("#graph-details", Static).update(Text(f"Analyzing {path.name}…", style="dim"))
        self.analyze(path, text)

    @work(thread=True, exclusive=True, group="graph-analysis", exit_on_error=False)
    def analyze(self, path: Path, text: str) -> None:
        """Analyze a file that the editor has not analyzed (another file of the list)."""
        self.post_message(AnalysisDone(analyze(path, text, self.studio.context_for(path))))

    @on(AnalysisDone)
    def _analyzed(self, message: AnalysisDone) -> None:
        if message.analysis.path == self.path and message.analysis.text == self._loaded_text:  # else another file was chosen since
            self.draw(message.analysis)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "graph-analysis" and event.state == WorkerState.ERROR and self.path is not None:
            self.query_one(StepGraphView).show(None)  # an analyzer bug is a message here, never a crash
            error = event.worker.error
            self.query_one("#graph-details", Static).update(
                Text(f"Analysis of {self.path.name} failed: {type(error).__name__}: {error}", style="red"))

    def draw(self, analysis: Analysis) -> None:
        """Draw an analysis: its findings, and the step graph (or the agent's references) the analyzer built."""
        path = analysis.path
        assert path is not None
        view = self.query_one(StepGraphView)
        tree = self.query_one("#agent-tree", Tree)
        details = self.query_one("#graph-details", Static)
        self.report = analysis.report
        findings = self.query_one("#graph-findings", FindingsPanel)
        findings.show(self.report.diagnostics)
        loaded = next((d for d in self.report.documents if d.kind in ("pipeline", "agent") and d.model is not None), None)
        self.loaded = loaded
        is_agent = loaded is not None and loaded.kind == "agent"
        view.display = not is_agent
        tree.display = is_agent
        self.query_one("#simulate").display = not is_agent
        if loaded is None:
            view.show(None)
            details.update(Text(f"{path.name}: no pipeline or agent could be read; see the findings.", style="yellow"))
            return
        if isinstance(loaded, LoadedAgent):
            view.border_title = tree.border_title = f"agent {loaded.agent.name}"
            fill_agent_tree(tree, loaded, self.report.diagnostics)
            details.border_title = "Agent"
            details.update("Tools, policies and tasks with their references. Enter on an item jumps to its YAML.")
            tree.focus()
            return
        assert isinstance(loaded, LoadedPipeline)
        self.pipeline = loaded
        self.graph, self.flow = loaded.step_graph, loaded.state_flow  # the analyzer's facts, built once per analysis
        view.border_title = f"pipeline {self.graph.pipeline.name}"
        view.show(self.pipeline, worst_by("step", self.report.diagnostics))
        details.border_title = "Step"
        view.focus()
        if self.graph.entry:
            view.select_step(self.graph.entry)

    # Selection -------------------------------------------------------------------------

    @on(StepGraphView.StepSelected)
    def _step(self, event: StepGraphView.StepSelected) -> None:
        self.describe(event.step)

    def describe(self, sid: str | None) -> None:
        """Show a step's action contract, the state known on arrival, and its findings."""
        details = self.query_one("#graph-details", Static)
        if self.graph is None or sid is None or sid not in self.graph.steps:
            return
        step = self.graph.steps[sid]
        spec = self.graph.action(sid)
        t = Text()
        if self.banner is not None:
            t.append_text(self.banner)
            t.append("\n")
        t.append(sid, style="bold")
        t.append(f"  action {step.action}", style="italic")
        if spec is None:
            t.append("  (unknown action: no contract)", style="red")
        else:
            for label, values in (("requires", spec.requires_state), ("requires one of", [" | ".join(g) for g in spec.requires_any_state]),
                                  ("step keys", spec.requires_step), ("ensures", spec.ensures_state)):
                if values:
                    t.append(f"\n{label}: ", style="bold")
                    t.append(", ".join(values))
        flow = self.flow
        if flow is not None and sid in flow.known:
            t.append("\nknown here on every path: ", style="bold")
            t.append(", ".join(flow.names(flow.known[sid])) or "nothing")
        else:
            t.append("\nunreachable from the entry", style="red")
        for d in self._findings_of(sid):
            t.append(f"\n{d.code} ", style="red" if d.severity == "error" else "yellow")
            t.append(d.message)
        details.update(t)

    def _findings_of(self, sid: str) -> list[Diagnostic]:
        return findings_of(self.report.diagnostics, Subject("step", sid)) if self.report is not None else []

    @on(FindingsPanel.Chosen, "#graph-findings")
    def _finding_chosen(self, event: FindingsPanel.Chosen) -> None:
        """A finding with related places (PIP201's path) highlights those steps."""
        d = event.diagnostic
        if d is None or self.graph is None:
            return
        steps = path_of(d, "step")
        view = self.query_one(StepGraphView)
        view.show(self.pipeline, view.severity, Highlight.of_path(steps, f"{d.code} path"))
        self.banner = Text(f"{d.code} path: {' → '.join(steps)}", style="bold magenta") if len(steps) > 1 else None
        if steps:
            view.select_step(steps[-1])
            self.describe(steps[-1])

    @on(FindingsPanel.Jump, "#graph-findings")
    def _finding_jump(self, event: FindingsPanel.Jump) -> None:
        self.studio.go_to(event.place)

    @on(Tree.NodeSelected, "#agent-tree")
    def _agent_jump(self, event: Tree.NodeSelected) -> None:
        data = event.node.data
        if self.loaded is not None and data is not None and self.path is not None:
            span = self.loaded.span(data)
            self.studio.go_to(Place(str(self.path), span.line, span.column))

    # Actions ---------------------------------------------------------------------------

    def action_jump(self) -> None:
        """Open the selected step's YAML in the editor."""
        sid = self.query_one(StepGraphView).selected_step
        if self.graph is None or self.loaded is None or sid is None or self.path is None:
            return
        file, span = self.loaded.place(self.graph.steps[sid])  # an inherited step opens its base file
        self.studio.go_to(Place(file if file != self.loaded.file else str(self.path), span.line, span.column))

    def action_simulate(self) -> None:
        self.query_one("#simulate", Input).focus()

    def action_clear(self) -> None:
        self.banner = None
        view = self.query_one(StepGraphView)
        if self.graph is not None:
            view.show(self.pipeline, view.severity)
        view.focus()

    @on(Input.Submitted, "#simulate")
    def _simulate(self, event: Input.Submitted) -> None:
        event.stop()
        if self.graph is None:
            return
        from contractstudio.runtime.route_simulation import simulate  # runtime only when asked

        sim = simulate(self.graph.pipeline, event.value)
        view = self.query_one(StepGraphView)
        view.show(self.pipeline, view.severity, Highlight.of_routes([(s.step, s.route, s.target) for s in sim.steps], "simulated"))
        t = Text()
        t.append("simulated ", style="bold magenta")
        t.append(f"{' → '.join(sim.path + (['end'] if sim.outcome == 'end' else []))}", style="bold")
        t.append(f"  ({sim.message})", style="green" if sim.ok else "yellow")
        for s in sim.steps:
            if s.missing:
                t.append(f"\n{s.step}: missing {', '.join(s.missing)}", style="red")
            if s.values and s.action == "prefix_router":
                t.append(f"\n{s.step}: " + ", ".join(f"{k} = {v!r}" for k, v in s.values.items()), style="dim")
        t.append("  · Esc clears", style="dim")
        self.banner = t
        view.focus()
        self.describe(view.selected_step)

    def action_export(self, fmt: str) -> None:
        """Write the graph as Mermaid or DOT to a file."""
        if self.graph is None or self.path is None:
            self.notify("No pipeline graph to export.", severity="warning")
            return
        ext = {"mermaid": ".mmd", "dot": ".dot"}[fmt]
        default = str(self.path.with_name(self.path.name.split(".")[0] + ext))
        self.app.push_screen(PathPrompt(f"Export the graph as {fmt} to:", default), lambda target: self._export(fmt, target))

    def _export(self, fmt: str, target: str | None) -> None:
        if not target or self.graph is None:
            return
        from contractstudio.reports.graphs import render
        from contractstudio.studio.workspace import write_atomic

        try:
            write_atomic(Path(target), render(self.graph, fmt) + "\n")
        except OSError as err:
            self.notify(f"Could not write {target}: {err.strerror or err}", severity="error")
            return
        self.notify(f"Wrote {fmt} graph to {target}", timeout=4)
