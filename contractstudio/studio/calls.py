"""What the debugger runs, without any drawing: runnable contracts, input and model choices, perf of a trace.

The runtime is imported inside the functions that need it, never when this module loads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.text import Text

from contractstudio.analysis.check import Context, is_python


def runnable_contracts(files: list[Path], text_of: Callable[[Path], str],
                       context_for: Callable[[Path], Context]) -> tuple[list[tuple[Path, Any]], str]:
    """(file, contract document) for each contract without errors, and a note about those left out (each file its own trust).

    Each file goes through the runtime's one loader (`runtime.loading.load_file`), as `run` and `eval` load theirs.
    """
    from contractstudio.runtime.loading import Refused, load_file

    contracts: list[tuple[Path, Any]] = []
    skipped: list[str] = []
    for path in files:
        try:
            loaded = load_file(path, text=text_of(path), context=context_for(path))
        except Refused as refused:
            skipped += [path.name for _ in refused.loaded.documents("contract")]
            continue
        except Exception as err:  # noqa: BLE001 - an analyzer bug is a message here, never a crash
            return contracts, f"analysis of {path.name} failed: {type(err).__name__}: {err}"
        contracts += [(path, doc) for doc in loaded.documents("contract")]
    note = ""
    if skipped:
        names = ", ".join(skipped[:2]) + (f" and {len(skipped) - 2} more" if len(skipped) > 2 else "")
        note = f"not runnable until their errors are fixed (F2): {names}"
    return contracts, note


def untrusted_classes(contracts: list[tuple[Path, Any]], trusted: Callable[[Path], bool]) -> str:
    """A note naming the Python classes listed but not importable until their folder is trusted (never imported here)."""
    names = [doc.name for path, doc in contracts if is_python(path) and not trusted(path)]
    if not names:
        return ""
    shown = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
    return f"Python class {shown}: its folder is not trusted; S asks to trust it (importing runs its code)"


def signature(contracts: list[tuple[Path, Any]]) -> list[tuple[Any, ...]]:
    """What the choice lists show; when it is unchanged, a running session is kept."""
    return [(p, d.name, [s.name for s in d.scenarios], [e.name for e in d.examples]) for p, d in contracts]


def trace_start(path: Path) -> Any:
    """A trace's recorded start (the input stage_start: contract, model, value), or None: the runtime's one reader,
    which reads the first line only."""
    from contractstudio.runtime.trace import NotATrace, recorded_start

    try:
        return recorded_start(path)
    except NotATrace:
        return None


def traces_of(doc: Any, traces: Sequence[Path]) -> list[Path]:
    """The traces recorded for this contract (a replay of another contract's trace only diverges)."""
    return [p for p in traces if getattr(trace_start(p), "contract", None) == doc.name]


MAX_BESIDE = 200  # JSON Lines files looked at beside a contract's file (each read to its first line only)


def traces_beside(path: Path, known: Sequence[Path]) -> list[Path]:
    """The workspace's traces and the JSON Lines files beside a contract's file that the workspace does not list: a
    class's `use_model(..., trace="calls.jsonl")` writes them there, also when the studio was opened on the .py alone.
    Which of them are this contract's calls is traces_of's (their first line names it)."""
    try:
        beside = sorted(p for p in path.parent.glob("*.jsonl") if p.is_file())[:MAX_BESIDE]
    except OSError:
        beside = []
    listed = set(known)
    return [*known, *(p for p in beside if p not in listed)]


def input_choices(doc: Any, traces: Sequence[Path] = ()) -> list[tuple[str, str]]:
    """Scenario inputs, example inputs, inputs recorded in this contract's traces, then typed YAML."""
    out = [(f"scenario: {s.name}", f"scenario:{i}") for i, s in enumerate(doc.scenarios)]
    out += [(f"example: {e.name}", f"example:{i}") for i, e in enumerate(doc.examples)]
    out += [(f"recorded: {p.name}", f"trace:{p}") for p in traces_of(doc, traces)]
    return [*out, ("typed YAML…", "typed")]


def paired_model(doc: Any, choice: str) -> str | None:
    """The model choice that belongs to an input choice: a scenario's own scripted replies, a trace's own replay
    (so the call does not run one scenario's input against another's replies); None for an example or typed input."""
    kind, _, index = choice.partition(":")
    if kind == "scenario" and index.isdigit() and int(index) < len(doc.scenarios):
        return f"scripted:{doc.scenarios[int(index)].name}"
    if kind == "trace":
        return f"replay:{index}"
    return None


def input_value(doc: Any, choice: str, typed: Any) -> Any:
    """The call's input for an input choice."""
    kind, _, index = choice.partition(":")
    if kind == "scenario":
        return doc.scenarios[int(index)].input
    if kind == "example":
        return doc.examples[int(index)].input
    if kind == "trace":
        return getattr(trace_start(Path(index)), "value", None)
    return typed


def yaml_problem(text: str) -> str | None:
    """Why typed input cannot be used (the dialog stays open with the text), or None: the reader that reads the
    input decides (read_value: depth, aliases, tags, duplicate keys), so what the dialog accepts is what runs."""
    from contractstudio.reading.source import read_value

    try:
        read_value(text, "input")
    except ValueError as err:
        return f"Not valid input: {err}. Fix it, or Escape to cancel."
    return None


def input_skeleton(doc: Any) -> str:
    """YAML to start typing an input from: every field of the input type with a value of its type (or its default)."""
    import yaml

    try:
        from contractstudio.documents.types import TypeSystem
        from contractstudio.runtime.validation import Shape

        shape = Shape(TypeSystem.from_decls(doc.types), doc.input, "input")
        schema = shape.model.model_json_schema() if shape.model is not None else shape.adapter.json_schema()  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001 - a type pydantic cannot build: start from an empty mapping
        return "{}\n"
    value = _skeleton(schema, schema.get("$defs", {}), 0)
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, default_flow_style=False)


_SCALARS: dict[str, Any] = {"string": "", "integer": 0, "number": 0.0, "boolean": False, "null": None}


def _skeleton(schema: dict[str, Any], defs: dict[str, Any], depth: int) -> Any:
    if depth > 8:  # a recursive type: stop
        return None
    if "$ref" in schema:
        return _skeleton(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs, depth + 1)
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    options = schema.get("anyOf") or schema.get("oneOf") or schema.get("allOf")
    if options:
        concrete = [o for o in options if o.get("type") != "null"] or options
        return _skeleton(concrete[0], defs, depth + 1)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: _skeleton(sub, defs, depth + 1) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        item = schema.get("items") or {}
        first = _skeleton(item, defs, depth + 1)
        return [first] if isinstance(first, dict) else []
    return _SCALARS.get(kind, None) if isinstance(kind, str) else None


FULL_TABLE_WIDTH = 81  # the width of runtime.perf.format_table's lines


def perf_text(stats: dict[str, Any], width: int = FULL_TABLE_WIDTH) -> Text:
    """LLM usage on one line, then the runtime's stage table; where that is too wide, every stage packed on a few lines."""
    from contractstudio.runtime.perf import format_table

    llm = stats.get("llm") or {}
    t = Text(no_wrap=True)
    head = (f"LLM calls {llm.get('calls', 0)} · tokens {llm.get('prompt_tokens', 0)}+{llm.get('completion_tokens', 0)} · "
            f"${float(llm.get('cost_usd', 0)):.6f} · transport retries {llm.get('transport_retries', 0)}")
    if llm.get("streamed"):  # the time to the first token of the streamed replies
        head += f" · first token {float(llm.get('first_token_s', 0.0)) / llm['streamed'] * 1e3:.1f}ms"
    if llm.get("early_stops"):
        head += f" · early stops {llm['early_stops']}"
    if width >= FULL_TABLE_WIDTH:
        t.append(head + "\n", style="bold")
        t.append("\n".join(line for line in format_table(stats).splitlines() if not line.startswith("llm:")))
        return t
    total = stats.get("total_execution") or {}
    t.append(f"{head} · total {float(total.get('total', 0.0)) * 1e3:.2f}ms\n", style="bold")
    entries = []
    for name, e in stats.items():
        if name in ("llm", "total_execution") or not isinstance(e, dict):
            continue
        count = f"×{e['count']}" if e.get("count", 0) > 1 else ""
        entries.append(f"{name}{count} {e['total'] * 1e3:.2f}ms {e['percentage']:.0f}%")
    line = ""
    for entry in entries:  # packed into lines of the panel's width: no column is ever cut off
        if line and len(line) + 2 + len(entry) > width:
            t.append(line + "\n")
            line = ""
        line = f"{line}  {entry}" if line else entry
    t.append(line)
    return t


def client_ready() -> bool:
    """Whether the live model's client (litellm) is loaded."""
    from contractstudio.runtime.live import live_client_ready

    return live_client_ready()


def load_client() -> None:
    """Load the live model's client (a worker thread calls this, long before a call needs it)."""
    from contractstudio.runtime.live import prepare_live_client

    prepare_live_client()


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
