"""Quick fixes: each finding's fix applied to the file, which is analyzed again: the finding is gone,
nothing new appears, and only the lines the fix adds or removes change (comments kept)."""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path

import pytest

from contractstudio.analysis.check import FileReport, check_text
from contractstudio.editing import code_actions
from contractstudio.editing.text import apply_edits

ERR = Path(__file__).resolve().parents[1] / "fixtures" / "err"

CASES = [
    ("SCH/unknown_key.yaml", "SCH102", "Change 'descripton' to 'description'"),
    ("SCH/missing_key.yaml", "SCH101", "Add 'name: missing_key'"),
    ("EXP/unknown_field.yaml", "EXP201", "Change 'scor' to 'score'"),
    ("EXP/bad_template.yaml", "EXP501", "Change 'scor' to 'score'"),
    ("AGT/dangling_reference.yaml", "AGT401", "Change 'serch_kb' to 'search_kb'"),
    ("CON/con103_no_fallback.yaml", "CON103", "Set 'on_failure: raise'"),
    ("CON/con103_no_fallback.yaml", "CON103", "Add a fallback built from Answer"),
    ("CON/con103_fallback.yaml", "CON103", "Add the missing fallback fields"),
    ("CON/con104_missing_description.yaml", "CON104", "Add a description to field 'text'"),
    ("CON/con106_assign_fields.yaml", "CON106", "Add the missing act.assign fields"),
    ("PIP/missing_entry.yaml", "PIP101", "Add 'entry_step_id: answer'"),
    ("PIP/unknown_target.yaml", "PIP102", "Add a step 'persst'"),
    ("PIP/unknown_target.yaml", "PIP102", "Change 'persst' to 'persist'"),
    ("PIP/missing_step_key.yaml", "PIP203", "Add 'prompt: answer_prompt'"),
    ("PIP/dead_end.yaml", "PIP105", "End the pipeline at step 'persist' (end: true)"),
    ("RTE/no_on_other.yaml", "RTE305", "Add 'on_other: persist'"),
    ("RTE/prefix_without_target.yaml", "RTE301", "Add 'on_bm25: persist'"),
    ("REF/undeclared_types.yaml", "REF201", "Declare type 'Source'"),
    ("YML/duplicate_key.yaml", "YML002", "Remove the duplicate key 'name'"),
    ("CON/con107_no_post.yaml", "CON107", "Add a post condition on output.answer"),
]


@pytest.mark.parametrize(("fixture", "code", "title"), CASES, ids=[f"{c[1]}-{c[2]}" for c in CASES])
def test_a_fix_removes_its_finding_and_adds_none(fixture: str, code: str, title: str) -> None:
    text = (ERR / fixture).read_text(encoding="utf-8")
    report = check_text(text, fixture)
    [action] = [a for a in code_actions(report) if a.title == title]
    assert action.diagnostic is not None and action.diagnostic.code == code
    fixed = apply_edits(text, action.edits)
    before = {(d.code, d.message) for d in report.diagnostics}
    after = {(d.code, d.message) for d in check_text(fixed, fixture).diagnostics}
    assert (code, action.diagnostic.message) not in after
    assert after <= before
    # minimal: at most one original line changes per edit (a flow mapping gains ', key: value'), comments stay
    removed = [ln for ln in difflib.ndiff(text.splitlines(), fixed.splitlines()) if ln.startswith("- ")]
    assert len(removed) <= len(action.edits)
    assert [ln for ln in text.splitlines() if "#" in ln] == [ln for ln in fixed.splitlines() if "#" in ln]


def test_every_finding_of_every_fixture_can_be_suppressed_where_it_is() -> None:
    for path in sorted(ERR.glob("*/*.yaml")):
        text = path.read_text(encoding="utf-8")
        report = check_text(text, str(path))
        for action in code_actions(report):
            if not action.title.startswith("Suppress"):
                continue
            d = action.diagnostic
            assert d is not None
            fixed = check_text(apply_edits(text, action.edits), str(path))
            assert (d.code, d.message) not in {(x.code, x.message) for x in fixed.diagnostics}, (path, d)
            assert not any(x.code == "YML001" for x in fixed.diagnostics if x.code != d.code), (path, d)


def test_a_second_suppression_joins_the_comment_above() -> None:
    text = "kind: contract\nname: x\n# contractstudio: ignore[CON107]\ndescripton: d\n"
    report = check_text(text)
    [d] = [d for d in report.diagnostics if d.line == 4]
    assert (d.code, d.message) == ("SCH102", "unknown key 'descripton' in the document")
    [action] = [a for a in code_actions(report, [d]) if a.title.startswith("Suppress")]
    fixed = apply_edits(text, action.edits)
    assert fixed == text.replace("ignore[CON107]", "ignore[CON107, SCH102]")
    assert [x.code for x in check_text(fixed).diagnostics if x.line == 4] == []  # the finding is gone where it was


def test_fixes_on_a_flow_mapping_insert_before_the_brace() -> None:
    text = (ERR / "CON/con104_missing_description.yaml").read_text(encoding="utf-8")
    assert "      text: {type: str}\n" in text  # the field without a description is a flow mapping
    report = check_text(text)
    action = next(a for a in code_actions(report) if a.title.startswith("Add a description"))
    fixed = apply_edits(text, action.edits)
    assert "      text: {type: str, description: Text.}\n" in fixed
    assert not [d for d in check_text(fixed).diagnostics if d.code == "CON104"]


def _reworded(report: FileReport) -> FileReport:
    """The report with every finding's message and hint replaced by a placeholder (as a rewording would)."""
    return dataclasses.replace(report, diagnostics=[dataclasses.replace(d, message="<reworded>", hint="<reworded>")
                                                    for d in report.diagnostics])


def test_fixes_read_the_finding_payload_not_its_wording() -> None:
    """Issue 23.1: rewording every rule's message and hint loses no fix (fixes read `Diagnostic.payload`)."""
    seen: set[str] = set()
    for path in sorted(ERR.glob("*/*.yaml")):
        report = check_text(path.read_text(encoding="utf-8"), str(path))
        fixes = [(a.title, a.edits) for a in code_actions(report) if not a.title.startswith("Suppress")]
        assert [(a.title, a.edits) for a in code_actions(_reworded(report)) if not a.title.startswith("Suppress")] == fixes, path
        seen.update(title for title, _ in fixes)
    assert {title for _, _, title in CASES} <= seen
