"""`contractstudio lsp`: the language server over stdio (pygls is imported only for this command)."""

from __future__ import annotations

import argparse
import os


def run(args: argparse.Namespace) -> int:
    """Serve LSP on stdin/stdout until the client exits."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # as `check`: no plugin watches the analyzer's models
    from contractstudio.lsp.server import serve

    serve(debounce_ms=max(0.0, args.debounce_ms), log_file=args.log_file, dialect=args.dialect)
    return 0
