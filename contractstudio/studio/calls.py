"""What the debugger runs, without any drawing: runnable contracts, input and model choices, perf of a trace.

The runtime is imported inside the functions that need it, never when this module loads.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text

from contractstudio.analysis.check import Context, check_text


def runnable_contracts(files: list[Path], text_of: Callable[[Path], str],
                       context_for: Callable[[Path], Context]) -> tuple[list[tuple[Path, Any]], str]:
    """(file, contract document) for each contract without errors, and a note about those left out (each file its own trust)."""
    contracts: list[tuple[Path, Any]] = []
    skipped: list[str] = []
    for path in files:
        try:
            report = check_text(text_of(path), str(path), context_for(path))
        except Exception as err:  # noqa: BLE001 - an analyzer bug is a message here, never a crash
            return contracts, f"analysis of {path.name} failed: {type(err).__name__}: {err}"
        errors = [d for d in report.diagnostics if d.severity == "error"]
        for item in report.documents:
            if item.kind == "contract" and item.model is not None:
                if errors:
                    skipped.append(path.name)
                else:
                    contracts.append((path, item.model))
    note = ""
    if skipped:
        names = ", ".join(skipped[:2]) + (f" and {len(skipped) - 2} more" if len(skipped) > 2 else "")
        note = f"not runnable until their errors are fixed (F2): {names}"
    return contracts, note


def signature(contracts: list[tuple[Path, Any]]) -> list[tuple[Any, ...]]:
    """What the choice lists show; when it is unchanged, a running session is kept."""
    return [(p, d.name, [s.name for s in d.scenarios], [e.name for e in d.examples]) for p, d in contracts]


def input_choices(doc: Any) -> list[tuple[str, str]]:
    """Scenario inputs, example inputs, then typed YAML."""
    out = [(f"scenario: {s.name}", f"scenario:{i}") for i, s in enumerate(doc.scenarios)]
    out += [(f"example: {e.name}", f"example:{i}") for i, e in enumerate(doc.examples)]
    return [*out, ("typed YAML…", "typed")]


def model_choices(doc: Any, traces: list[Path]) -> list[tuple[str, str]]:
    """Scripted replies of each scenario, a replay of each trace, and the live model of the `llm:` block."""
    out = [(f"scripted: {s.name}", f"scripted:{i}") for i, s in enumerate(doc.scenarios)]
    out += [(f"replay: {p.name}", f"replay:{p}") for p in traces]
    out.append((f"live: {getattr(doc.llm, 'model', None) or 'llm: block'}", "live"))
    return out


def input_value(doc: Any, choice: str, typed: Any) -> Any:
    """The call's input for an input choice."""
    kind, _, index = choice.partition(":")
    if kind == "scenario":
        return doc.scenarios[int(index)].input
    if kind == "example":
        return doc.examples[int(index)].input
    return typed


def make_model(contract: Any, choice: str) -> Any:
    """The model for a model choice; a live one imports litellm only when its request is sent."""
    from contractstudio.runtime.models import ReplayModel, ScriptedModel

    kind, _, rest = choice.partition(":")
    if kind == "scripted":
        scenario = contract.doc.scenarios[int(rest)]
        return ScriptedModel(list(scenario.responses), name=f"scripted:{scenario.name}")
    if kind == "replay":
        return ReplayModel(Path(rest))
    return contract.model_for(None)


def stats_of_events(events: list[Any]) -> dict[str, Any]:
    """Perf stats rebuilt from a recorded trace's events (stage durations, LLM usage)."""
    from contractstudio.runtime.perf import PerfStats

    perf = PerfStats()
    in_stages = 0.0
    for e in events:
        if e.type == "stage_end" and e.get("duration_s") is not None:
            perf.add_stage(e.stage, float(e.get("duration_s")))
            in_stages += float(e.get("duration_s"))
        elif e.type == "llm_response":
            perf.add_llm(int(e.get("prompt_tokens") or 0), int(e.get("completion_tokens") or 0),
                         float(e.get("cost_usd") or 0), float(e.get("latency_s") or 0))
    if events:
        perf.add_call(events[-1].t, in_stages)
    return perf.as_dict()


def perf_text(stats: dict[str, Any]) -> Text:
    """LLM usage on one line, then the runtime's stage table."""
    from contractstudio.runtime.perf import format_table

    llm = stats.get("llm") or {}
    t = Text(no_wrap=True)
    t.append(f"LLM calls {llm.get('calls', 0)} · tokens {llm.get('prompt_tokens', 0)}+{llm.get('completion_tokens', 0)} · "
             f"${float(llm.get('cost_usd', 0)):.6f} · transport retries {llm.get('transport_retries', 0)}\n", style="bold")
    t.append("\n".join(line for line in format_table(stats).splitlines() if not line.startswith("llm:")))
    return t


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
