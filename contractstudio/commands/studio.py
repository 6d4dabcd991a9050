"""`contractstudio [PATH...]` / `contractstudio studio [PATH...] [--trust]`: open the studio."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    """Open the Textual studio on files and folders (default: the current folder, else the samples)."""
    from contractstudio.commands.exits import files_refused

    if (refused := files_refused(args.paths, folders=True)) is not None:  # the rule of every command's file arguments
        return refused
    from contractstudio.studio.app import StudioApp  # textual is imported only for this command

    StudioApp(list(args.paths), trusted=bool(args.trust), dialect=getattr(args, "dialect", None)).run()
    return 0
