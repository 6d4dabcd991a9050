"""Hostile files and inputs that used to hang, exhaust memory or crash: each bound, as a user meets it (issue 10, 1-6).

docs/security.md ("Limits") lists every bound with the test here that holds it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from contractstudio.analysis.check import check_text
from contractstudio.cli import main

SLOW_NAME = "a" * 40 + "!"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def agent_with_forbid_pattern(pattern: str) -> str:
    return textwrap.dedent(f"""\
        kind: agent
        name: slow
        tools:
          - name: "{SLOW_NAME}"
        policies:
          - id: must
            require: {{tool: "{SLOW_NAME}"}}
          - id: never
            forbid: {{tool_pattern: "{pattern}"}}
        """)


# ----------------------------------------------------------------- 1. regular expressions from files


def test_the_reported_tool_pattern_no_longer_hangs_the_analyzer() -> None:
    # `(a+)+` against 'aaa...!' ran for minutes under `re`; it does not match, so no finding.
    codes = [d.code for d in check_text(agent_with_forbid_pattern("(a+)+"), "a.agent.yaml").diagnostics]
    assert codes == []


def test_a_tool_pattern_that_backtracks_exponentially_is_stopped_and_reported() -> None:
    [d] = check_text(agent_with_forbid_pattern("(a|aa)+"), "a.agent.yaml").diagnostics
    assert (d.code, d.line, d.column) == ("YML006", 9, 28)
    assert "policy 'never': tool_pattern '(a|aa)+' was not checked: regular expressions took more than 1 s" in d.message


def test_a_tool_pattern_that_cannot_compile_in_time_is_refused() -> None:
    [d] = check_text(agent_with_forbid_pattern("(?:x{65535}){65535}"), "a.agent.yaml").diagnostics
    assert d.code == "SCH103"
    assert "counted repeats expand to more than 10,000 items" in d.message


# ----------------------------------------------------------------- 3. one regex budget per evaluation


def contract(post: str) -> str:
    return textwrap.dedent(f"""\
        kind: contract
        name: c
        prompt: Say ok.
        types:
          In: {{description: In, fields: {{text: {{type: str, description: T}}}}}}
          Out: {{description: Out, fields: {{ok: {{type: bool, description: B}}}}}}
        input: In
        output: Out
        on_failure: raise
        post:
          - assert: "{post}"
            message: no digits
        scenarios:
          - name: s
            input: {{text: hi}}
            responses: ['{{"ok": true}}']
            expect: {{successful: true}}
        """)


def test_the_regex_budget_bounds_all_searches_of_one_evaluation(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Each search takes a fraction of a second; 60 of them took 18 s when the limit was per search.
    path = tmp_path / "c.contract.yaml"
    path.write_text(contract("all(not matches('a'*2400 + c, '[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[0-9]') for c in 'x'*60)"))
    assert [d.code for d in check_text(path.read_text(), str(path)).diagnostics] == []
    code, out, _ = run(capsys, "test", str(path))
    assert code == 1
    assert "regular expressions took more than 1 s in this evaluation" in out


# ----------------------------------------------------------------- 2. check is linear in the number of documents


def many_documents(n: int) -> str:
    return "---\n".join(f"kind: tools\nname: t{i}\ndescription: d\ntools:\n  - name: f{i}\n    description: does f\n"
                        f"    params:\n      title: {{type: str, description: T}}\n" for i in range(n))


def test_the_secrets_scan_reads_a_many_document_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.analysis.rules import secrets

    looked_at: list[str] = []  # every text the YML007 rule searches for a token's shape (it never takes the whole file)

    def counting(text: str):
        looked_at.append(text)
        return token_in(text)

    token_in = secrets.token_in
    monkeypatch.setattr(secrets, "token_in", counting)
    text = many_documents(300)
    report = check_text(text, "many.tools.yaml")
    assert len(report.documents) == 300 and report.diagnostics == []
    assert sum(len(t) for t in looked_at) <= len(text)  # each scalar once: it was 300 times the text, once per document


class CountingText(str):
    """A file's text that counts the characters its whole-text methods scan."""

    scanned = 0

    def splitlines(self, keepends: bool = False) -> list[str]:  # type: ignore[override]
        self.scanned += len(self)
        return super().splitlines(keepends)

    def count(self, sub: str, start: int | None = None, end: int | None = None) -> int:  # type: ignore[override]
        self.scanned += len(self[start:end])
        return super().count(sub, start, end)


def contract_with_findings(i: int) -> str:
    # An unknown field in a multi-line expression: its position is computed from the text lines.
    return textwrap.dedent(f"""\
        kind: contract
        name: c{i}
        prompt: Answer.
        types:
          In: {{description: In, fields: {{text: {{type: str, description: T}}}}}}
          Out: {{description: Out, fields: {{ok: {{type: bool, description: B}}}}}}
        input: In
        output: Out
        on_failure: raise
        pre:
          - assert: "input.text != ''
              and input.txet != ''"
          - assert: input.tetx != ""
        """)


def test_finding_positions_split_a_many_document_file_into_lines_once() -> None:
    from contractstudio.analysis.check import analyze_source
    from contractstudio.reading.source import read_source

    source = read_source("---\n".join(contract_with_findings(i) for i in range(200)), "many.contract.yaml")
    text = source.text = CountingText(source.text)  # what the rules see (libyaml reads only exact str)
    report = analyze_source(source)
    assert [d.code for d in report.diagnostics].count("EXP201") == 400
    assert text.scanned <= 2 * len(text)  # it was once per finding


def test_recovering_the_documents_after_a_syntax_error_reads_the_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.reading import source

    build = source.Builder.build
    monkeypatch.setattr(source.Builder, "build", lambda self, text, first: build(self, str(text), first))  # exact str for libyaml
    text = CountingText(many_documents(300) + "bad: [\n")
    report = check_text(text, "many.tools.yaml")
    assert [d.code for d in report.diagnostics] == ["YML001"] and len(report.documents) == 299
    assert text.scanned <= 2 * len(text)  # it counted the lines before each document from the start of the file


# ----------------------------------------------------------------- 4. aliases measured in characters


def test_one_big_scalar_aliased_many_times_is_a_finding_at_check_and_refused_at_run(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # 100 KB aliased 20,000 times: 2 GB once expanded. `run` grew to 3.9 GB and never finished.
    text = contract("True").replace("    input: {text: hi}\n", "    input:\n      text: &big " + "x" * 100_000 + "\n"
                                    "      copies: [" + ", ".join(["*big"] * 20_000) + "]\n")
    path = tmp_path / "c.contract.yaml"
    path.write_text(text)
    [d] = [d for d in check_text(text, str(path)).diagnostics if d.severity == "error"]
    assert (d.code, d.line) == ("YML006", 17)
    assert d.message == "aliases expand this document by more than 10,000,000 characters"
    code, out, err = run(capsys, "run", str(path), "--scenario", "s")
    assert code == 1 and "YML006" in err and "Traceback" not in err


# ----------------------------------------------------------------- 5. `run --input` is read like documents


def strict_json(line: str) -> object:
    """json.loads that refuses NaN / Infinity, which are not JSON."""
    def refuse(token: str) -> object:
        raise ValueError(f"not JSON: {token}")

    return json.loads(line, parse_constant=refuse)


FLOAT_CONTRACT = textwrap.dedent("""\
    kind: contract
    name: f
    prompt: Say ok.
    types:
      In: {description: In, fields: {x: {type: float, description: X}, tag: {type: "str | None", default: null, description: T}}}
      Out: {description: Out, fields: {ok: {type: bool, description: B}}}
    input: In
    output: Out
    on_failure: raise
    scenarios:
      - name: s
        input: {x: 1.0}
        responses: ['{"ok": true}']
        expect: {successful: true}
    """)

BILLION_LAUGHS = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))


@pytest.mark.parametrize("text, message", [
    (BILLION_LAUGHS, "aliases expand this document by more than 200,000 nodes"),
    ("[" * 5000 + "]" * 5000, "the document nests deeper than 200 levels"),
    ("x: 1\n---\nx: 2\n", "the input holds 2 YAML documents; it must be one value"),
    ("x: [1,\n", "the input is not valid YAML or JSON"),
    ("x: !!python/object:os.system echo\n", "unsafe YAML tag"),
], ids=["billion-laughs", "5000-nested-lists", "two-documents", "syntax-error", "python-tag"])
def test_a_hostile_input_file_is_refused_with_a_message(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                         text: str, message: str) -> None:
    path = tmp_path / "f.contract.yaml"
    path.write_text(FLOAT_CONTRACT)
    data = tmp_path / "in.yaml"
    data.write_text(text)
    code, out, err = run(capsys, "run", str(path), "--input", str(data), "--scenario", "s")
    assert code == 2 and message in err and "Traceback" not in err
    assert err.startswith(f"contractstudio: error: {data}:")  # where in the input


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_non_finite_numbers_in_the_input_keep_the_trace_strict_json(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                     value: str) -> None:
    path = tmp_path / "f.contract.yaml"
    path.write_text(FLOAT_CONTRACT)
    data = tmp_path / "in.yaml"
    data.write_text(f"x: {value}\n")
    trace = tmp_path / "t.jsonl"
    code, out, err = run(capsys, "run", str(path), "--input", str(data), "--scenario", "s", "--trace", str(trace), "--json")
    assert code == 0 and "Traceback" not in err
    events = [strict_json(line) for line in trace.read_text().splitlines()]
    assert events[0]["value"] == {"x": {".nan": "NaN", ".inf": "Infinity", "-.inf": "-Infinity"}[value]}
    strict_json(out)


# ----------------------------------------------------------------- 6. huge integers, and a failed run keeps the old trace


INT_CONTRACT = textwrap.dedent("""\
    kind: contract
    name: n
    prompt: Give a number.
    types:
      In: {description: In, fields: {x: {type: int, description: X}}}
      Mid: {description: Mid, fields: {big: {type: int, description: B}}}
      Out: {description: Out, fields: {n: {type: int, description: N}}}
    input: In
    output: Out
    on_failure: fallback
    fallback: {n: "input.x"}
    post:
      - assert: output.n < 10
        message: "{output.n} is too big"
    scenarios:
      - name: s
        input: {x: 10}
        responses: ['{"n": 1}']
        expect: {successful: true}
    """)


@pytest.mark.parametrize("change, shown", [
    (('message: "{output.n} is too big"', 'message: "{input.x ** 5000} is too big"'),
     "(the message could not be rendered: power result is too large"),
    (("output: Out\n", "output: Out\nintermediate: Mid\nact: {assign: {big: \"input.x ** 5000\"}}\n"),
     "act.assign.big: power result is too large"),
    (('fallback: {n: "input.x"}', 'fallback: {n: "input.x ** 5000"}'), "fallback.n: power result is too large"),
    (("responses: ['{\"n\": 1}']", "responses: ['{\"n\": 1" + "0" * 5000 + "}']"), "a number is too long"),
], ids=["message-template", "act-assign", "fallback", "reply"])
def test_huge_integers_are_a_clear_failure_of_run_and_test(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          change: tuple[str, str], shown: str) -> None:
    text = INT_CONTRACT.replace(*change)
    if "fallback" in change[1] or "message" in change[1]:
        text = text.replace("responses: ['{\"n\": 1}']", "responses: ['{\"n\": 99}']")
    assert text != INT_CONTRACT
    path = tmp_path / "n.contract.yaml"
    path.write_text(text)
    trace = tmp_path / "t.jsonl"
    code, out, err = run(capsys, "run", str(path), "--scenario", "s", "--trace", str(trace), "--json")
    assert code == 1 and "Traceback" not in err and "internal error" not in err, err
    assert shown in out + err
    for line in trace.read_text().splitlines() if trace.exists() else []:
        strict_json(line)
    code, out, err = run(capsys, "test", str(path))
    assert code == 1 and ("FAILED" in out or "ERROR" in out) and "internal error" not in err


def test_a_reply_with_a_huge_integer_is_an_invalid_reply(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from openai_server import OpenAIServer

    path = tmp_path / "n.contract.yaml"
    path.write_text(INT_CONTRACT.replace("on_failure: fallback", "on_failure: raise"))
    data = tmp_path / "in.json"
    data.write_text('{"x": 1}')
    trace = tmp_path / "t.jsonl"
    with OpenAIServer(['{"n": 1' + "0" * 5000 + "}"] * 3) as server:
        code, out, err = run(capsys, "run", str(path), "--input", str(data), "--model", "openai/test-model",
                             "--api-base", server.base_url, "--no-wait", "--trace", str(trace))
    assert code == 1 and "internal error" not in err
    assert "the reply is not valid JSON: a number is too long (more than 4,300 digits)" in out
    for line in trace.read_text().splitlines():
        strict_json(line)


def test_a_run_that_fails_to_write_its_trace_keeps_the_old_trace(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.runtime.trace import Trace

    path = tmp_path / "f.contract.yaml"
    path.write_text(FLOAT_CONTRACT)
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"seq": 0, "type": "old"}\n')

    def broken(self: Trace) -> str:
        raise RuntimeError("cannot serialize")

    monkeypatch.setattr(Trace, "to_jsonl", broken)
    code, _, err = run(capsys, "run", str(path), "--scenario", "s", "--trace", str(trace))
    assert code == 3 and "internal error" in err
    assert trace.read_text() == '{"seq": 0, "type": "old"}\n'


# ----------------------------------------------------------------- 1. type patterns that the linear engine cannot run


SLOW_TYPE = textwrap.dedent("""\
    kind: contract
    name: p
    prompt: Give a name.
    types:
      In: {description: In, fields: {x: {type: str, description: X}}}
      Out: {description: Out, fields: {name: {type: str, pattern: "^(?=a)(a|aa)+$", description: N}}}
    input: In
    output: Out
    on_failure: raise
    scenarios:
      - name: s
        input: {x: hi}
        responses: ['{"name": "SLOW"}']
        expect: {successful: false}
    """).replace("SLOW", SLOW_NAME)


def test_a_look_around_type_pattern_is_matched_within_the_budget_at_check_and_at_run(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Python's `re` runs look-around patterns pydantic's linear engine cannot: it ran for minutes, holding the GIL.
    path = tmp_path / "p.contract.yaml"
    path.write_text(SLOW_TYPE)
    assert [d.code for d in check_text(SLOW_TYPE, str(path)).diagnostics if d.severity == "error"] == []
    code, out, err = run(capsys, "run", str(path), "--scenario", "s")
    assert code == 1 and "internal error" not in err
    assert "output.name" in out and "regular expressions took more than 1 s" in out


def test_a_look_around_type_pattern_the_bounded_matcher_cannot_compile_in_time_is_a_finding() -> None:
    text = SLOW_TYPE.replace("^(?=a)(a|aa)+$", "^(?=a)(?:x{65535}){65535}")
    [d] = [d for d in check_text(text, "p.contract.yaml").diagnostics if d.severity == "error"]
    assert (d.code, d.line) == ("SCH103", 6)
    assert "pattern cannot be enforced: the regular expression repeats too much" in d.message


def _extends_amplifier(folder: Path, bases: int, steps: int, entries: int) -> Path:
    """A chain of bases, each extending the last, and one file of many entries each extending the whole chain."""
    (folder / ".git").mkdir()
    step = "    - {{id: s{i}, action: call_model, prompt: p, next: s{n}, note: {pad}}}\n"
    for b in range(bases):
        body = "".join(step.format(i=f"{b}_{i}", n=f"{b}_{i + 1}", pad="x" * 60) for i in range(steps))
        extends = f"  extends: b{b - 1}.yaml\n" if b else ""
        (folder / f"b{b}.yaml").write_text(f"YAMLpipeline:\n  name: b{b}\n{extends}"
                                           "  settings: {behavior_version: '1', compat_mode: locked, entry_step_id: s0_0}\n"
                                           f"  steps:\n{body}")
    child = "".join(f"  - name: e{e}\n    extends: b{bases - 1}.yaml\n" for e in range(entries))
    main_file = folder / "many.yaml"
    main_file.write_text(f"pipelines:\n{child}")
    return main_file


def test_extends_amplification_is_bounded_in_characters_and_reported_at_the_entry_that_crosses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.analysis.check import check_file
    from contractstudio.reading.dialects import localai_rag

    # Scaled down: 5 bases of 40 steps (~4 KB each) and 300 entries inherit ~60 MB of merged pipelines without a
    # bound (each entry merges the whole chain again); the bound is scaled down with them.
    monkeypatch.setattr(localai_rag, "MAX_MERGED_CHARS", 200_000)
    file = _extends_amplifier(tmp_path, bases=5, steps=40, entries=300)
    report = check_file(file)
    found = report.diagnostics
    [bound] = [d for d in found if d.code == "YML006"]
    assert bound.message == "the pipelines of this file inherit more than 200,000 characters through extends:"
    lines = file.read_text().splitlines()
    assert lines[bound.line - 1].strip() == "extends: b4.yaml" and bound.file == str(file)
    crossed = (bound.line - 3) // 2  # the entry that crossed it
    steps = [len(d.doc.data.get("steps") or []) for d in report.documents]
    assert 0 < crossed < 300 and steps == [5 * 40] * crossed + [0] * (300 - crossed)  # merged whole before it, not after
