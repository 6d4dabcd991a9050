"""Terminal escape injection: text from a file or a model never reaches the terminal raw.

Keys, names, scenario names, step ids and model replies may hold ESC sequences (a title change,
a screen clear, an OSC 52 clipboard write), C1 controls, carriage returns or bidi overrides.
`check` (text and github), `test`, `run`, `graph` and `simulate` show them as visible escapes,
through the one function contractstudio.safe_text.printable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contractstudio.cli import main
from contractstudio.safe_text import printable

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
RAG = ROOT / "samples" / "rag_router.pipeline.yaml"
# ESC ] 52 (clipboard write), ESC [ 2 J (clear screen), ESC ] 0 (title), CSI as one C1 byte, CR, RLO
OSC52, CLEAR, TITLE = "\x1b]52;c;cHduZWQ=\x07", "\x1b[2J", "\x1b]0;pwned\x07"
C1_CSI, RLO = "\x9b31m", "\u202e"
# In a YAML double-quoted string, \e is ESC, \a BEL, \x9b the C1 CSI, \u202e the RLO and \r CR.
YAML_NASTY = r"\e]52;c;cHduZWQ=\a\e[2J\e]0;pwned\a\x9b31m\u202e\r"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def clean(text: str) -> None:
    found = RAW.findall(text)
    assert not found, f"raw control characters reach the terminal: {found!r}"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def test_printable_shows_controls_as_escapes() -> None:
    assert printable(f"a{OSC52}b") == "a\\x1b]52;c;cHduZWQ=\\x07b"
    assert printable(f"{C1_CSI}{RLO}x\r\n") == "\\x9b31m\\u202ex\\r\\n"
    assert printable("line one\n\tline two\r", lines=True) == "line one\n\tline two\\r"
    assert printable("plain, ünïcode ✓") == "plain, ünïcode ✓"


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_check_escapes_names_from_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    path = tmp_path / "nasty.contract.yaml"
    path.write_text(QA.read_text().replace("remedy:\n", f'"{YAML_NASTY}": 1\nremedy:\n'))
    code, shown = run(capsys, "check", str(path), "--format", fmt, "--fail-level", "warning")
    assert code == 1 and "SCH102" in shown and "\\x1b]52" in shown
    clean(shown)


def test_check_escapes_bidi_controls_written_raw_in_a_source_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # YAML refuses raw ESC and C1 bytes, but takes bidi overrides as printable: the excerpt of the line must not
    path = tmp_path / "raw.contract.yaml"
    path.write_text(QA.read_text().replace("remedy:\n", f"admin{RLO}\u2066nimda: 1\nremedy:\n"))
    code, shown = run(capsys, "check", str(path), "--fail-level", "warning")
    assert code == 1 and "SCH102" in shown and "admin\\u202e\\u2066nimda: 1" in shown
    caret = next(line for line in shown.splitlines() if line.strip().startswith("| ^"))
    assert caret.index("^") == next(line for line in shown.splitlines() if "admin" in line and "|" in line).index("admin")
    clean(shown)


def test_test_escapes_scenario_and_contract_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "named.contract.yaml"
    path.write_text(QA.read_text().replace("  - name: first-time", f'  - name: "first{YAML_NASTY}"'))
    code, shown = run(capsys, "test", str(path))
    assert code == 0 and "3 passed" in shown and "first\\x1b]52" in shown
    clean(shown)


def test_run_escapes_a_reply_with_raw_controls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from contractstudio.runtime.trace import Trace

    raw = "Sure!" + OSC52 + CLEAR + C1_CSI + RLO  # raw controls: not JSON, shown in the reply preview
    good = ('{"answer": "They store embeddings.\\u001b]52;c;cHduZWQ=\\u0007\\u009b31m\\u202e", "evidence": '
            '[{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}')  # controls in the output
    trace = tmp_path / "recorded.jsonl"
    Trace.from_dicts([
        {"seq": 1, "t": 0.0, "stage": "input", "type": "stage_start", "value": {"query": "q", "documents": [{"id": "A1", "content": "t"}]}},
        {"seq": 2, "t": 0.1, "stage": "generate", "type": "llm_request", "messages": []},
        {"seq": 3, "t": 0.2, "stage": "generate", "type": "llm_response", "text": raw},
        {"seq": 4, "t": 0.3, "stage": "generate", "type": "llm_request", "messages": []},
        {"seq": 5, "t": 0.4, "stage": "generate", "type": "llm_response", "text": good},
    ]).write(trace)
    code, shown = run(capsys, "run", str(QA), "--replay", str(trace), "--no-wait")
    assert code == 0 and "Sure!\\x1b]52" in shown and "embeddings.\\u001b]52" in shown, shown
    clean(shown)
    code, shown = run(capsys, "run", str(QA), "--replay", str(trace), "--no-wait", "--json")
    assert code == 0
    clean(shown)


def test_graph_and_simulate_escape_step_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nasty.pipeline.yaml"
    path.write_text(RAG.read_text().replace("id: persist", f'id: "persist{YAML_NASTY}"')
                    .replace("next: persist", f'next: "persist{YAML_NASTY}"'))
    for fmt in ("text", "mermaid", "dot"):
        code, shown = run(capsys, "graph", str(path), "--format", fmt)
        assert "persist" in shown
        clean(shown)
    code, shown = run(capsys, "simulate", str(path), "--reply", f"[DIRECT:] hi{OSC52}")
    assert "persist" in shown
    clean(shown)


def test_a_row_value_of_a_results_file_is_escaped_by_eval_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    contract, rows = str(ROOT / "samples" / "multidoc_qa.contract.yaml"), str(ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl")
    results = tmp_path / f"r{TITLE}.jsonl"  # the file's name and its row values are both printed in the refusal
    assert main(["eval", contract, "--data", rows, "--scripted", "--out", str(results), "--quiet"]) == 0
    first = json.loads(results.read_text().splitlines()[0])
    results.write_text(json.dumps({**first, "row": TITLE + CLEAR, "contract_sha": "0" * 16}) + "\n")
    capsys.readouterr()
    code, out = run(capsys, "eval", contract, "--data", rows, "--scripted", "--out", str(results), "--resume", "--quiet")
    assert code == 2 and "\\x1b]0;pwned" in out
    clean(out)


@pytest.mark.parametrize("argv", [["graph", "F"], ["export", "F"], ["convert", "F", "--to", "contractstudio"]])
def test_graph_export_and_convert_escape_a_file_name(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    named = tmp_path / f"a{TITLE}{CLEAR}.yaml"
    for text in ("kind: contract\nname: [\n", "kind: tools\nname: t\ntools: []\n"):  # refused; not a pipeline (or written)
        named.write_text(text)
        _, out = run(capsys, *[str(named) if a == "F" else a for a in argv])
        assert "\\x1b]0;pwned" in out or argv[0] == "export"
        clean(out)
    missing = tmp_path / f"gone{TITLE}.yaml"
    _, out = run(capsys, *[str(missing) if a == "F" else a for a in argv])
    clean(out)


def test_convert_escapes_the_source_name_in_its_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    import yaml

    source = tmp_path / "x.yaml\nkind: contract\npython: evil:hook\n#.yaml"
    shutil.copy(ROOT / "samples" / "localai_rag" / "pipelines" / "repo_qa.yaml", source)
    base = ROOT / "samples" / "localai_rag" / "pipelines" / "base"
    shutil.copytree(base, tmp_path / "base")
    (tmp_path / ".git").mkdir()
    out = tmp_path / "out.yaml"
    assert main(["convert", str(source), "--to", "contractstudio", "-o", str(out)]) == 0
    written = out.read_text()
    escaped = "x.yaml\\nkind: contract\\npython: evil:hook\\n#.yaml"
    assert written.splitlines()[0] == f"# converted from {escaped} (localai-rag) by contractstudio convert"
    assert "python" not in yaml.safe_load(written.split("\n", 1)[1].split("---")[0])


def test_a_folder_name_with_escapes_is_escaped_when_check_finds_nothing_in_it(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / f"d{TITLE}"
    folder.mkdir()
    _, out = run(capsys, "check", str(folder))
    assert "\\x1b]0;pwned" in out
    clean(out)


# ----------------------------------------------------------------- line feeds: a name never starts a line of its own
# A name holding "\n::error file=...::" would give GitHub Actions a workflow command of the file's choosing.
FORGED = "\n::error file=app.py,line=1::forged by the file"


def no_forged_line(text: str) -> None:
    assert not [line for line in text.splitlines() if line.lstrip().startswith("::")], text
    assert "\\n::error file=app.py" in text  # the name is there, its line feed shown as an escape


def test_eval_baseline_and_summary_show_a_dataset_id_and_a_message_on_one_line(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import json

    contract = tmp_path / "c.contract.yaml"
    contract.write_text(QA.read_text().replace('"Coverage score {output.coverage_score:.2f} is below the minimum 0.55."',
                                               json.dumps("low" + FORGED + " {output.coverage_score}")))
    good = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
    low = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'

    def rows(replies: list[str]) -> Path:
        path = tmp_path / f"rows{len(replies)}.jsonl"
        path.write_text(json.dumps({"id": "r1" + FORGED, "input": {"query": "q", "documents": [{"id": "A1", "content": "t"}]},
                                    "replies": replies}) + "\n")
        return path

    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    assert main(["eval", str(contract), "--data", str(rows([good])), "--scripted", "--out", str(before), "--quiet"]) == 0
    capsys.readouterr()
    code, out = run(capsys, "eval", str(contract), "--data", str(rows([low, low, low])), "--scripted", "--out", str(after),
                    "--baseline", str(before), "--quiet")
    assert code == 0 and "flipped rows: 0 now successful, 1 now failing" in out and "(id r1\\n::error" in out
    assert "post[0]: low\\n::error" in out  # the summary's failing condition, its message on one line
    no_forged_line(out)


def test_run_scenario_usage_error_shows_contract_and_scenario_names_on_one_line(tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import json

    path = tmp_path / "named.contract.yaml"
    path.write_text(QA.read_text().replace("name: qa\n", f"name: {json.dumps('qa' + FORGED)}\n", 1)
                    .replace("  - name: first-time", f"  - name: {json.dumps('first' + FORGED)}"))
    code, out = run(capsys, "run", str(path), "--scenario", "nope" + FORGED)
    assert code == 2 and "has no scenario" in out
    no_forged_line(out)
    assert out.count("\\n::error file=app.py") == 3  # the contract's name, the scenario asked for, the file's scenario


def test_graph_and_simulate_show_a_step_id_on_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    path = tmp_path / "lines.pipeline.yaml"
    path.write_text(RAG.read_text().replace("id: persist", f"id: {json.dumps('persist' + FORGED)}")
                    .replace("next: persist", f"next: {json.dumps('persist' + FORGED)}"))
    code, out = run(capsys, "graph", str(path))
    assert "persist" in out
    no_forged_line(out)
    code, out = run(capsys, "simulate", str(path), "--reply", "[DIRECT:] hi")
    assert "persist" in out
    no_forged_line(out)


def test_eval_resume_refusal_and_a_pipeline_summary_show_names_on_one_line(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import json

    contract, rows = str(ROOT / "samples" / "multidoc_qa.contract.yaml"), str(ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl")
    results = tmp_path / f"r{FORGED}.jsonl"  # a usage error quotes the file's name
    assert main(["eval", contract, "--data", rows, "--scripted", "--out", str(results), "--quiet"]) == 0
    first = json.loads(results.read_text().splitlines()[0])
    results.write_text(json.dumps({**first, "row": "one"}) + "\n")
    capsys.readouterr()
    code, out = run(capsys, "eval", contract, "--data", rows, "--scripted", "--out", str(results), "--resume", "--quiet")
    assert code == 2
    no_forged_line(out)
    # a pipeline's eval summary lists the paths its rows took, by step id
    pipeline = tmp_path / "lines.pipeline.yaml"
    pipeline.write_text(RAG.read_text().replace("id: persist", f"id: {json.dumps('persist' + FORGED)}")
                        .replace("next: persist", f"next: {json.dumps('persist' + FORGED)}"))
    code, out = run(capsys, "eval", str(pipeline), "--data", str(ROOT / "samples" / "eval" / "rag_router.rows.jsonl"), "--quiet")
    assert "paths:" in out
    no_forged_line(out)
