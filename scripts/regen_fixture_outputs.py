"""Rewrite every fixture's `.out` file with what `check` finds now (run: python scripts/regen_fixture_outputs.py [FIXTURE ...]).

A `.out` file pins the whole message line of each finding (tests/fixtures/README.md).
Regenerate after changing a rule's message or adding a fixture, then READ the diff:
every changed line is a change users will see. With fixture paths, only those are
written (a new fixture gets its `.out`); without, every fixture that has one.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fixture_output import found, with_outputs  # noqa: E402


def main(argv: list[str]) -> int:
    fixtures = [Path(a).resolve() for a in argv] or with_outputs()
    changed = 0
    for fixture in fixtures:
        out = fixture.with_suffix(".out")
        text = "".join(line + "\n" for line in found(fixture))
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            out.write_text(text, encoding="utf-8")
            changed += 1
            print(f"wrote {out.relative_to(ROOT)}")
    print(f"{changed} of {len(fixtures)} .out files changed; read the diff (git diff tests/fixtures)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
