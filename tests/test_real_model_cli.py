"""The command line against a real model (issue 33, point 5): `run`, `eval` (the local engine and two worker
processes) and `test` of a scenario recorded from a live call, each a process as a user starts it, at
llama-cpp-python's server with SmolLM2-135M-Instruct on loopback (tests/real_model.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from real_model import RealServer

pytestmark = [pytest.mark.real_model, pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.xdist_group("real_model")]

SAMPLES = Path(__file__).parent.parent / "samples" / "local"
SENTIMENT = SAMPLES / "sentiment.contract.yaml"
ROWS = SAMPLES / "reviews.rows.jsonl"


def cli(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """contractstudio as a user runs it (isolated: never imports from the folder it runs in)."""
    return subprocess.run([sys.executable, "-I", "-m", "contractstudio", *args], input=stdin, capture_output=True,
                          text=True, timeout=400, check=False, cwd=cwd)


def test_real_run_of_the_sentiment_contract_prints_the_models_reply_and_its_tokens(real_server: RealServer) -> None:
    done = cli("run", str(SENTIMENT), "--input", "-", "--api-base", real_server.api_base,
               stdin='{"text": "I love this phone"}')
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "review_sentiment: openai/smollm2" in out
    assert "-> openai/smollm2 (generate" in out  # the request, and the reply with the server's own token counts
    reply = next(line for line in out.splitlines() if line.strip().startswith("<- "))
    prompt_tokens, completion_tokens = (int(n) for n in reply.split(" chars, ")[1].split(" tokens")[0].split("+"))
    assert prompt_tokens > 0 and completion_tokens > 0
    assert "successful:" in out
    output = json.loads(out.split("output:\n", 1)[1].split("\n\n", 1)[0])
    assert output["label"] in ("pos", "neg") and 0 < len(output["reason"]) <= 40


@pytest.mark.parametrize("workers", ["1", "2"])
def test_real_eval_over_the_bundled_reviews(real_server: RealServer, tmp_path: Path, workers: str) -> None:
    data = tmp_path / "reviews.rows.jsonl"
    data.write_text("".join(ROWS.read_text().splitlines(keepends=True)[:4]))
    out = tmp_path / "results.jsonl"
    done = cli("eval", str(SENTIMENT), "--data", str(data), "--api-base", real_server.api_base, "--no-cache",
               "--concurrency", "2", "--workers", workers, "--out", str(out), "--json", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["rows"] == 4 and summary["successful"] >= 3, summary
    assert summary["tokens"]["total"] > 0  # the server's usage, summed
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in records) == ["r01", "r02", "r03", "r04"]
    assert all(r["output"]["label"] in ("pos", "neg") for r in records if r["successful"])


def test_real_live_call_saved_as_a_scenario_passes_contractstudio_test_offline(real_server: RealServer,
                                                                                 tmp_path: Path) -> None:
    contract = tmp_path / "sentiment.contract.yaml"
    shutil.copy(SENTIMENT, contract)
    written = contract.read_text()
    done = cli("run", str(contract), "--input", "-", "--api-base", real_server.api_base, "--save-scenario", "phone-love",
               stdin='{"text": "I love this phone"}')
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"scenario 'phone-love' added to {contract}" in done.stdout
    text = contract.read_text()
    assert text.startswith(written)  # the file as written, the scenario after it
    offline = cli("test", str(contract))  # the scripted model: the recorded replies, no request to the server
    assert offline.returncode == 0, offline.stdout + offline.stderr
    assert "review_sentiment::phone-love PASSED" in offline.stdout and "1 passed, 0 failed" in offline.stdout
    check = cli("check", str(contract))
    assert check.returncode == 0, check.stdout + check.stderr  # the edited file is still a clean document
