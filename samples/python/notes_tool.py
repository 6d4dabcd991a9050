"""Seed 003's note tool as a bots user writes it, with `contractstudio.toolify` in place of bots' import.

    from contractstudio import toolify      # was: from bots.dev.decorators import toolify

The tool takes text, as an LLM's tool call sends it ("3" for an int), and returns text: its
result, seed 003's "Contract validation failed:" listing, or "Tool Failed: ..." when it raises.
Run it to see each case:

    .venv/bin/python samples/python/notes_tool.py

The YAML form of the same contracts is samples/notes.tools.yaml.
"""

from __future__ import annotations

from contractstudio import toolify

NOTES: dict[str, list[str]] = {}  # the sample keeps notes in memory: no files are written


def title_not_empty(title: str, content: str, max_tags: int = 3) -> tuple[bool, str]:
    """Precondition: a note needs a title."""
    if not title.strip():
        return False, "Title cannot be empty"
    return True, ""


def brackets_balanced(title: str, content: str, max_tags: int = 3) -> tuple[bool, str]:
    """Postcondition (checked before the tool runs, as seed 003 says): the markdown's links must close."""
    opened = content.count("[") - content.count("]")
    if opened:
        return False, f"Invalid markdown: {abs(opened)} unclosed bracket(s)"
    return True, ""


def few_tags(title: str, content: str, max_tags: int = 3) -> tuple[bool, str]:
    """Postcondition: no more #tags than the caller allows (max_tags arrives as text and is converted first)."""
    tags = [word for word in content.split() if word.startswith("#")]
    if len(tags) > max_tags:
        return False, f"At most {max_tags} tags, got {len(tags)}"
    return True, ""


@toolify(description="Create a new note with the given title and markdown content.",
         preconditions=[title_not_empty], postconditions=[brackets_balanced, few_tags])
def create_note(title: str, content: str, max_tags: int = 3) -> dict[str, object]:
    """Create a new note."""
    if title in NOTES:
        raise FileExistsError(f"a note titled {title!r} exists already")
    NOTES[title] = content.splitlines()
    return {"created": title, "lines": len(NOTES[title])}


if __name__ == "__main__":
    print(create_note("Plan", "- read [the spec](spec.md)\n- write #tests", "2"))  # the result as JSON text
    print(create_note(" ", "an [unclosed link #a #b #c #d", "3"))  # both sections listed
    print(create_note("Plan", "again").splitlines()[0])  # the tool raised: "Tool Failed: FileExistsError: ..."
    print(create_note("Other", "text", "many"))  # max_tags is not an int: reported, nothing runs
