"""`contractstudio [PATH...]` / `contractstudio studio [PATH...] [--trust]`: open the studio."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    """Open the Textual studio on files and folders (default: the current folder, else the samples)."""
    from contractstudio.commands.exits import files_refused

    if (refused := files_refused(args.paths, folders=True)) is not None:  # the rule of every command's file arguments
        return refused
    from contractstudio.collector import keep_readings
    from contractstudio.studio.app import StudioApp  # textual is imported only for this command

    keep_readings()  # what analyses build stays out of the collector's passes; the studio sweeps when the keys are quiet
    StudioApp(list(args.paths), trusted=bool(args.trust), dialect=getattr(args, "dialect", None)).run()
    return 0


# The process may end without the interpreter's teardown once the app has returned (cli.entry, exits.exit_now): the
# terminal is restored, every save is done (quitting with unsaved changes asks first), and freeing the analysis of a
# 5 MB file object by object took 3-5 s after Ctrl+Q. Exit handlers still run; a thread still running keeps the
# interpreter's own exit.
QUICK_EXIT = True
