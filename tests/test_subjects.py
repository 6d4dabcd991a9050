"""Findings carry what they are about (the step, type, field, tool, policy, task), so no face maps them by lines."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES

from contractstudio.analysis.check import check_file, check_text
from contractstudio.findings.diagnostics import Subject


def found(path: Path) -> list[tuple[str, Subject | None, list[Subject | None]]]:
    return [(d.code, d.subject, [r.subject for r in d.related]) for d in check_file(path).diagnostics]


def test_a_pipeline_finding_and_its_path_name_their_steps() -> None:
    [(code, subject, path)] = found(FIXTURES / "err" / "PIP" / "maybe_unset.yaml")
    assert code == "PIP201" and subject == Subject("step", "expand")
    assert path == [Subject("step", "route"), Subject("step", "dispatch"), Subject("step", "expand")]
    [(code, subject, loop)] = found(FIXTURES / "err" / "PIP" / "trap_cycle.yaml")
    assert code == "PIP105" and subject == Subject("step", "retry") and loop == [Subject("step", "again")]


def test_the_shape_validator_names_the_step_too() -> None:
    text = (Path(__file__).parent / "studio" / "workspace" / "rag_router.pipeline.yaml").read_text()
    broken = text.replace("  - id: dispatch\n", "  - id: dispatch\n    end: maybe\n", 1)
    assert [(d.code, d.subject) for d in check_text(broken, "p.pipeline.yaml").diagnostics] == [("SCH103", Subject("step", "dispatch"))]


def test_contract_types_and_fields_agent_policies_tasks_and_tools() -> None:
    fields = {s for _, s, _ in found(FIXTURES / "err" / "SCH" / "impossible_constraint.yaml")}
    assert Subject("field", "Q.text") in fields and Subject("field", "A.score") in fields
    [(code, subject, others)] = found(FIXTURES / "err" / "AGT" / "conflicts_with.yaml")
    assert subject == Subject("policy", "always-escalate") and others == [Subject("policy", "self-serve")]
    # the expression checker's findings (EXP) name the task whose criterion they are in
    assert {s for _, s, _ in found(FIXTURES / "err" / "AGT" / "criterion_expression.yaml")} == {Subject("task", "answer")}
    assert {s for _, s, _ in found(FIXTURES / "err" / "TOL" / "bad_hooks.yaml")} == {Subject("tool", "create_note")}


def test_the_subject_is_no_part_of_the_reported_finding() -> None:
    [d] = check_file(FIXTURES / "err" / "PIP" / "maybe_unset.yaml").diagnostics
    assert "subject" not in d.to_dict() and all("subject" not in r.to_dict() for r in d.related)


def test_type_strings_and_tool_conditions_name_their_field_or_tool() -> None:
    assert [(c, s) for c, s, _ in found(FIXTURES / "err" / "REF" / "undeclared_types.yaml")] == [
        ("REF201", Subject("field", "Answer.sources")), ("REF201", None)]  # the contract's input type is about no named thing
    assert {s for _, s, _ in found(FIXTURES / "err" / "TOL" / "unknown_parameter.yaml")} == {Subject("tool", "create_note")}
