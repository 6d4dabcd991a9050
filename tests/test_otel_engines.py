"""`eval --otlp URL` on each engine: every row's call span reaches the receiver, from the worker processes too
(a loopback OTLP/HTTP receiver written here, decoding what it gets with opentelemetry-proto)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from test_otel import GOOD, HERE, INPUT, LOW


class Receiver(BaseHTTPRequestHandler):
    requests: list[ExportTraceServiceRequest] = []

    def do_POST(self) -> None:  # the stdlib's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        Receiver.requests.append(ExportTraceServiceRequest.FromString(body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # the stdlib's signature
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    Receiver.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def call_spans() -> list[dict[str, Any]]:
    out = []
    for request in Receiver.requests:
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    if span.name.startswith("contract "):
                        out.append({a.key: a.value for a in span.attributes})
    return out


@pytest.mark.parametrize("engine", [[], ["--workers", "2"]], ids=["local", "workers"])
def test_eval_sends_a_call_span_per_row_from_every_process(receiver: str, tmp_path: Path, engine: list[str]) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": f"r{i}", "input": INPUT, "replies": [LOW, GOOD] if i % 2 else [GOOD]}) + "\n"
                            for i in range(6)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run([sys.executable, "-m", "contractstudio", "eval", str(HERE / "qa.contract.yaml"), "--data", str(rows),
                           "--scripted", "--no-wait", "--quiet", "--otlp", receiver, *engine],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    spans = call_spans()
    assert len(spans) == 6
    assert sorted(s["contractstudio.remedies"].int_value for s in spans) == [0, 0, 0, 1, 1, 1]
    assert {s["contractstudio.outcome"].string_value for s in spans} == {"success"}
