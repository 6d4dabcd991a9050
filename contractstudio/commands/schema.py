"""`contractstudio schema [KIND]`: the JSON Schema of the format, for editors."""

from __future__ import annotations

import argparse

from contractstudio.documents.json_schema import schema_json


def run(args: argparse.Namespace) -> int:
    """Print the schema of one kind, or of every kind."""
    print(schema_json(args.kind))
    return 0
