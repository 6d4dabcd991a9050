"""`contractstudio lsp`: the language server over stdio (pygls is imported only for this command)."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    """Serve LSP on stdin/stdout until the client exits."""
    from contractstudio.lsp.server import serve

    serve(debounce_ms=max(0.0, args.debounce_ms), log_file=args.log_file, dialect=args.dialect)
    return 0
