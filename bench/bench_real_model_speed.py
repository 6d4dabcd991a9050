"""Issue 33, point 6: `eval` over the bundled reviews at concurrency 1, 2 and 4 against one real model server.

Starts llama-cpp-python's server with SmolLM2-135M-Instruct on a free loopback port (the tests' start,
tests/real_model.py) and a loopback forwarder in front of it (tests/real_model.py's LoopbackProxy), which times each
request from its arrival to the server's whole answer: the server's own time, queueing at the server included. Then
runs `contractstudio eval` over samples/local/reviews.rows.jsonl (`--structured auto`, no reply cache) through the
forwarder, `--repeat` times per concurrency, and prints per concurrency:

- rows per second, as eval's summary measures it (the rows' run, without the interpreter's start);
- the time ContractStudio adds per row: the row's latency (its record's `latency_s`) minus the server's time of the
  requests that row made (matched by the review's text in the request body): the engine, litellm, HTTP on loopback.

Each figure is min / median / max over the runs (rows per second) or over every row of every run (time added).
Run: .venv/bin/python bench/bench_real_model_speed.py [--concurrency 1 2 4] [--repeat 3] [--limit 40]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from real_model import MISSING, LoopbackProxy, gguf_path, start, stop  # noqa: E402 - the tests' server start, one copy

CONTRACT = ROOT / "samples" / "local" / "sentiment.contract.yaml"
DATA = ROOT / "samples" / "local" / "reviews.rows.jsonl"


def _contents(body: bytes) -> str:
    try:
        request = json.loads(body)
    except ValueError:
        return ""
    return "\n".join(str(m.get("content", "")) for m in request.get("messages") or [] if isinstance(m, dict))


def one_run(proxy: LoopbackProxy, concurrency: int, limit: int, work: Path) -> tuple[float, list[float], float]:
    """One eval: its rows per second, the time added per row (s), and the server's mean time per request (s)."""
    proxy.asked.clear()
    out = work / f"c{concurrency}.jsonl"
    command = [sys.executable, "-I", "-m", "contractstudio", "eval", str(CONTRACT), "--data", str(DATA),
               "--api-base", proxy.api_base, "--structured", "auto", "--no-cache", "--concurrency", str(concurrency),
               "--limit", str(limit), "--out", str(out), "--overwrite", "--json", "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode not in (0, 1):
        raise SystemExit(f"eval failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = json.loads(done.stdout)["summary"]
    asked = [(_contents(body), seconds) for body, seconds in proxy.asked]
    added = []
    for line in out.read_text().splitlines():
        record: dict[str, Any] = json.loads(line)
        text = str((record.get("input") or {}).get("text", ""))
        needles = {text, json.dumps(text)[1:-1]}
        server = sum(s for content, s in asked if any(n in content for n in needles))
        added.append(float(record["latency_s"]) - server)
    return float(summary["rows_per_s"]), added, statistics.fmean(s for _, s in asked)


def spread(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    """min / median / max."""
    return " / ".join(f"{v * scale:.{digits}f}" for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=40)
    args = parser.parse_args()
    gguf = gguf_path()
    if gguf is None:
        raise SystemExit(MISSING)
    rows = ["| concurrency | rows per second (min / median / max) | server time per request, mean | "
            "time ContractStudio adds per row, ms (min / median / max) |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = start(gguf, work)
        try:
            with LoopbackProxy(server.api_base) as proxy:
                one_run(proxy, 1, 2, work)  # a warm-up: the server's first reply loads its caches
                for concurrency in args.concurrency:
                    runs = [one_run(proxy, concurrency, args.limit, work) for _ in range(args.repeat)]
                    added = [a for _, row, _ in runs for a in row]
                    server_s = statistics.fmean(s for _, _, s in runs)
                    rows.append(f"| {concurrency} | {spread([r for r, _, _ in runs])} | {server_s:.2f} s | "
                                f"{spread(added, 1000, 1)} |")
        finally:
            stop(server.process)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
