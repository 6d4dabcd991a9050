"""No input makes `check` print a traceback: random bytes, truncated and shuffled samples, YAML bombs."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, SAMPLES

from contractstudio.analysis.check import check_text
from contractstudio.cli import main


def corpus() -> list[str]:
    files = sorted(SAMPLES.rglob("*.yaml")) + sorted(FIXTURES.rglob("*.yaml"))
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]


def mutations(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    texts = corpus()
    out: list[str] = []
    for _ in range(count):
        text = rng.choice(texts)
        lines = text.splitlines(keepends=True)
        how = rng.randrange(5)
        if how == 0:  # truncated at any character
            out.append(text[: rng.randrange(len(text) + 1)])
        elif how == 1:  # lines shuffled
            rng.shuffle(lines)
            out.append("".join(lines))
        elif how == 2:  # random printable junk spliced in
            i = rng.randrange(len(text) + 1)
            junk = "".join(rng.choice("{}[]:,-&*!|>'\"#%@` \n\tkey0") for _ in range(rng.randrange(1, 30)))
            out.append(text[:i] + junk + text[i:])
        elif how == 3:  # a line's indentation changed
            if lines:
                j = rng.randrange(len(lines))
                lines[j] = " " * rng.randrange(6) + lines[j].lstrip()
            out.append("".join(lines))
        else:  # two samples' lines interleaved
            other = rng.choice(texts).splitlines(keepends=True)
            out.append("".join(a + b for a, b in zip(lines, other, strict=False)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_mutated_samples_never_raise(seed: int) -> None:
    for text in mutations(seed, 150):
        report = check_text(text, "mutant.yaml")
        for d in report.diagnostics:
            assert d.line >= 1 and d.column >= 1, d


def test_random_bytes_give_valid_json_and_no_traceback(tmp_path: Path) -> None:
    rng = random.Random(7)
    paths = []
    for i in range(12):
        p = tmp_path / f"junk{i}.yaml"
        p.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))))
        paths.append(str(p))
    proc = subprocess.run([sys.executable, "-m", "contractstudio", "check", "--format", "json", *paths],
                          capture_output=True, text=True, cwd=ROOT)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.returncode in (0, 1)
    data = json.loads(proc.stdout)
    assert data["summary"]["files"] == 12


@pytest.mark.parametrize(
    "text, code",
    [
        ("\ufeffkind: tools\nname: bom\ntools: []\n", None),
        ("kind: tools\nname: x\ntools: []\ndescription: " + "a" * 2_000_000 + "\n", None),
        ("kind: agent\nname: a\ntasks: [{id: t, oracle: functional, llm_calls: 9" + "9" * 6000 + "}]\n", "SCH103"),
        ("kind: tools\nname: x\x00\n", "YML001"),
        ("- just\n- a list\n", "YML003"),
        ("", None),
        ("kind: tools\nname: x\ntools: []\n" + "x: " + "[" * 5000 + "]" * 5000 + "\n", "YML006"),
    ],
    ids=["bom", "huge-scalar", "huge-int", "nul", "not-a-mapping", "empty", "deep-flow"],
)
def test_hostile_yaml_is_a_clear_diagnostic(text: str, code: str | None) -> None:
    report = check_text(text, "hostile.yaml")
    codes = {d.code for d in report.diagnostics}
    if code is None:
        assert not [d for d in report.diagnostics if d.severity == "error"], report.diagnostics
    else:
        assert code in codes


def test_unreadable_and_non_utf8_files_are_diagnostics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "latin1.contract.yaml"
    p.write_bytes("kind: tools\nname: caf\xe9\n".encode("latin-1"))
    assert main(["check", str(p)]) == 1
    out = capsys.readouterr().out
    assert "YML001" in out and "not UTF-8" in out
