"""`contractstudio lsp` measured over stdio, as an editor sees it.

Goals (issue 12):
- completion and hover on a 1,000-line contract: <= 20 ms from request to answer;
- diagnostics after a didChange: <= 50 ms beyond the debounce at p90 on a 1,000-line file,
  <= 250 ms on a 10,000-line pipeline;
- the server answers `initialize` within 1.5x of `contractstudio check` on a small file.

Every figure is measured in this run (machine speed cancels out in the ratios).
Run: .venv/bin/python bench/bench_lsp.py [--runs 30] [--debounce-ms 150] [--only startup requests diagnostics]
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bytecode import compile_package
from bench_check_startup import SMALL
from bench_pipeline import generate as generate_pipeline


def generate_contract(lines: int) -> str:
    """A contract of about `lines` lines: many declared types and post conditions over the output."""
    out = ["kind: contract", "name: big", "prompt: Answer with evidence.", "types:",
           "  Question:", "    fields:", "      text: {type: str, description: The question.}",
           "  Snippet:", "    fields:", "      doc_id: {type: str, description: Cited document.}",
           "      quote: {type: str, description: Verbatim excerpt.}",
           "  Answer:", "    fields:", "      answer: {type: str, description: The answer.}",
           "      evidence: {type: \"list[Snippet]\", description: Cited passages.}",
           "      score: {type: float, ge: 0.0, le: 1.0, description: Confidence.}"]
    i = 0
    while len(out) < lines * 0.6:
        out += [f"  Extra{i}:", f"    description: Extra type {i}.", "    fields:"]
        out += [f"      f{j}: {{type: str, description: Field {j} of Extra{i}.}}" for j in range(6)]
        i += 1
    out += ["input: Question", "output: Answer", "post:"]
    k = 0
    while len(out) < lines:
        out += [f"  - id: c{k}", "    assert: len(output.evidence) > 0 and output.score >= 0.5",
                "    message: \"Score {output.score:.2f} for {output.answer}\""]
        k += 1
    return "\n".join(out) + "\n"


class Client:
    """A bare JSON-RPC client on the server's pipes: a reader thread, requests answered by id."""

    def __init__(self, debounce_ms: float) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "contractstudio", "lsp", "--debounce-ms", str(debounce_ms)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.answers: dict[int, queue.Queue[Any]] = {}
        self.diagnostics: queue.Queue[tuple[float, Any]] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not length:
                return
            msg = json.loads(out.read(length))
            now = time.perf_counter()
            if msg.get("method") == "textDocument/publishDiagnostics":
                self.diagnostics.put((now, msg["params"]))
            elif "id" in msg and msg["id"] in self.answers:
                self.answers[msg["id"]].put((now, msg))

    def send(self, obj: dict[str, Any]) -> float:
        body = json.dumps(obj).encode()
        assert self.proc.stdin is not None
        t = time.perf_counter()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return t

    def request(self, method: str, params: Any) -> tuple[float, Any]:
        self.next_id += 1
        box: queue.Queue[Any] = queue.Queue()
        self.answers[self.next_id] = box
        sent = self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        got, msg = box.get(timeout=60)
        return got - sent, msg.get("result")

    def notify(self, method: str, params: Any) -> float:
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(10)


INIT = {"capabilities": {}, "processId": None, "rootUri": None}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def show(name: str, xs: list[float], goal: str) -> None:
    print(f"{name:58s} median {statistics.median(xs) * 1000:7.1f} ms  p90 {pct(xs, 0.9) * 1000:7.1f} ms  (goal {goal})")


def startup(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "notes.tools.yaml"
        f.write_text(SMALL)
        check, init = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "contractstudio", "check", str(f)], stdout=subprocess.DEVNULL, check=False)
            check.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            c = Client(150)
            c.request("initialize", INIT)
            init.append(time.perf_counter() - t0)
            c.close()
    print(f"{'contractstudio check small.yaml (process start to exit)':58s} best {min(check) * 1000:7.1f} ms  median "
          f"{statistics.median(check) * 1000:7.1f} ms")
    print(f"{'contractstudio lsp: start to initialize answered':58s} best {min(init) * 1000:7.1f} ms  median "
          f"{statistics.median(init) * 1000:7.1f} ms")
    print(f"{'ratio (best/best)':58s} {min(init) / min(check):.2f}x   (goal <= 1.5x)")


def open_doc(c: Client, uri: str, text: str) -> None:
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    c.diagnostics.get(timeout=120)


def requests(runs: int) -> None:
    text = generate_contract(1000)
    lines = text.split("\n")
    c = Client(150)
    c.request("initialize", INIT)
    uri = "file:///bench/big.contract.yaml"
    open_doc(c, uri, text)
    expr = next(i for i, ln in enumerate(lines) if "assert: len(output.evidence)" in ln)
    col = lines[expr].index("output.evidence") + len("output.")
    where = {"textDocument": {"uri": uri}, "position": {"line": expr, "character": col}}
    key_at = {"textDocument": {"uri": uri}, "position": {"line": len(lines) - 1, "character": 0}}
    comp, comp_keys, hov = [], [], []
    for _ in range(runs):
        comp.append(c.request("textDocument/completion", where)[0])
        comp_keys.append(c.request("textDocument/completion", key_at)[0])
        hov.append(c.request("textDocument/hover", where)[0])
    c.close()
    print(f"1,000-line contract ({len(lines)} lines):")
    show("  completion of fields after `output.` in an expression", comp, "<= 20 ms")
    show("  completion of keys on an empty line", comp_keys, "<= 20 ms")
    show("  hover on a field in an expression", hov, "<= 20 ms")


def diagnostics(runs: int, debounce_ms: float, steps: int, label: str, goal: str) -> None:
    """The server's diagnostics after each didChange, and next to each a fresh `check_text` of the same new text in
    this process (the baseline: what an editor without the incremental Analyzer would wait for), both warmed up."""
    from contractstudio.analysis.check import check_text

    text = generate_pipeline(steps)
    c = Client(debounce_ms)
    c.request("initialize", INIT)
    uri = "file:///bench/big.pipeline.yaml"
    open_doc(c, uri, text)
    check_text(text)  # the first analysis imports and builds the rules and validators: not part of either side
    beyond, alone = [], []
    for v in range(2, runs + 2):
        edited = text.replace("top_k: 5", f"top_k: {v}", 1)  # one character typed, the whole file re-analyzed
        sent = c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                                   "contentChanges": [{"text": edited}]})
        got, _ = c.diagnostics.get(timeout=120)
        beyond.append(got - sent - debounce_ms / 1000)
        t0 = time.perf_counter()  # the server is idle now: the baseline runs alone on the machine's cores
        check_text(edited)
        alone.append(time.perf_counter() - t0)
    c.close()
    show(f"{label} ({text.count(chr(10))} lines): diagnostics after didChange, beyond the debounce", beyond, goal)
    show(f"  a fresh check_text of the same texts, in this process ({len(alone)} samples)", alone, "the baseline")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--debounce-ms", type=float, default=150)
    ap.add_argument("--only", nargs="+", choices=["startup", "requests", "diagnostics"],
                    default=["startup", "requests", "diagnostics"])
    args = ap.parse_args()
    compile_package()  # fresh processes load bytecode, as an installed package does (bench/bench_bytecode.py)
    if "startup" in args.only:
        startup(max(5, args.runs // 3))
    if "requests" in args.only:
        requests(args.runs)
    if "diagnostics" in args.only:
        diagnostics(args.runs, args.debounce_ms, 215, "1,000-line pipeline", "p90 <= 50 ms")
        diagnostics(max(20, args.runs // 2), args.debounce_ms, 2150, "10,000-line pipeline", "p90 <= 250 ms")


if __name__ == "__main__":
    main()
