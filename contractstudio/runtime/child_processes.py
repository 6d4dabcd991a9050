"""How every process ContractStudio starts begins: with no folder on its `sys.path` that the user did not trust.

`python -m` puts the current folder first on `sys.path`, and an empty or relative
`PYTHONPATH` entry means whatever folder a process happens to be in: a cloned
repository holding `asyncio.py` beside a contract would run it in every eval
worker (issue 32.1). One place decides the start of a child:

- `python_child(module, *args)`: the command and environment of a Python process
  of ours (`eval --workers`' warm process): `-P`, so neither the current folder nor
  a script's folder is put on its path, and `child_environment()`;
- `child_environment()`: this process's environment for any process we start (the
  studio's `$EDITOR`, Ray's servers and workers too): `PYTHONPATH` keeps only its
  absolute folders (the ones the user named), `PYTHONSTARTUP` and `PYTHONINSPECT`
  are dropped;
- `neutral_folder()`: an empty private folder, for a child that must be given a
  working folder (Ray's workers: `ray_engine.start_cluster` makes it the job's
  `working_dir`, so Ray puts neither the driver's folder nor its script's on the
  workers' `sys.path`, and a relative path there finds nothing).

The user's site-packages, `.pth` files and an editable install's finder stay: they
are the interpreter's own, as in the process that starts the child.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

DROPPED = ("PYTHONSTARTUP", "PYTHONINSPECT")  # code run at an interactive start; a child of ours is never interactive


@dataclass(frozen=True, slots=True)
class Child:
    """The command line and environment of a process to start."""

    argv: list[str]
    env: dict[str, str]


def python_child(module: str, *args: str) -> Child:
    """`python -P -m module args` on this interpreter, with `child_environment()`."""
    return Child([sys.executable, "-P", "-m", module, *args], child_environment())


def child_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """`environ` (this process's) as a child gets it: PYTHONPATH holds only absolute folders, no start-up code."""
    env = dict(os.environ if environ is None else environ)
    for name in DROPPED:
        env.pop(name, None)
    if "PYTHONPATH" in env:
        kept = trusted_pythonpath(env["PYTHONPATH"])
        if kept:
            env["PYTHONPATH"] = kept
        else:
            del env["PYTHONPATH"]
    return env


def trusted_pythonpath(value: str) -> str:
    """The absolute folders of a PYTHONPATH value: an empty or relative entry is the child's working folder."""
    return os.pathsep.join(entry for entry in value.split(os.pathsep) if entry and os.path.isabs(entry))


@contextmanager
def neutral_folder() -> Iterator[str]:
    """An empty private folder, removed afterwards: a working folder that holds nothing to import."""
    with tempfile.TemporaryDirectory(prefix="contractstudio-child-") as folder:
        yield folder


@contextmanager
def environment_of_children() -> Iterator[None]:
    """While it lasts, this process's environment is `child_environment()`: for a library that starts processes
    with `os.environ` as it is (Ray's local servers and workers). The variables it changed are put back afterwards."""
    wanted = child_environment()
    changed = {name: os.environ[name] for name in ("PYTHONPATH", *DROPPED)
               if name in os.environ and wanted.get(name) != os.environ[name]}
    for name in changed:
        if name in wanted:
            os.environ[name] = wanted[name]
        else:
            del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(changed)
