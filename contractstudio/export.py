"""Export: the validated file, byte for byte.

The analyzer gates the export: a file with errors is refused, naming them. Among them is YML008,
every value other YAML tools (ruamel.yaml, the reader YAML tools build on) read differently from
the analyzer or cannot read at all (`%YAML 1.1` turns `n` into false, `0b101` is a number to them).
The text is never re-written: comments, quoting, indentation, line endings and a BOM stay the
author's, so an export cannot change what a file says or how it looks.

The file is read and analyzed once, as `check` does. Export used to read it twice more (our reader
again, then ruamel.yaml's pure-Python round-trip loader, 30-60x slower per token than libyaml):
a 5 MB contract took 18x the time of `check` and 3x its memory (issue 21.15). Whether ruamel.yaml
reads what the analyzer read is the tests' question (tests/test_fuzz_export.py, and every sample
and fixture in tests/test_export.py), not a second reading of every exported file.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from contractstudio.analysis.check import Context, check_text
from contractstudio.findings.diagnostics import Diagnostic, at_least
from contractstudio.reading.files import read_text
from contractstudio.reading.project import project_for
from contractstudio.trust import hook_folder

BOM = "\ufeff"


def export_text(text: str, path: str = "<text>", ctx: Context | None = None) -> tuple[str | None, list[Diagnostic]]:
    """The exported text (the text itself), or None and the errors that refuse the export."""
    errors = at_least(check_text(text, path, ctx).diagnostics, "error")
    return (None, errors) if errors else (text, [])


def export_file(path: Path, ctx: Context | None = None) -> tuple[str | None, list[Diagnostic]]:
    """Export a file from disk (see export_text); a BOM the file starts with is kept."""
    text, problem = read_text(path)
    if text is None:
        return None, [problem] if problem else []
    ctx = ctx or Context(hooks=hook_folder(path, False))
    if ctx.settings is None:  # the file's folder settings, read here for the analysis
        ctx = replace(ctx, settings=project_for(path).settings_of(path.parent))
    exported, found = export_text(text, str(path), ctx)
    if exported is not None and _starts_with_bom(path):
        exported = BOM + exported
    return exported, found


def _starts_with_bom(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(3) == BOM.encode("utf-8")
    except OSError:
        return False
