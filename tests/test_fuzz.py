"""Fuzzing with hypothesis, never an internal error: the analyzer (mutated samples and fixtures),
`run --input` data (mutated inputs, hostile YAML) and trace reading (mutated sample traces).

A short run is part of the normal suite; the long run (100,000 inputs by default) is on demand:
    .venv/bin/python -m pytest -m fuzz tests/test_fuzz.py          # FUZZ_EXAMPLES=... to change the count
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, FUZZ_SEED, SAMPLES
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from contractstudio.analysis.check import check_text

SEEDS = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(SAMPLES.rglob("*.yaml")) + sorted(FIXTURES.rglob("*.yaml"))]
SEEDS = [s for s in SEEDS if len(s) < 20_000] or ["kind: tools\nname: t\ntools: []\n"]
YAML_CHARS = list("{}[]:,-?&*!|>'\"#%@`~ \n\t0123456789abcxyz_.") + ["\n  ", ": ", "- ", "kind: ", "---\n", "{{", "}}", "**", "__"]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 4))
        n = len(text)
        i = draw(st.integers(0, n))
        if op == 0:  # insert YAML-significant junk
            text = text[:i] + "".join(draw(st.lists(st.sampled_from(YAML_CHARS), min_size=1, max_size=8))) + text[i:]
        elif op == 1:  # delete a range
            j = draw(st.integers(i, min(n, i + 40)))
            text = text[:i] + text[j:]
        elif op == 2:  # duplicate or drop a line
            lines = text.splitlines(keepends=True)
            if lines:
                k = draw(st.integers(0, len(lines) - 1))
                lines.insert(k, lines[k]) if draw(st.booleans()) else lines.pop(k)
                text = "".join(lines)
        elif op == 3:  # replace a word-ish run with arbitrary text
            j = draw(st.integers(i, min(n, i + 12)))
            text = text[:i] + draw(st.text(max_size=12)) + text[j:]
        else:  # splice another seed's tail
            other = draw(st.sampled_from(SEEDS))
            text = text[:i] + other[draw(st.integers(0, len(other))):]
    return text


def analyze(text: str) -> None:
    report = check_text(text, "fuzz.yaml")
    for d in report.diagnostics:
        assert d.line >= 1 and d.column >= 1 and d.end_line >= d.line
        assert d.message


_COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=False)
# The short runs are in every CI run, each with the run's seed (tests/conftest.py prints it); the long ones are
# for `pytest -m fuzz`.


@seed(FUZZ_SEED)
@settings(max_examples=300, **_COMMON)
@given(mutated())
def test_fuzz_short(text: str) -> None:
    analyze(text)


@pytest.mark.fuzz
@pytest.mark.timeout(0)
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100000")), **_COMMON)
@given(mutated())
def test_fuzz_long(text: str) -> None:
    analyze(text)


# ----------------------------------------------------------------- `run --input` data


def _strict(line: str) -> object:
    def refuse(token: str) -> object:
        raise AssertionError(f"{token} is not JSON")

    return json.loads(line, parse_constant=refuse)


QA = SAMPLES / "multidoc_qa.contract.yaml"
INPUT_SEEDS = [
    '{"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}',
    "query: Why vectors?\ndocuments:\n  - {id: A1, content: Vector databases store embeddings.}\n",
    "query: &q Why vectors?\ndocuments: [{id: *q, content: *q}]\n",
    "query: .nan\ndocuments: [{id: .inf, content: -.inf}]\n",
    "query: " + "9" * 5000 + "\ndocuments: []\n",
    "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
    "[" * 250 + "]" * 250,
    "- " * 250 + "x\n",
    "query: !!python/object:os.system x\n",
    "query: yes\ndocuments: ~\n",
]
INPUT_CHARS = YAML_CHARS + ["&a ", "*a", ".nan", ".inf", "!!str ", "!!int ", "[[[", "]]]", "\\ud800", '"\\ud800"', "1e999"]


@st.composite
def input_texts(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(INPUT_SEEDS))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:i] + "".join(draw(st.lists(st.sampled_from(INPUT_CHARS), min_size=1, max_size=6))) + text[i:]
        else:
            text = text[:i] + text[draw(st.integers(i, min(len(text), i + 20))):]
    return text


_CONTRACT: list[object] = []


def run_input(text: str) -> None:
    """An input is refused with a ValueError, or the call runs to its end with a strict-JSON trace and --json output."""
    from contractstudio.reading.source import read_value
    from contractstudio.runtime.api import Contract, load_all
    from contractstudio.runtime.call_state import CallOptions
    from contractstudio.runtime.models import ReplayModel
    from contractstudio.runtime.session import Session
    from contractstudio.runtime.trace import jsonable

    try:
        value = read_value(text, "fuzz.yaml")
    except ValueError as err:
        assert str(err).startswith("fuzz.yaml:")
        return
    if not _CONTRACT:
        _CONTRACT.append(next(c for c in load_all(QA) if isinstance(c, Contract)))
    contract: Any = _CONTRACT[0]
    replay = ReplayModel(SAMPLES / "traces" / "multidoc_qa.answered-first-time.jsonl")
    session = Session(contract.plan, value, replay, CallOptions(wait=False))
    while session.step() is not None:
        pass
    for line in session.trace.to_jsonl().splitlines():
        _strict(line)
    result = session.result
    assert result is not None
    json.dumps(jsonable({"output": result.output_data, "errors": result.errors}), allow_nan=False)


@seed(FUZZ_SEED)
@settings(max_examples=100, **_COMMON)
@given(input_texts())
def test_fuzz_inputs_short(text: str) -> None:
    run_input(text)


@pytest.mark.fuzz
@pytest.mark.timeout(0)
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100000")) // 10, **_COMMON)
@given(input_texts())
def test_fuzz_inputs_long(text: str) -> None:
    run_input(text)


# ----------------------------------------------------------------- reading traces


TRACE_SEEDS = [p.read_text(encoding="utf-8") for p in sorted((SAMPLES / "traces").glob("*.jsonl"))]
JSON_CHARS = list('{}[]:,"\\ 0123456789.eE-+') + ["NaN", "Infinity", "null", "true", '"seq"', '"t"', '"type"', "9" * 5000,
                                                  "[" * 2000, '"\\ud800"', "\n", "\u2028"]


@st.composite
def trace_texts(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(TRACE_SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.integers(0, 2))
        if op == 0:
            text = text[:i] + "".join(draw(st.lists(st.sampled_from(JSON_CHARS), min_size=1, max_size=4))) + text[i:]
        elif op == 1:
            text = text[:i] + text[draw(st.integers(i, min(len(text), i + 60))):]
        else:
            text = text[:i] + draw(st.text(max_size=8)) + text[i:]
    return text


def read_trace(text: str) -> None:
    """A trace file is read, or refused with a ValueError naming its line; a readable one replays to its end."""
    from contractstudio.commands.run import recorded_input
    from contractstudio.runtime.api import Contract, load_all
    from contractstudio.runtime.call_state import CallOptions
    from contractstudio.runtime.models import ReplayModel
    from contractstudio.runtime.session import Session
    from contractstudio.runtime.trace import Trace

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            trace = Trace.read(path)
        except ValueError as err:
            assert str(err).startswith(f"{path}:")
            return
        except UnicodeDecodeError:
            return
        for line in trace.to_jsonl().splitlines():
            _strict(line)
        value = recorded_input(str(path))
        if not _CONTRACT:
            _CONTRACT.append(next(c for c in load_all(QA) if isinstance(c, Contract)))
        contract: Any = _CONTRACT[0]
        session = Session(contract.plan, value, ReplayModel(trace), CallOptions(wait=False))
        while session.step() is not None:
            pass
        for line in session.trace.to_jsonl().splitlines():
            _strict(line)


@seed(FUZZ_SEED)
@settings(max_examples=100, **_COMMON)
@given(trace_texts())
def test_fuzz_traces_short(text: str) -> None:
    read_trace(text)


@pytest.mark.fuzz
@pytest.mark.timeout(0)
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100000")) // 10, **_COMMON)
@given(trace_texts())
def test_fuzz_traces_long(text: str) -> None:
    read_trace(text)


# ----------------------------------------------------------------- the studio's highlighter never sees text that crashes it


HIGHLIGHTER = """
import json, sys
from textual._tree_sitter import get_language
from textual.document._syntax_aware_document import SyntaxAwareDocument
for line in sys.stdin:
    SyntaxAwareDocument(json.loads(line), get_language("yaml"))
    print("ok", flush=True)
"""
BLOCK_TOKENS = ["- ", "? ", ": ", "-", "?", ":", "k: ", "&a ", "!!map ", " ", "  ", "    ", "\t", "[", "{", "|", ">", "x", "\n"]


@st.composite
def deep_texts(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 60))):
        indent = draw(st.integers(0, 199))
        lines.append(" " * indent + "".join(draw(st.lists(st.sampled_from(BLOCK_TOKENS), max_size=120))))
    return "\n".join(lines) + "\n"


_WORKER: list[Any] = []


def highlights_without_crashing(text: str) -> None:
    """Text the editor's guard lets through is highlighted by tree-sitter (in a worker process: a crash kills it)."""
    import subprocess
    import sys

    from contractstudio.studio.widgets.editor import MAX_HIGHLIGHT_INDENT, block_indent

    if block_indent(text) > MAX_HIGHLIGHT_INDENT:
        return  # the studio shows it as plain text
    if not _WORKER:
        _WORKER.append(subprocess.Popen([sys.executable, "-c", HIGHLIGHTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    worker = _WORKER[0]
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.write(json.dumps(text) + "\n")
    worker.stdin.flush()
    answer = worker.stdout.readline()
    if answer.strip() != "ok":
        _WORKER.clear()
        raise AssertionError(f"tree-sitter crashed (exit {worker.wait()}) on a text the guard lets through: {text!r}")


@seed(FUZZ_SEED)
@settings(max_examples=10, **_COMMON)  # each example is highlighted in a worker: ~0.3 s
@given(deep_texts())
def test_fuzz_highlighter_guard_short(text: str) -> None:
    highlights_without_crashing(text)


@pytest.mark.fuzz
@pytest.mark.timeout(0)
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100000")) // 10, **_COMMON)
@given(deep_texts())
def test_fuzz_highlighter_guard_long(text: str) -> None:
    highlights_without_crashing(text)
