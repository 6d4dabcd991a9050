"""What a fixture's `.out` file pins: one line per finding, the whole message line (tests/fixtures/README.md).

    3:16: error PIP101 entry_step_id 'strat' is not a step [bad-entry-step]

`[path:]line:column: severity CODE message [name]`, in check's order; the path only
for a finding in another file (a base a dialect file extends), relative to the
fixture's folder. The tests and scripts/regen_fixture_outputs.py share this module.
"""

from __future__ import annotations

import os
from pathlib import Path

from contractstudio.analysis.check import Context, check_file
from contractstudio.findings.diagnostics import Diagnostic
from contractstudio.trust import hook_folder

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DIALECTS = FIXTURES / "dialects"


def out_line(d: Diagnostic, fixture: Path) -> str:
    """The `.out` line of one finding of a fixture."""
    where = os.path.relpath(d.file, fixture.parent)
    prefix = "" if where == fixture.name else f"{Path(where).as_posix()}:"
    message = d.message.replace("\n", "\\n")  # one line per finding, always
    return f"{prefix}{d.line}:{d.column}: {d.severity} {d.code} {message} [{d.name}]".strip()


def found(fixture: Path) -> list[str]:
    """What `check` finds in a fixture, as `.out` lines.

    Native fixtures run in a trusted workspace (hooks are imported, TOL102) unless the file says
    `# fixture: untrusted` (TOL103, CON110); dialect fixtures run as `check` runs them by default.
    """
    if DIALECTS in fixture.parents:
        report = check_file(fixture)
    else:
        trusted = "# fixture: untrusted" not in fixture.read_text(encoding="utf-8", errors="replace")
        report = check_file(fixture, Context(hooks=hook_folder(fixture.parent, trusted)))
    return [out_line(d, fixture) for d in report.diagnostics]


def expected(fixture: Path) -> list[str]:
    """The lines of a fixture's `.out` file (blank lines and `#` comments skipped)."""
    text = fixture.with_suffix(".out").read_text(encoding="utf-8")
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def code_of(line: str) -> str:
    """The code of one `.out` line."""
    return line.split()[2]


def with_outputs() -> list[Path]:
    """Every fixture that has a `.out` file."""
    return sorted(p for pattern in ("*.yaml", "*.py") for p in FIXTURES.rglob(pattern) if p.with_suffix(".out").exists())
