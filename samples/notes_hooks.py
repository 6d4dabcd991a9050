"""Python hooks of samples/notes.tools.yaml (seed 003, toolify): a markdown check and the tool itself.

Contracts receive the tool's parameters and return (bool, str), or raise.
They run only in a trusted workspace (`--trust`).
"""

from __future__ import annotations

NOTES: dict[str, str] = {}  # the sample keeps notes in memory: no files are written
_PAIRS = {"(": ")", "[": "]", "{": "}"}


def markdown_issues(content: str) -> list[str]:
    """Unbalanced brackets per line and unclosed code fences, as readable issues."""
    issues: list[str] = []
    fence_open_at = 0
    for number, line in enumerate(content.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence_open_at = 0 if fence_open_at else number
            continue
        if fence_open_at:
            continue  # code is not markdown
        stack: list[str] = []
        for ch in line:
            if ch in _PAIRS:
                stack.append(_PAIRS[ch])
            elif ch in _PAIRS.values():
                if not stack or stack.pop() != ch:
                    issues.append(f"Unexpected closing bracket '{ch}' on line {number}")
                    break
        else:
            if stack:
                issues.append(f"Missing closing bracket on line {number}")
    if fence_open_at:
        issues.append(f"Code fence opened on line {fence_open_at} is never closed")
    return issues


def content_is_valid_markdown(title: str, content: str, **_: object) -> tuple[bool, str]:
    """The note's body is well-formed markdown."""
    issues = markdown_issues(content)
    if issues:
        return False, "Invalid markdown: " + "; ".join(issues)
    return True, ""


def create_note(title: str, content: str, **_: object) -> str:
    """Create a new note (runs only when every contract passed)."""
    NOTES[title] = content
    return f"Created note: {title}"


def read_note(title: str, **_: object) -> str:
    """Return a note's body."""
    if title not in NOTES:
        return f"No note titled {title!r}"
    return NOTES[title]
