"""Write the key reference of docs/format.md from the document models (run: python scripts/gen_format_doc.py).

The prose at the top of docs/format.md is kept; everything below the marker
line is regenerated, so the reference never drifts from what the analyzer accepts.
"""

from __future__ import annotations

import sys
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402
from pydantic_core import PydanticUndefined  # noqa: E402

from contractstudio.documents import models as d  # noqa: E402

MARKER = "<!-- generated below by scripts/gen_format_doc.py -->"
SECTIONS = [
    ("kind: contract", d.Contract, [d.TypeDecl, d.FieldSpec, d.Condition, d.Act, d.Remedy, d.Retry, d.LLMSettings, d.Example,
                                    d.Scenario, d.Expect, d.ExpectPerf]),
    ("kind: agent", d.Agent, [d.AgentTool, d.OutputSchema, d.Policy, d.ToolRef, d.Task, d.TrajectoryStep, d.Constraints, d.Corpus,
                              d.Ensemble, d.Backend, d.LatencyEstimate, d.TokenEstimate]),
    ("kind: pipeline", d.Pipeline, [d.Step, d.Router, d.ActionContract]),
    ("kind: tools", d.ToolSet, [d.ToolDecl]),
]


def type_name(tp: typing.Any) -> str:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        return " \\| ".join(repr(a) for a in args)
    if origin in (typing.Union, __import__("types").UnionType):
        return " \\| ".join(type_name(a) for a in args)
    if origin is list:
        return f"list of {type_name(args[0])}"
    if origin is dict:
        return f"map of {type_name(args[1])}"
    if tp is type(None):
        return "null"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return f"[{tp.__name__}](#{tp.__name__.lower()})"
    return getattr(tp, "__name__", str(tp)).replace("Any", "any")


def table(model: type[BaseModel]) -> list[str]:
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for name, f in model.model_fields.items():
        key = f.alias or name
        if f.is_required():
            default = "**required**"
        elif f.default_factory is not None:
            default = "(see below)" if isinstance(f.default_factory, type) and issubclass(f.default_factory, BaseModel) else "empty"
        else:
            default = "—" if f.default in (None, PydanticUndefined) else f"`{f.default!r}`"
        rows.append(f"| `{key}` | {type_name(f.annotation)} | {default} | {(f.description or '').replace('|', '/')} |")
    return rows


def render() -> str:
    lines = [MARKER, "", "# Key reference", ""]
    for title, top, parts in SECTIONS:
        lines += [f"## {title}", "", f"### {top.__name__}", "", (top.__doc__ or "").strip().splitlines()[0], ""]
        lines += table(top)
        for part in parts:
            lines += ["", f"### {part.__name__}", "", (part.__doc__ or "").strip().splitlines()[0] if part.__doc__ else "", ""]
            lines += table(part)
        lines.append("")
    return "\n".join(lines)


def write() -> str:
    path = ROOT / "docs" / "format.md"
    head = path.read_text().split(MARKER)[0] if path.exists() else "# Format\n\n"
    text = head + render()
    path.write_text(text)
    return text


if __name__ == "__main__":
    write()
    print("wrote docs/format.md")
