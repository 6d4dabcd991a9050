"""`contractstudio convert FILE --to contractstudio [-o OUT]`: a LocalAI-RAG or AgentAnvil file as a native document.

What is written is the native reading the analyzer itself works on (bases merged
in, routes flattened, `catalog: localai-rag`; AgentAnvil's oracles in native
words), so the converted file analyzes, graphs and simulates as the original
does. A file with errors is refused, as `export` refuses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from contractstudio.analysis.check import Context, check_file
from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, files_refused, usage_error
from contractstudio.findings.diagnostics import at_least
from contractstudio.reports import diagnostics as report
from contractstudio.safe_text import printable
from contractstudio.storage.atomic import NotARegularFile, target_problem, write_atomic
from contractstudio.trust import hook_folder


class _Dumper(yaml.SafeDumper):
    """Block style, with list items indented under their key as the samples are."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def run(args: argparse.Namespace) -> int:
    """Write the native reading of every document of the file; refuse a native file or one with errors."""
    source = Path(args.file)
    if (refused := files_refused([source])) is not None:
        return refused
    if args.output and (problem := target_problem(args.output)):  # before any work, like export -o
        return usage_error(f"cannot write the conversion: {problem}")
    result = check_file(source, Context(hooks=hook_folder(source, False), dialect=args.dialect))
    if result.dialect == "contractstudio":
        print(printable(f"{args.file} is already a ContractStudio document (or of no known format); nothing to convert"),
              file=sys.stderr)
        return EXIT_PROBLEM
    errors = at_least(result.diagnostics, "error")
    if errors:
        print(printable(f"convert refused: {args.file} has {len(errors)} error{'s' if len(errors) != 1 else ''}"), file=sys.stderr)
        print(report.text(errors, result.texts, 1), file=sys.stderr)
        return EXIT_PROBLEM
    docs = [yaml.dump(d.doc.data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120, default_flow_style=False)
            for d in result.documents if d.model is not None]
    # The name is outside text: escaped onto the comment's one line (a newline in it would start a YAML line of its own).
    header = f"# converted from {printable(source.name)} ({result.dialect}) by contractstudio convert\n"
    text = header + "---\n".join(docs)
    if args.output:
        try:
            write_atomic(Path(args.output), text)
        except NotARegularFile as err:
            return usage_error(f"cannot write the conversion: {err}")
        except OSError as err:  # a full disk: the old file (if any) is left as it was
            print(printable(f"contractstudio: could not write {args.output}: {err.strerror or err}"), file=sys.stderr)
            return EXIT_PROBLEM
        print(printable(f"converted {args.file} -> {args.output}"), file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK
