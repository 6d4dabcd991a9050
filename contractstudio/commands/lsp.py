"""`contractstudio lsp`: the language server over stdio (pygls is imported only for this command)."""

from __future__ import annotations

import argparse

from contractstudio.commands.exits import usage_error
from contractstudio.storage.atomic import target_problem


def run(args: argparse.Namespace) -> int:
    """Serve LSP on stdin/stdout until the client exits."""
    # the rule of every output path (eval --out): a FIFO would hang the server before it answers, a missing
    # folder or a folder would end it in a crash file; each is exit 2 and a message, before anything is opened
    if args.log_file and (problem := target_problem(args.log_file)):
        return usage_error(f"cannot write the log: {problem}")
    from contractstudio.lsp.server import serve

    serve(debounce_ms=max(0.0, args.debounce_ms), log_file=args.log_file, dialect=args.dialect)
    return 0
