"""A `scenarios:` entry added to a contract's text: the one edit that turns a recorded call into an offline test.

The entry goes at the end of the contract's `scenarios:` list (or a new `scenarios:` key at the end of the
contract's mapping), computed from the exact spans of the nodes (editing/yaml_text.py): every other character of
the file stays as written, comments and all.
"""

from __future__ import annotations

from typing import Any

import yaml

from contractstudio.editing.text import apply_edits
from contractstudio.editing.yaml_text import add_entry, add_item, is_flow
from contractstudio.reading.source import MapNode, SeqNode, read_source, text_lines


def with_scenario(text: str, contract: str, scenario: dict[str, Any]) -> str:
    """The text with `scenario` appended to the scenarios of the contract named `contract`; ValueError saying why not."""
    source = read_source(text)
    found = [d for d in source.documents if isinstance(d.root, MapNode) and isinstance(d.data, dict)
             and d.data.get("kind") == "contract" and d.data.get("name") == contract]
    if len(found) != 1:
        raise ValueError(f"the file holds {'no' if not found else len(found)} contract(s) named {contract!r}")
    root, data = found[0].root, found[0].data
    assert isinstance(root, MapNode)
    lines = list(text_lines(text))
    if is_flow(root, lines):
        raise ValueError(f"the contract {contract!r} is written as one flow mapping ({{...}}); add the scenario by hand")
    names = {s.get("name") for s in (data.get("scenarios") or []) if isinstance(s, dict)}
    if scenario.get("name") in names:
        raise ValueError(f"the contract {contract!r} has a scenario named {scenario.get('name')!r} already")
    body = yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    existing = root.get("scenarios")
    if isinstance(existing, SeqNode) and existing.items and not is_flow(existing, lines):
        edit = add_item(existing, body.rstrip("\n").split("\n"), lines)
    elif existing is None:
        item = "".join(f"{'- ' if i == 0 else '  '}{ln}\n" for i, ln in enumerate(body.rstrip("\n").split("\n")))
        edit = add_entry(root, "scenarios", item, lines)
    else:
        raise ValueError(f"the contract {contract!r} writes `scenarios:` in a form this edit does not extend "
                         "(a flow or empty list); add the scenario by hand")
    return apply_edits(text, [edit])

