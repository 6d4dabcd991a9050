"""`contractstudio [PATH...]` / `contractstudio studio [PATH...] [--trust]`: open the studio."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    """Open the Textual studio on files and folders (default: the current folder, else the samples)."""
    from contractstudio.commands.exits import files_refused, usage_error

    if (refused := files_refused(args.paths, folders=True)) is not None:  # the rule of every command's file arguments
        return refused
    debug_trace = None
    if getattr(args, "trace", None):
        if (refused := files_refused([args.trace])) is not None:
            return refused
        debug_trace, problem = trace_to_debug(Path(args.trace))
        if problem is not None:
            return usage_error(problem)
    from contractstudio.collector import keep_readings
    from contractstudio.studio.app import StudioApp  # textual is imported only for this command

    keep_readings()  # what analyses build stays out of the collector's passes; the studio sweeps when the keys are quiet
    StudioApp(list(args.paths), trusted=bool(args.trust), dialect=getattr(args, "dialect", None),
              debug_trace=debug_trace).run()
    return 0


def trace_to_debug(path: Path) -> tuple[Path | None, str | None]:
    """The trace `--trace` opens: the file itself when it is a trace; from a span export (OTLP JSON, Phoenix), its first
    failed contracted call (else its first call), written as a trace into a new temporary folder. Or why not."""
    from contractstudio.runtime.span_import import ExportError, contracted_calls, read_export
    from contractstudio.runtime.trace import NotATrace, recorded_start
    from contractstudio.safe_text import redact_text

    try:
        if recorded_start(path) is not None:
            return path, None
    except NotATrace:
        pass  # one JSON document over several lines: an export, read below
    try:
        calls = [c for c in contracted_calls(read_export(path)) if c.trace is not None]
    except ExportError as err:
        return None, redact_text(str(err))
    if not calls:
        return None, f"{path} holds no contracted call with its trace (export with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)"
    call = next((c for c in calls if c.failed), calls[0])
    assert call.trace is not None
    from contractstudio.storage.atomic import write_named

    folder = Path(tempfile.mkdtemp(prefix="contractstudio-spans-"))
    write_named(folder, call.file_name(), call.trace.to_jsonl())
    return folder / call.file_name(), None


# The process may end without the interpreter's teardown once the app has returned (cli.entry, exits.exit_now): the
# terminal is restored, every save is done (quitting with unsaved changes asks first), and freeing the analysis of a
# 5 MB file object by object took 3-5 s after Ctrl+Q. Exit handlers still run; a thread still running keeps the
# interpreter's own exit.
QUICK_EXIT = True
