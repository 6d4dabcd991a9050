"""What OpenTelemetry spans cost per contracted call (runtime/otel.py), measured on the scripted model.

    .venv/bin/python bench/bench_otel.py [--calls N] [--rounds N]

Kinds, in interleaved batches (each sees the same machine load), median per call:

- off: nothing configured (the shipped default): the call pays `otel.active()`, one cached check;
- in-memory: spans made and handed to the SDK's in-memory exporter by a SimpleSpanProcessor (span creation alone);
- otlp: the OTLP/HTTP exporter behind a BatchSpanProcessor, sending to a loopback receiver that answers 200
  (what a user's `--otlp URL` does: spans are made in the call, sent by the processor's thread);
- otlp+content: the same with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (messages, input, the trace).

The call is the bundled multidoc_qa contract with one remedy (two model requests, 47 events).
`active()` alone is timed too, in ns per check.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import contractstudio as cs  # noqa: E402
from contractstudio.runtime import otel  # noqa: E402
from contractstudio.runtime.models import ReplayModel  # noqa: E402

SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
RECORDED = ROOT / "samples" / "traces" / "multidoc_qa.remedied-after-low-coverage.jsonl"


class Sink(BaseHTTPRequestHandler):
    """A loopback OTLP/HTTP receiver that reads each request and answers 200 (counting bytes)."""

    received = 0

    def do_POST(self) -> None:  # the stdlib's name
        length = int(self.headers.get("Content-Length") or 0)
        Sink.received += len(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # the stdlib's signature
        pass


def configure(kind: str, endpoint: str) -> Any:
    otel.reset()
    os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    os.environ.pop(otel.CONTENT_VARIABLE, None)
    if kind == "off":
        return None
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    if kind == "in-memory":
        exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        otel.configure(provider=provider)
        return exporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    if kind == "otlp+content":
        os.environ[otel.CONTENT_VARIABLE] = "true"
    otel.configure(provider=provider)
    return provider


def batch(contract: Any, value: Any, calls: int, handle: Any = None) -> tuple[float, float]:
    """(wall, CPU of this process: every thread, the span processor's too) per call."""
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        contract.call(value, ReplayModel(RECORDED), wait=False)
    if hasattr(handle, "force_flush"):
        handle.force_flush()  # the processor's thread sends the rest: its work counts for these calls
    return (time.perf_counter() - started) / calls, (time.process_time() - cpu) / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    checks = 1_000_000  # the check every call makes when nothing is configured, before anything imports opentelemetry
    started = time.perf_counter()
    for _ in range(checks):
        otel.active()
    per_check_ns = (time.perf_counter() - started) / checks * 1e9
    imported_when_off = "opentelemetry" in sys.modules
    contract = cs.load(SAMPLE)
    value = next(e for e in __import__("contractstudio.runtime.trace", fromlist=["Trace"]).Trace.read(RECORDED)).get("value")
    kinds = ("off", "in-memory", "otlp", "otlp+content")
    for kind in kinds:  # warm-up: imports, first spans
        handle = configure(kind, endpoint)
        batch(contract, value, 20, handle)
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    for _ in range(args.rounds):
        for kind in kinds:
            handle = configure(kind, endpoint)
            times[kind].append(batch(contract, value, args.calls, handle))
            if hasattr(handle, "shutdown"):
                handle.shutdown()
    otel.reset()
    off = statistics.median(w for w, _ in times["off"])
    off_cpu = statistics.median(c for _, c in times["off"])
    print(f"{'kind':<14}{'wall/call':>12}{'vs off':>12}{'CPU/call':>12}{'vs off':>12}")
    for kind in kinds:
        wall = statistics.median(w for w, _ in times[kind])
        cpu = statistics.median(c for _, c in times[kind])
        print(f"{kind:<14}{wall * 1e6:>10.0f}us{(wall - off) * 1e6:>+10.0f}us{cpu * 1e6:>10.0f}us{(cpu - off_cpu) * 1e6:>+10.0f}us")
    print(f"otel.active() when off: {per_check_ns:.0f} ns per call (opentelemetry imported then: "
          f"{'yes' if imported_when_off else 'no'})")
    print(f"bytes received by the loopback receiver: {Sink.received:,}")
    server.shutdown()


if __name__ == "__main__":
    main()
