"""A declared type nested past what pydantic can write a JSON Schema for (issue 32, finding 4).

T0 -> T1 -> ... -> T59 passed `check`, then every call crashed with RecursionError in pydantic's schema generation
(`run` exit 3, every eval row "could not run"). Now the nesting has a bound well below where pydantic runs out
(documents/types.py: MAX_TYPE_NESTING), reported at check time with the depth and the bound; and a schema pydantic
cannot write at run time is a failed call with a message. docs/security.md ("Limits") names these tests.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import contractstudio as cs
from contractstudio.analysis.check import check_text
from contractstudio.cli import main
from contractstudio.documents.models import TypeDecl
from contractstudio.documents.types import MAX_TYPE_NESTING, TypeBuildError, TypeSystem


def chain(levels: int, *, scenario: bool = False) -> str:
    """A contract whose output type T0 nests `levels` declared types deep (T0.child: T1, ..., T{levels-1}.leaf)."""
    lines = ["kind: contract", "name: deep", "prompt: Answer.", "types:", "  Q:", "    description: A question.",
             "    fields:", "      text: {type: str, description: The question.}"]
    for i in range(levels):
        lines += [f"  T{i}:", f"    description: Level {i}.", "    fields:"]
        lines.append(f"      child: {{type: T{i + 1}, description: The next level.}}" if i < levels - 1
                     else "      leaf: {type: str, description: The leaf.}")
    lines += ["input: Q", "output: T0", "post:", "  - assert: output is not None", "llm:",
              "  model: openai/gpt-4o-mini", "  structured_output: json_schema"]
    if scenario:
        lines += ["scenarios:", "  - name: s", "    input: {text: hi}", f"    responses: ['{json.dumps(reply(levels))}']"]
    return "\n".join(lines) + "\n"


def reply(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "x"}
    for _ in range(levels - 1):
        value = {"child": value}
    return value


def test_an_output_type_nested_past_the_bound_is_one_finding_at_check_with_its_depth_and_the_bound() -> None:
    found = check_text(chain(60), "deep.contract.yaml").diagnostics
    [d] = [d for d in found if d.severity == "error"]
    assert (d.code, d.line, d.column) == ("YML006", 12, 7)  # T0's field `child`, the first step of the deepest path
    assert d.message.startswith("type 'T0' cannot be built (field 'child'): it nests 60 levels deep "
                                "(T0.child -> T1.child -> T2.child -> ... -> T58.child -> T59)")
    assert f"more than the {MAX_TYPE_NESTING} levels a type may nest" in d.message


def test_check_verbose_says_the_output_type_cannot_be_built_not_that_no_model_is_named(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "deep.contract.yaml"
    path.write_text(chain(60))
    assert main(["check", "-v", str(path)]) == 1
    out = capsys.readouterr().out
    assert "no model named" not in out
    assert (f"{path}: contract 'deep': the output type 'T0' cannot be built (its finding says why): "
            "no structured output with openai/gpt-4o-mini") in out


def test_run_of_a_type_nested_past_the_bound_is_refused_with_the_finding_not_a_crash(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "deep.contract.yaml"
    path.write_text(chain(60, scenario=True))
    assert main(["run", str(path), "--scenario", "s"]) == 1
    err = capsys.readouterr().err
    assert "RecursionError" not in err and "internal error" not in err
    assert "error YML006 type 'T0' cannot be built (field 'child'): it nests 60 levels deep" in err


def test_eval_of_a_type_nested_past_the_bound_is_refused_with_the_finding_not_a_row_per_crash(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "deep.contract.yaml"
    path.write_text(chain(60))
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"input": {"text": "hi"}}\n' * 3)
    assert main(["eval", str(path), "--data", str(rows), "--scripted", "--out", str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err
    assert "RecursionError" not in err and "could not run" not in err
    assert "error YML006 type 'T0' cannot be built (field 'child'): it nests 60 levels deep" in err


def test_a_type_at_the_bound_builds_and_writes_its_schema_with_half_the_recursion_limit_spent() -> None:
    decls = {f"T{i}": TypeDecl.model_validate({"fields": {"child": {"type": f"list[T{i + 1}] | None"}}})
             for i in range(MAX_TYPE_NESTING // 2 - 1)}
    decls[f"T{MAX_TYPE_NESTING // 2 - 1}"] = TypeDecl.model_validate({"fields": {"leaf": {"type": "list[str]"}}})
    types = TypeSystem(decls)
    assert types.nesting("T0") == MAX_TYPE_NESTING  # each level: a declared type and a list

    def deep(frames: int) -> dict[str, Any]:
        return deep(frames - 1) if frames else types.json_schema("T0")

    assert "T0" in deep(sys.getrecursionlimit() // 2)["title"]  # well below where pydantic runs out


def test_one_level_past_the_bound_is_refused() -> None:
    decls = {f"T{i}": TypeDecl.model_validate({"fields": {"child": {"type": f"T{i + 1}"}}}) for i in range(MAX_TYPE_NESTING)}
    decls[f"T{MAX_TYPE_NESTING}"] = TypeDecl.model_validate({"fields": {"leaf": {"type": "str"}}})
    types = TypeSystem(decls)
    assert types.nesting("T1") == MAX_TYPE_NESTING and types.model("T1") is not None
    with pytest.raises(TypeBuildError, match=f"nests {MAX_TYPE_NESTING + 1} levels deep"):
        types.model("T0")


def test_a_recursive_type_counts_its_recursion_once() -> None:
    types = TypeSystem({"Node": TypeDecl.model_validate({"fields": {"children": {"type": "list[Node]"}}})})
    assert (types.nesting("Node"), types.deepest_path("Node")) == (3, ("Node.children", "Node"))  # Node, the list, its $ref
    assert types.model("Node") is not None


MODULE = '''\
from pydantic import BaseModel, Field

from contractstudio.symbolic import Expression, LLMDataModel, contract

{models}

class Question(LLMDataModel):
    text: str = Field(description="The question.")


@contract(remedy_retry_params={{"tries": 1, "delay": 0}})
class Deep(Expression):
    @property
    def prompt(self) -> str:
        return "Answer."

    def forward(self, input: Question, **kwargs) -> L0:
        return self.contract_result if self.contract_successful else L0.model_construct()
'''


def test_a_schema_pydantic_cannot_write_at_run_time_is_a_failed_call_with_a_message(tmp_path: Path) -> None:
    # A Python contract's models are the user's own: defined at a shallow stack they describe themselves, and a call
    # made from deep in the caller's code could not have its schema written. The call fails, saying why.
    levels = 30
    models = "\n\n".join(f"class L{i}(BaseModel):\n    child: 'L{i + 1}' = Field(description='c')" for i in range(levels - 1))
    models += f"\n\n\nclass L{levels - 1}(BaseModel):\n    leaf: str = Field(description='l')"
    (tmp_path / "deep_models_mod.py").write_text(MODULE.format(models=models))
    sys.path.insert(0, str(tmp_path))
    try:
        import deep_models_mod  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    from contractstudio.symbolic import use_model

    model = cs.ScriptedModel([json.dumps(reply(levels))], supports=(True, True), stands_for="openai/gpt-4o-mini")
    trace = tmp_path / "call.jsonl"

    def deep(frames: int) -> Any:
        return deep(frames - 1) if frames else deep_models_mod.Deep()(input={"text": "hi"})

    with use_model(model, wait=False, trace=str(trace)):
        result = deep(sys.getrecursionlimit() - 150)
    assert not result.model_fields_set  # forward's own value for a failed call
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    [failure] = [e for e in events if e["type"] == "model_error"]
    assert failure["message"].startswith("the JSON Schema of L0 could not be written (it nests too deep")
    [end] = [e for e in events if e["type"] == "result"]
    assert end["successful"] is False and any("the JSON Schema of L0 could not be written" in x for x in end["errors"])
    assert not [e for e in events if e["type"] == "llm_request"]  # nothing was sent


def test_a_contract_at_the_bound_has_no_nesting_finding() -> None:
    assert not [d for d in check_text(chain(MAX_TYPE_NESTING), "deep.contract.yaml").diagnostics if d.severity == "error"]
