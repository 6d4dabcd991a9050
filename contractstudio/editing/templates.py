"""Starting texts for a new file of each kind: the smallest document the quick fixes take from there."""

from __future__ import annotations

TEMPLATES = {
    "contract": "kind: contract\nname: {name}\n",
    "agent": "kind: agent\nname: {name}\ntools: []\ntasks: []\n",
    "pipeline": ("kind: pipeline\nname: {name}\nentry_step_id: start\nsteps:\n"
                 "  - id: start\n    action: call_model\n    prompt: start_prompt\n    end: true\n"),
    "tools": "kind: tools\nname: {name}\ntools: []\n",
}


def template(kind: str, name: str) -> str:
    """The new file's text (kind: contract, agent, pipeline or tools)."""
    return TEMPLATES[kind].format(name=name)


def kind_of_name(file_name: str) -> str | None:
    """The kind a file name asks for by the samples' convention (`NAME.<kind>.yaml`)."""
    parts = file_name.split(".")
    return parts[-2] if len(parts) >= 3 and parts[-2] in TEMPLATES and parts[-1] in ("yaml", "yml") else None
