"""A pipeline's step graph for the terminal: layer by layer, routes as labelled arrows, a selectable step per row."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from contractstudio.analysis.loaded_pipeline import LoadedPipeline
from contractstudio.analysis.step_graph import END, START, Route, StepGraph

SEVERITY_COLOR = {"error": "red", "warning": "yellow", "info": "cyan"}


@dataclass(slots=True)
class Highlight:
    """Steps and edges drawn emphasised (a simulated path or a PIP201 path)."""

    steps: list[str] = field(default_factory=list)
    edges: set[tuple[str, str]] = field(default_factory=set)
    title: str = ""
    routes: dict[str, str] = field(default_factory=dict)  # step -> the route key taken, when it is known

    @classmethod
    def of_path(cls, steps: list[str], title: str, end: bool = False) -> Highlight:
        """Steps in order; every edge between consecutive steps (which route of several is not known)."""
        edges = set(zip(steps, steps[1:], strict=False))
        if end and steps:
            edges.add((steps[-1], END))
        return cls(steps, edges, title)

    @classmethod
    def of_routes(cls, taken: list[tuple[str, str | None, str | None]], title: str) -> Highlight:
        """(step, route key, target) in order: exactly the routes taken, not every route to the same step."""
        steps = [step for step, _, _ in taken]
        routes = {step: key for step, key, _ in taken if key is not None}
        edges = {(step, END if target == "end" else target) for step, key, target in taken if key is not None and target}
        return cls(steps, edges, title, routes)

    def took(self, step: str, route: Route) -> bool:
        """Whether this route of the step is on the highlighted path."""
        if step in self.routes:
            return self.routes[step] == route.key
        return (step, route.target) in self.edges


class StepGraphView(OptionList):
    """One option per step: its action, marks (entry, end, unreachable), findings, and labelled routes."""

    class StepSelected(Message):
        def __init__(self, step: str | None) -> None:
            super().__init__()
            self.step = step

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.pipeline: LoadedPipeline | None = None
        self.graph: StepGraph | None = None
        self.severity: dict[str, str] = {}
        self.highlight = Highlight()
        self._ids: list[str | None] = []

    def show(self, pipeline: LoadedPipeline | None, severity: dict[str, str] | None = None, highlight: Highlight | None = None) -> None:
        """Redraw an analyzed pipeline (its graph, layout and state flow), the worst finding of each step, a highlighted path."""
        self.pipeline = pipeline
        self.graph = graph = pipeline.step_graph if pipeline is not None else None
        self.severity = severity or {}
        self.highlight = highlight or Highlight()
        keep = self.highlighted
        self.clear_options()
        self._ids = []
        if pipeline is None or graph is None:
            self.add_option(Option(Text("No pipeline to draw.", style="dim"), disabled=True))
            return
        lay = pipeline.layout  # the analysis keeps it: a new highlight redraws without laying out again
        back = {(e.source, e.target) for e in lay.edges if e.back}
        reach = set(pipeline.state_flow.known)  # the reachable steps
        on_path = set(self.highlight.steps)
        options: list[Option] = []
        for depth, row in enumerate(lay.layers):
            for node in row:
                if node == START:
                    t = Text(f"{depth:>2} ", style="dim")
                    t.append("● start", style="bold")
                    t.append(f" ──▶ {graph.entry or '?'}", style="bold" if graph.entry in on_path else "")
                    options.append(Option(t, disabled=True))
                    self._ids.append(None)
                    continue
                if node == END:
                    t = Text(f"{depth:>2} ", style="dim")
                    t.append("■ end", style="bold")
                    options.append(Option(t, disabled=True))
                    self._ids.append(None)
                    continue
                options.append(Option(self._step_text(graph, node, depth, back, reach, on_path), id=f"s{len(self._ids)}"))
                self._ids.append(node)
        self.add_options(options)
        if keep is not None:
            self.highlighted = min(keep, len(options) - 1)

    def _step_text(self, graph: StepGraph, node: str, depth: int, back: set[tuple[str, str]],
                   reach: set[str], on_path: set[str]) -> Text:
        step = graph.steps[node]
        sev = self.severity.get(node)
        t = Text(f"{depth:>2} ", style="dim")
        name_style = f"bold {SEVERITY_COLOR[sev]}" if sev else "bold"
        if node in on_path:
            name_style += " reverse"
        t.append(f" {node} ", style=name_style)
        t.append(f" {step.action}", style="italic")
        prompt = step.raw.get("prompt")
        if isinstance(prompt, str):
            t.append(f" prompt {prompt}", style="dim")
        marks = []
        if node == graph.entry:
            marks.append(("▶ entry", "bold green"))
        if step.end:
            marks.append(("■ end", "bold green"))
        if graph.entry is not None and node not in reach:
            marks.append(("unreachable", "bold red"))
        if sev:
            marks.append(({"error": "● error", "warning": "▲ warning", "info": "• info"}[sev], SEVERITY_COLOR[sev]))
        for label, style in marks:
            t.append("  ")
            t.append(label, style=style)
        routes = graph.routes.get(node, [])
        if not routes:
            t.append("\n     (no next, on_* or end: a dead end)", style="red")
        width = max((len(r.label) for r in routes), default=0)
        for r in routes:
            taken = self.highlight.took(node, r)
            target = "end" if r.target == END else r.target
            line_style = "bold reverse" if taken else ""
            t.append("\n     ")
            t.append(r.label, style=("bold magenta" if r.label.startswith("[") else "") + (" reverse" if taken else ""))
            t.append(" " + "─" * (width - len(r.label) + 2) + "▶ ", style=line_style or "dim")
            t.append(target, style=line_style or "")
            if r.target != END and r.target not in graph.steps:
                t.append("  (no such step)", style="bold red")
            elif (node, r.target) in back:
                t.append("  ↺ loop", style="dim")
        return t

    def select_step(self, step: str) -> None:
        if step in self._ids:
            self.highlighted = self._ids.index(step)

    @property
    def selected_step(self) -> str | None:
        i = self.highlighted
        return self._ids[i] if i is not None and 0 <= i < len(self._ids) else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.StepSelected(self.selected_step))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.StepSelected(self.selected_step))
