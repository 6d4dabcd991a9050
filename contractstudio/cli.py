"""The `contractstudio` command: one entry point, the subcommands of CLI.md.

Each subcommand lives in `contractstudio/commands/<name>.py` and is imported
only when used, so `check` never pays for textual or litellm.
Exit codes: 0 success, 1 the work found a problem, 2 bad usage, 3 internal error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from contractstudio.commands.exits import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, exit_now
from contractstudio.reading.dialect_registry import CHOICES as DIALECTS
from contractstudio.safe_text import printable, register_environment

FORMATS = ("text", "json", "jsonl", "sarif", "github")


def _dialect(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dialect", choices=DIALECTS, default=None,
                   help="read every document as this format (default: by .contractstudio.yaml, then by its shape)")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # usage errors exit 2, as argparse does, with our wording
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, printable(f"{self.prog}: error: {message}", lines=True) + "\n")  # an argument may hold ESC


OTLP_HELP = ("send each call's OpenTelemetry spans to this OTLP/HTTP endpoint (as OTEL_EXPORTER_OTLP_ENDPOINT does; "
             "needs the otel extra)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    p = _Parser(prog="contractstudio", description="Write, analyze, visualize and debug contracts around LLM calls.")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("studio", help="open the studio (the default when no command is given)")
    s.add_argument("paths", nargs="*", help="files or folders (default: the current folder, else the bundled samples)")
    s.add_argument("--trust", action="store_true",
                   help="trust the folders given (not their neighbours): python: hooks run, keys go where their files say")
    s.add_argument("--trace", metavar="FILE", help="open this trace in the debugger, ready to replay; from a span export "
                   "(OTLP JSON, Phoenix), its first failed contracted call")
    _dialect(s)

    c = sub.add_parser("check", help="analyze files and folders")
    c.add_argument("paths", nargs="+", metavar="PATH")
    c.add_argument("--format", choices=FORMATS, default="text")
    c.add_argument("--fail-level", choices=("error", "warning", "info", "none"), default="error",
                   help="exit 1 when a diagnostic at or above this level is found (default: error)")
    c.add_argument("--trust", action="store_true", help="trust the folders given: import their python: hooks to check them (TOL102)")
    c.add_argument("--no-color", action="store_true", help="plain text output")
    c.add_argument("--allow-empty", action="store_true",
                   help="exit 0 when no file was checked (default: exit 1, so a mistyped path fails CI)")
    c.add_argument("--model", metavar="M", help="classify each output clause for this litellm model instead of the one "
                   "a contract names: enforced by the decoder, checked after the reply, or not representable (CON131, CON132)")
    c.add_argument("-v", "--verbose", action="store_true",
                   help="text format: a line per contract saying the structured-output mode and who enforces its clauses")
    _dialect(c)

    g = sub.add_parser("graph", help="the step graph of a pipeline with its routing prefixes")
    g.add_argument("pipeline", metavar="PIPELINE")
    g.add_argument("--format", choices=("text", "mermaid", "dot"), default="text")
    _dialect(g)

    r = sub.add_parser("run", help="one contracted call")
    r.add_argument("contract", metavar="CONTRACT")
    r.add_argument("--input", metavar="FILE|-", help="input as YAML or JSON (a file, or - for stdin)")
    r.add_argument("--model", metavar="M", help="litellm model string, overrides the file's llm.model")
    r.add_argument("--api-base", metavar="URL", help="base URL of an OpenAI-compatible server")
    r.add_argument("--scenario", metavar="NAME", help="use a scenario's input and scripted replies (offline)")
    r.add_argument("--replay", metavar="TRACE", help="replay the replies recorded in a trace (offline)")
    r.add_argument("--replies", metavar="FILE", help="scripted replies, a JSON Lines file, one reply a line (offline; "
                   "a Python class's way to run as a scenario does)")
    r.add_argument("--trace", metavar="OUT", help="write the trace as JSON Lines")
    r.add_argument("--save-scenario", metavar="NAME", help="add the call to the contract's file as scenario NAME: its "
                   "input, the model's replies and the outcome, which `contractstudio test` replays offline")
    r.add_argument("--otlp", metavar="URL", help=OTLP_HELP)
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.add_argument("--trust", action="store_true", help="trust the contract's folder: python: hooks, keys where it says")
    r.add_argument("--no-wait", action="store_true", help="skip remedy waits (they are still shown)")
    _dialect(r)

    t = sub.add_parser("test", help="run every scenarios: entry offline")
    t.add_argument("paths", nargs="+", metavar="PATH")
    t.add_argument("--trust", action="store_true", help="trust the folders given: python: hooks run")
    t.add_argument("-k", metavar="PATTERN", help="only scenarios whose 'file::contract::scenario' name contains PATTERN")
    _dialect(t)

    m = sub.add_parser("simulate", help="the path a router reply takes through a pipeline")
    m.add_argument("pipeline", metavar="PIPELINE")
    m.add_argument("--reply", required=True, metavar="TEXT")
    m.add_argument("--route", action="append", metavar="STEP=ROUTE",
                   help="the route a custom routing action takes (repeatable; default: its first on_* route)")
    m.add_argument("--json", action="store_true")
    _dialect(m)

    e = sub.add_parser("export", help="validated YAML, comments and key order kept")
    e.add_argument("file", metavar="FILE")
    e.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    _dialect(e)

    v = sub.add_parser("convert", help="a file of another format (LocalAI-RAG, AgentAnvil) as a native document")
    v.add_argument("file", metavar="FILE")
    v.add_argument("--to", choices=("contractstudio",), required=True, help="the format to write")
    v.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    _dialect(v)

    h = sub.add_parser("schema", help="the JSON Schema of the format")
    h.add_argument("kind", nargs="?", choices=("contract", "agent", "pipeline", "tools"))
    h.add_argument("--model", metavar="M", help="with --contract: the output type's schema as sent to this litellm model")
    h.add_argument("--contract", metavar="FILE", help="with --model: a contract whose output type to compile; prints each "
                   "clause with who enforces it (decoder / after reply / not representable), then the schema sent")

    ls = sub.add_parser("lsp", help="a Language Server Protocol server over stdio (for VS Code, Neovim, Helix ...)")
    ls.add_argument("--debounce-ms", type=float, default=150, metavar="MS", help="wait this long after a change before analyzing")
    ls.add_argument("--log-file", metavar="FILE", help="write the server's log here instead of stderr")
    _dialect(ls)

    from contractstudio.commands.eval import add_parser as add_eval
    from contractstudio.commands.spans import add_parser as add_spans

    add_eval(sub)
    add_spans(sub)
    return p


def _version() -> str:
    from contractstudio import __version__

    return f"contractstudio {__version__}"


def commands_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by name."""
    return next((dict(a.choices) for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})  # noqa: SLF001 - argparse has no public list of subcommands


# The documents a folder scan and the pre-commit hook pick (NAME.<kind>.yaml); no option of ours looks like one.
_DOCUMENT_NAME = re.compile(r"\.(contract|agent|pipeline|tools)\.ya?ml$")


def _files_named_like_options(argv: list[str]) -> list[str]:
    """`check`'s arguments with an existing document file named like an option (`-h.contract.yaml`) moved after `--`.

    pre-commit appends the staged files after the hook's args; a user's own args without the closing `--`
    would otherwise let a staged `-h.contract.yaml` be read as `-h` (help, exit 0: the hook would pass)."""
    if not argv or argv[0] != "check":
        return argv
    end = argv.index("--") if "--" in argv else len(argv)
    moved = [a for a in argv[1:end] if a.startswith("-") and _DOCUMENT_NAME.search(a) and os.path.isfile(a)]
    if not moved:
        return argv
    kept = [a for a in argv[:end] if a not in moved]
    return [*kept, "--", *moved, *argv[end + 1:]]


def entry() -> int:
    """The `contractstudio` command as a process (`python -m contractstudio` too): `main`, then a quick exit where the
    command allows it."""
    return main(quick_exit=True)


def main(argv: Sequence[str] | None = None, *, quick_exit: bool = False) -> int:
    """Run the command line; returns the exit code. With `quick_exit` (a process of its own, never a caller's), a
    command whose module says `QUICK_EXIT = True` ends the process once it is done (`exits.exit_now`)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    commands = {"studio", "check", "graph", "run", "test", "simulate", "export", "schema", "eval", "convert", "lsp", "spans"}
    if not args_list or (args_list[0] not in commands and not args_list[0].startswith("-")):
        args_list = ["studio", *args_list]
    args_list = _files_named_like_options(args_list)
    parser = build_parser()
    args, unknown = parser.parse_known_args(args_list)
    if unknown:  # said with the usage of the command they were given to, not the top level's
        commands_of(parser).get(args.command, parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        args = parser.parse_args(["studio"])
    # pydantic looks for plugins (observability hooks for validation) in every installed distribution's entry
    # points when the first model is built: ~10 ms of a ~270 ms `check`, for our own models, which no plugin is
    # meant to watch. Set once here for every command; a user who sets the variable keeps their choice.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    register_environment()  # the keys this process can use: no piece of one is shown, live call or not
    if getattr(args, "otlp", None) is not None:
        if not str(args.otlp).startswith(("http://", "https://")):
            commands_of(parser)[args.command].error(f"--otlp takes an http:// or https:// URL, not {args.otlp!r}")
        from contractstudio.runtime import otel

        otel.configure(args.otlp)
    try:
        module = importlib.import_module(f"contractstudio.commands.{args.command}")
        code = int(module.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except SystemExit:
        raise
    except Exception:  # noqa: BLE001 - the one place that turns a bug into exit 3
        return _internal_error()
    if (otel_module := sys.modules.get("contractstudio.runtime.otel")) is not None:
        otel_module.flush()  # this command's spans are sent before a quick exit skips the exporter's own shutdown
    if quick_exit and getattr(module, "QUICK_EXIT", False):
        exit_now(code)
    return code


def _internal_error() -> int:
    """Write the traceback to a file and print a short message (never a traceback)."""
    from contractstudio.runtime.crash import crash_report

    path, text = crash_report(sys.exc_info()[1] or RuntimeError("unknown error"))
    last = text.strip().splitlines()[-1] if text.strip() else "unknown error"
    print(f"contractstudio: internal error: {last}\nThe full traceback was written to {path}; please report it.", file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
