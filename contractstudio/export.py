"""Export: validated YAML through ruamel.yaml's round trip, comments, key order and quoting kept.

The analyzer gates the export (a file with errors is refused, naming them);
ruamel.yaml writes the text so the result is what a YAML tool would write,
indented the way the author indented. A clean file in a consistent style comes
out byte-identical.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from contractstudio.analysis.check import Context, check_text
from contractstudio.findings.diagnostics import Diagnostic, at_least

_KEY_ONLY = re.compile(r"^(\s*)(?:- )?[^\s#][^:#]*:\s*(#.*)?$")


def guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indentation as the author wrote it; defaults 2, 4, 2."""
    mapping = offset = None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    for here, below in zip(lines, lines[1:], strict=False):
        m = _KEY_ONLY.match(here)
        if not m:
            continue
        base = len(m.group(1)) + (2 if here.lstrip().startswith("- ") else 0)
        indent = len(below) - len(below.lstrip(" "))
        if below.lstrip().startswith("- "):
            if offset is None and indent >= base:
                offset = indent - base
        elif mapping is None and indent > base:
            mapping = indent - base
        if mapping is not None and offset is not None:
            break
    mapping = mapping or 2
    offset = 2 if offset is None else offset
    return mapping, offset + 2, offset


def round_trip(text: str) -> str:
    """Load and dump every document of a YAML text with ruamel.yaml's round-trip mode."""
    from ruamel.yaml import YAML  # the export path only: ruamel is slow to import and to parse

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap long lines: the author's line breaks are kept
    mapping, sequence, offset = guess_indent(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    docs = list(yaml.load_all(text))
    out = io.StringIO()
    if text.lstrip().startswith("---"):
        yaml.explicit_start = True
    yaml.dump_all(docs, out)
    return out.getvalue()


def export_text(text: str, path: str = "<text>", ctx: Context | None = None) -> tuple[str | None, list[Diagnostic]]:
    """The exported text, or None and the errors that refuse the export."""
    report = check_text(text, path, ctx)
    errors = at_least(report.diagnostics, "error")
    if errors:
        return None, errors
    return round_trip(text), []


def export_file(path: Path, ctx: Context | None = None) -> tuple[str | None, list[Diagnostic]]:
    """Export a file from disk (see export_text)."""
    from contractstudio.analysis.check import read_text

    text, problem = read_text(path)
    if text is None:
        return None, [problem] if problem else []
    return export_text(text, str(path), ctx or Context(root=path.parent))
