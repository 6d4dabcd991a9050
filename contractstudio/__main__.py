"""`python -m contractstudio` is the same entry point as the `contractstudio` command."""

from contractstudio.cli import entry

raise SystemExit(entry())
