"""`contractstudio schema [KIND]`: the JSON Schema of the format, for editors; with `--model M --contract FILE`, the
contract's output type as that model's structured-output mode receives it, clause by clause."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from contractstudio.analysis.check import Context, check_file
from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.structure import WORDS, OutputStructure, names
from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE
from contractstudio.documents.json_schema import schema_json
from contractstudio.safe_text import printable, shown
from contractstudio.trust import hook_folder


def run(args: argparse.Namespace) -> int:
    """Print the schema of one kind, or of every kind; or a contract's output clauses for a model."""
    model, contract = getattr(args, "model", None), getattr(args, "contract", None)
    if model is None and contract is None:
        print(schema_json(args.kind))
        return 0
    if model is None or contract is None:
        print("contractstudio schema: --model and --contract go together", file=sys.stderr)
        return EXIT_USAGE
    path = Path(contract)
    report = check_file(path, Context(hooks=hook_folder(path, False), model=model))
    found = [d.structure for d in report.documents if isinstance(d, LoadedContract)]
    if not found or found[0] is None:
        problems = "; ".join(d.message for d in report.diagnostics if d.severity == "error")[:400]
        print(printable(f"contractstudio schema: no contract output type to compile in {contract}"
                        + (f" ({problems})" if problems else "")), file=sys.stderr)
        return EXIT_PROBLEM
    for line in clause_table(found[0]).splitlines():  # shown per line: redacted, and line breaks escaped
        print(shown(line))
    return EXIT_OK


def clause_table(found: OutputStructure) -> str:
    """Each field's clauses in a column per enforcement, then the schema sent (or why none is)."""
    rows = [("field", *(WORDS[e] for e in WORDS))]
    for (type_name, field), clauses in found.by_field.items():
        label = f"{type_name}.{field}" if field is not None else "(the output)"
        rows.append((label, *(names(c for c in clauses if c.enforcement == e) or "-" for e in WORDS)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [found.summary(), ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    reasons = dict.fromkeys(c.reason for c in found.compiled.clauses if c.enforcement != "decoder")
    lines += ["", "why:"] + [f"- {r}" for r in reasons] if reasons else []
    lines += ["", f"source of the provider facts: {found.compiled.source}", ""]
    schema = found.compiled.schema
    lines.append("schema sent:" if schema is not None else "no schema is sent")
    if schema is not None:
        lines.append(json.dumps(schema, indent=2, ensure_ascii=False))
    return "\n".join(lines)
