"""`contractstudio [PATH...]` / `contractstudio studio [PATH...] [--trust]`: open the studio."""

from __future__ import annotations

import argparse
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    """Open the Textual studio on files and folders (default: the current folder, else the samples)."""
    from contractstudio.commands.exits import usage_error

    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        return usage_error(f"no such file or folder: {missing[0]}")
    from contractstudio.studio.app import StudioApp  # textual is imported only for this command

    StudioApp(list(args.paths), trusted=bool(args.trust), dialect=getattr(args, "dialect", None)).run()
    return 0
