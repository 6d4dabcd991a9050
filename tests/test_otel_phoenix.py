"""A real receiver: Arize Phoenix started on loopback (its own environment, .venv-phoenix: scripts/phoenix.sh), spans
sent to it over OTLP/HTTP by `run --otlp`, read back through Phoenix's own REST API, then that export imported and
replayed. The rest of the suite uses the SDK's in-memory exporter (tests/test_otel*.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PHOENIX = ROOT / ".venv-phoenix" / "bin" / "phoenix"
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
RECORDED = ROOT / "samples" / "traces" / "multidoc_qa.remedied-after-low-coverage.jsonl"

# Outside CI a machine without Phoenix skips this; CI installs it (scripts/test.sh runs scripts/phoenix.sh beside the
# tests, and this test waits for that install) and never skips.
pytestmark = [pytest.mark.skipif(not PHOENIX.exists() and os.environ.get("CI") != "true"
                                 and not os.environ.get("CONTRACTSTUDIO_PHOENIX_INSTALL"),
                                 reason="Phoenix is not installed (bash scripts/phoenix.sh)"),
              pytest.mark.xdist_group("phoenix"), pytest.mark.timeout(1500)]  # with the wait for its install


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:  # our own loopback server
        return json.load(response)


def wait_for_the_install() -> None:
    """scripts/test.sh installs Phoenix beside the tests (only this test needs it): wait for that install's end, and
    fail with its output when it failed. Run alone, Phoenix is installed already (bash scripts/phoenix.sh)."""
    status = os.environ.get("CONTRACTSTUDIO_PHOENIX_INSTALL")
    if not status:
        return
    done = Path(status)
    deadline = time.monotonic() + 900  # a first install downloads about 850 MB
    while not done.exists():
        assert time.monotonic() < deadline, "scripts/phoenix.sh did not finish in 15 minutes"
        time.sleep(1)
    output = done.with_suffix("")
    assert done.read_text().strip() == "0", f"installing Phoenix failed:\n{output.read_text()[-3000:] if output.exists() else ''}"


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Phoenix serving on 127.0.0.1 (no network needed: it starts inside a network namespace with only loopback)."""
    wait_for_the_install()
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = free_port(), free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))},
           "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = (work / "serve.log").open("w")
    server = subprocess.Popen([str(PHOENIX), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # its first start migrates a new database: about a minute on a loaded machine
        while True:
            try:
                get(f"{url}/v1/projects")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"Phoenix did not start:\n{(work / 'serve.log').read_text()[-3000:]}") from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def spans_of(url: str, wanted: int) -> list[dict[str, Any]]:
    """The default project's spans as Phoenix's REST API answers (its ingestion is asynchronous: polled)."""
    deadline = time.monotonic() + 60
    while True:
        data = get(f"{url}/v1/projects/default/spans?limit=1000")["data"]
        if len(data) >= wanted or time.monotonic() > deadline:
            return list(data)
        time.sleep(0.5)


def test_spans_reach_phoenix_over_otlp_http_with_the_genai_attributes_and_come_back_as_a_replayable_call(
        phoenix: str, tmp_path: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true", "OTEL_SERVICE_NAME": "contractstudio-tests"}
    run = subprocess.run([sys.executable, "-m", "contractstudio", "run", str(SAMPLE), "--replay", str(RECORDED), "--no-wait",
                          "--otlp", phoenix], env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    recorded_events = sum(1 for line in RECORDED.read_text().splitlines() if '"stage_start"' in line)
    spans = spans_of(phoenix, 1 + recorded_events + 2)  # the call, its stages, its two model requests
    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    [call] = by_name["contract multidoc_qa"]
    a = call["attributes"]
    assert (a["contractstudio.outcome"], a["contractstudio.remedies"], a["contractstudio.attempts"]) == ("success", 1, 1)
    models = [s for s in spans if s["name"].startswith("chat ")]
    assert len(models) == 2
    for model in models:
        m = model["attributes"]
        assert m["gen_ai.operation.name"] == "chat" and m["gen_ai.request.model"].startswith("replay:")
        assert isinstance(m["gen_ai.usage.input_tokens"], int) and isinstance(m["gen_ai.usage.output_tokens"], int)
        assert json.loads(m["gen_ai.input.messages"])[0]["role"] == "system"
        assert model["context"]["trace_id"] == call["context"]["trace_id"]
    posts = [s for s in spans if s["name"] == "stage post"]
    assert any(e["name"] == "contractstudio.condition_failed" for s in posts for e in s.get("events") or ())

    export = tmp_path / "phoenix.json"  # Phoenix's own export of the spans, read back as our calls
    export.write_text(json.dumps(get(f"{phoenix}/v1/projects/default/spans?limit=1000")))
    listed = subprocess.run([sys.executable, "-m", "contractstudio", "spans", str(export), "--traces", str(tmp_path / "calls")],
                            env=env, capture_output=True, text=True, timeout=180)
    assert listed.returncode == 0 and "multidoc_qa: success ->" in listed.stdout, listed.stderr
    [trace] = list((tmp_path / "calls").iterdir())
    again = subprocess.run([sys.executable, "-m", "contractstudio", "run", str(SAMPLE), "--replay", str(trace), "--no-wait",
                            "--json"], env=env, capture_output=True, text=True, timeout=180)
    shown = json.loads(again.stdout)
    assert again.returncode == 0 and shown["successful"] and shown["remedy_attempts"] == 1
