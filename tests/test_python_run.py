"""`run` / `eval path/module.py:ClassName`: a contracted Python class run like a YAML contract, behind the trust check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.cli import main
from contractstudio.runtime.api import load_contract

MODULE = '''\
from pathlib import Path

from pydantic import Field

from contractstudio.symbolic import Expression, LLMDataModel, contract

Path(__file__).with_name("imported.marker").write_text("the module ran")


class Question(LLMDataModel):
    text: str = Field(description="The question.")


class Answer(LLMDataModel):
    answer: str = Field(description="The answer.")


@contract(remedy_retry_params={"tries": 2, "delay": 0})
class Answerer(Expression):
    calls = 0

    @property
    def prompt(self) -> str:
        return "Answer the question in one word."

    def post(self, output: Answer) -> bool:
        if " " in output.answer.strip():
            raise ValueError("Answer in one word.")
        return True

    def forward(self, input: Question, **kwargs) -> Answer:
        return self.contract_result if self.contract_successful else Answer(answer="unknown")


class Plain:
    pass
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "answerer_mod.py").write_text(MODULE)
    (tmp_path / "question.yaml").write_text("text: What colour is the sky?\n")
    return tmp_path


def recorded(project: Path) -> Path:
    """A trace of one call of the class (two replies: one remedy), written by the class's own use_model."""
    from contractstudio.hooks import resolve_hook
    from contractstudio.symbolic import use_model

    cls = resolve_hook("answerer_mod:Answerer", project)
    trace = project / "calls.jsonl"
    with use_model(cs.ScriptedModel(['{"answer": "light blue"}', '{"answer": "blue"}']), wait=False, trace=str(trace)):
        assert cls()(input={"text": "What colour is the sky?"}).answer == "blue"
    (project / "imported.marker").unlink()
    return trace


def test_an_untrusted_folder_is_refused_before_the_module_is_imported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", f"{project / 'answerer_mod.py'}:Answerer", "--input", str(project / "question.yaml")])
    err = capsys.readouterr().err
    assert code == 1 and not (project / "imported.marker").exists()
    assert f"importing answerer_mod.py runs its code, and its folder {project.resolve()} is not trusted: pass --trust" in err


def test_a_trusted_class_runs_through_the_engine_from_a_replayed_trace(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = recorded(project)
    code = main(["run", f"{project / 'answerer_mod.py'}:Answerer", "--replay", str(trace), "--trust", "--no-wait", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (out["successful"], out["output"], out["llm_calls"], out["remedy_attempts"]) == (True, {"answer": "blue"}, 2, 1)
    assert out["errors"] == ["Answer in one word."]


def test_the_text_report_names_the_class_and_its_stages(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = recorded(project)
    code = main(["run", f"{project / 'answerer_mod.py'}:Answerer", "--input", str(project / "question.yaml"),
                 "--replay", str(trace), "--trust", "--no-wait"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("Answerer: replay")
    assert "successful: 2 LLM call(s), 1 remedy attempt(s)" in out and '"answer": "blue"' in out


def test_what_cannot_run_says_why(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = f"{project / 'answerer_mod.py'}"
    question = str(project / "question.yaml")
    assert main(["run", f"{module}:Answerr", "--input", question, "--trust"]) == 1
    assert "has no attribute 'Answerr'" in capsys.readouterr().err
    assert main(["run", f"{module}:Plain", "--input", question, "--trust"]) == 1
    assert "is not a class decorated with @contract" in capsys.readouterr().err
    assert main(["run", f"{module}:Answerer", "--scenario", "x", "--trust"]) == 2
    assert "a Python class has no scenarios" in capsys.readouterr().err
    assert main(["run", f"{project / 'missing.py'}:Answerer", "--input", question]) == 2
    assert "no such file" in capsys.readouterr().err


ROWS = [
    {"id": "first-try", "input": {"text": "Sky colour?"}, "replies": ['{"answer": "blue"}']},
    {"id": "remedied", "input": {"text": "Grass colour?"}, "replies": ['{"answer": "bright green"}', '{"answer": "green"}']},
    {"id": "bad", "input": {"txt": "not a Question"}, "replies": []},
]


def dataset(project: Path) -> Path:
    data = project / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return data


def test_eval_runs_a_trusted_class_over_a_dataset_each_row_through_the_engine(project: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = project / "results.jsonl"
    code = main(["eval", f"{project / 'answerer_mod.py'}:Answerer", "--data", str(dataset(project)), "--scripted", "--no-wait",
                 "--trust", "--out", str(out)])
    captured = capsys.readouterr()
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert code == 0 and "successful: 2 (100.0% [34.2, 100.0])" in captured.out
    assert "row 3: input.text: required field is missing (skipped)" in captured.err  # checked against forward's annotation
    assert (records["first-try"]["contract"], records["first-try"]["llm_calls"]) == ("Answerer", 1)
    assert (records["remedied"]["successful"], records["remedied"]["attempts"]) == (True, 1)


def test_eval_refuses_an_untrusted_class_before_importing_it(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", f"{project / 'answerer_mod.py'}:Answerer", "--data", str(dataset(project)), "--scripted"])
    assert code == 1 and not (project / "imported.marker").exists()
    assert "is not trusted: pass --trust" in capsys.readouterr().err


@pytest.fixture(autouse=True)
def _forget_the_module() -> None:
    yield
    sys.modules.pop("answerer_mod", None)


def test_a_python_file_without_a_class_name_says_how_to_name_one(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(project / "answerer_mod.py"), "--input", str(project / "question.yaml"), "--trust"])
    err = capsys.readouterr().err
    assert code == 1 and not (project / "imported.marker").exists()
    assert f"{project / 'answerer_mod.py'} holds Python contract classes (Answerer): run one as " \
           f"{project / 'answerer_mod.py'}:Answerer" in err
    with pytest.raises(cs.ContractError, match="holds Python contract classes"):
        cs.load(project / "answerer_mod.py", trust=True)


def test_run_takes_a_class_s_model_from_contractstudio_model(project: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from openai_server import OpenAIServer

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.delenv("CONTRACTSTUDIO_MODEL", raising=False)
    args = ["run", f"{project / 'answerer_mod.py'}:Answerer", "--input", str(project / "question.yaml"), "--trust", "--no-wait"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "llm:" not in err and "CONTRACTSTUDIO_MODEL" in err and "--model" in err and "--replies" in err

    monkeypatch.setenv("CONTRACTSTUDIO_MODEL", "openai/from-environment")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-python-run-0123456789")
    with OpenAIServer(['{"answer": "blue"}']) as server:
        code = main([*args, "--api-base", server.base_url])
        assert server.requests[0].body is not None and server.requests[0].body["model"] == "from-environment"
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("Answerer: openai/from-environment")


def test_run_a_class_offline_with_a_file_of_scripted_replies(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replies = project / "replies.jsonl"
    replies.write_text('{"answer": "light blue"}\n"{\\"answer\\": \\"blue\\"}"\n')  # a JSON value, or a JSON string: the text
    code = main(["run", f"{project / 'answerer_mod.py'}:Answerer", "--input", str(project / "question.yaml"),
                 "--replies", str(replies), "--trust", "--no-wait", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and (out["output"], out["llm_calls"], out["remedy_attempts"]) == ({"answer": "blue"}, 2, 1)

    replies.write_text('{"answer": "light blue"}\n')
    assert main(["run", f"{project / 'answerer_mod.py'}:Answerer", "--input", str(project / "question.yaml"),
                 "--replies", str(replies), "--trust", "--no-wait"]) == 1
    assert "replies.jsonl" in capsys.readouterr().out  # the scripted replies ran out: said, with the file's name


GRADER = '''\
from pydantic import Field

from contractstudio.symbolic import Expression, LLMDataModel, contract


class Question(LLMDataModel):
    text: str = Field(description="The question.")


class Answer(LLMDataModel):
    answer: str = Field(description="The answer.")


@contract(remedy_retry_params={"tries": 1, "delay": 0})
class Grader(Expression):
    @property
    def prompt(self) -> str:
        return "Answer the question in one lower-case word."

    def post(self, output: Answer) -> bool:
        if not output.answer:
            raise ValueError("The answer is empty.")
        if " " in output.answer:
            raise ValueError(f"Answer in one word, not {len(output.answer.split())}.")
        if output.answer != output.answer.lower():
            raise ValueError("Answer in lower case.")
        return True

    def forward(self, input: Question, **kwargs) -> Answer:
        return self.contract_result if self.contract_successful else Answer(answer="unknown")
'''


def test_eval_of_a_class_groups_post_failures_by_the_line_that_raised(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "grader_mod.py").write_text(GRADER)
    bad = {"empty": '{"answer": ""}', "words": '{"answer": "light blue"}', "upper": '{"answer": "Blue"}'}
    rows = [{"id": f"{kind}-{i}", "input": {"text": "Sky?"}, "replies": [reply, reply]}
            for i in range(3) for kind, reply in bad.items()]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        code = main(["eval", f"{tmp_path / 'grader_mod.py'}:Grader", "--data", str(tmp_path / "rows.jsonl"), "--scripted",
                     "--no-wait", "--trust", "--out", str(tmp_path / "results.jsonl")])
    finally:
        sys.modules.pop("grader_mod", None)
    out = capsys.readouterr().out
    listed = [line.split() for line in out.splitlines() if "post.post" in line]
    assert code == 0 and len(listed) == 3  # three raising lines: three groups, 6 times in 3 rows each
    assert sorted((words[0], words[1], words[2]) for words in listed) == [
        ("6", "3", "post.post@grader_mod.py:22:"), ("6", "3", "post.post@grader_mod.py:24:"), ("6", "3", "post.post@grader_mod.py:26:")]
    assert "Answer in one word, not 2." in out and "The answer is empty." in out and "Answer in lower case." in out


def test_run_json_of_a_verbose_class_prints_only_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    module = project / "answerer_mod.py"
    module.write_text(MODULE.replace('@contract(remedy_retry_params={"tries": 2, "delay": 0})',
                                     '@contract(verbose=True, remedy_retry_params={"tries": 2, "delay": 0})'))
    replies = project / "replies.jsonl"
    replies.write_text('{"answer": "light blue"}\n{"answer": "blue"}\n')
    code = main(["run", f"{module}:Answerer", "--input", str(project / "question.yaml"), "--replies", str(replies),
                 "--trust", "--no-wait", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["output"] == {"answer": "blue"}  # no panel in the JSON


def test_replies_that_are_not_a_regular_file_or_not_json_lines_are_refused_with_where(project: Path,
                                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import os

    fifo = project / "replies.fifo"
    os.mkfifo(fifo)
    args = ["run", f"{project / 'answerer_mod.py'}:Answerer", "--input", str(project / "question.yaml"), "--trust", "--no-wait"]
    assert main([*args, "--replies", str(fifo)]) == 2  # refused before it is opened: a FIFO would block
    assert "replies.fifo" in capsys.readouterr().err
    bad = project / "replies.jsonl"
    bad.write_text('{"answer": "blue"}\n' + "[" * 30000 + "\n")
    assert main([*args, "--replies", str(bad)]) == 2
    assert "replies.jsonl:2" in capsys.readouterr().err  # the line too deep to read, by its number


def test_a_class_target_goes_through_the_analyzers_gate_before_its_module_is_imported(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 36, point 4: `path.py:Class` was imported without the check load_file applies to every other load; a file
    # the analyzer refuses (here a class without its `prompt`: PYC104) is refused before its module runs.
    (project / "answerer_mod.py").write_text(MODULE.replace("    @property\n    def prompt(self) -> str:\n"
                                                            "        return \"Answer the question in one word.\"\n", ""))
    code = main(["run", f"{project / 'answerer_mod.py'}:Answerer", "--input", str(project / "question.yaml"), "--trust"])
    err = capsys.readouterr().err
    assert code == 1 and "PYC104" in err and "fix them before running" in err
    assert not (project / "imported.marker").exists()
    with pytest.raises(cs.ContractError, match="fix them before running"):
        load_contract(project / "answerer_mod.py", name="Answerer", trust=True)
    assert not (project / "imported.marker").exists()
