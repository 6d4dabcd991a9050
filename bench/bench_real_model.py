"""Issue 33, point 4: remedies and eval measured on a real model, `eval --structured off` beside `auto`.

Starts llama-cpp-python's server with SmolLM2-135M-Instruct on a free loopback port (the `local` extra; the same
start as the tests' fixture, tests/real_model.py), runs `contractstudio eval` over the 40 labelled reviews of
samples/local/ once per structure mode (no reply cache, greedy sampling, one row at a time), and prints the table
of docs/runtime.md ("Measured on a real model"): first-try rate, remedied rate and at which attempt, fallbacks,
requests per row, tokens, wall time, and how many labels were right.
Run: .venv/bin/python bench/bench_real_model.py [--modes off auto] [--concurrency 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from real_model import MISSING, gguf_path, start, stop  # noqa: E402 - the tests' server start, one copy

CONTRACT = ROOT / "samples" / "local" / "sentiment.contract.yaml"
DATA = ROOT / "samples" / "local" / "reviews.rows.jsonl"


def run_eval(api_base: str, mode: str, concurrency: int, work: Path) -> dict[str, Any]:
    """One eval of the dataset in `mode`: its JSON summary, wall time and labels right."""
    out = work / f"{mode}.jsonl"
    command = [sys.executable, "-m", "contractstudio", "eval", str(CONTRACT), "--data", str(DATA), "--api-base", api_base,
               "--structured", mode, "--no-cache", "--concurrency", str(concurrency), "--out", str(out), "--overwrite",
               "--json", "--quiet"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"eval failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = json.loads(done.stdout)["summary"]
    labels = {json.loads(line)["id"]: json.loads(line)["meta"]["label"] for line in DATA.read_text().splitlines()}
    right = 0
    for line in out.read_text().splitlines():
        rec = json.loads(line)
        output = rec.get("output") or {}
        right += isinstance(output, dict) and output.get("label") == labels.get(str(rec.get("id")))
    return {"summary": summary, "wall_s": wall, "right": right}


def table(results: dict[str, dict[str, Any]]) -> str:
    """The Markdown table of docs/runtime.md: one column per mode."""
    def cell(mode: str, what: str) -> str:
        r = results[mode]
        s = r["summary"]
        n = s["rows"] or 1
        by_attempt = ", ".join(f"{k}: {v}" for k, v in s["remedied_by_attempt"].items()) or "-"
        return {
            "rows": str(s["rows"]),
            "first try": f"{s['first_try']} ({s['first_try_rate']:.0%})",
            "remedied (at attempt: rows)": f"{s['remedied']} ({by_attempt})",
            "failed": str(s["rows"] - s["successful"]),
            "structure fallbacks": str(s["structure_fallbacks"]),
            "requests per row": f"{s['requests_per_row']:.2f}",
            "tokens per row": f"{s['tokens']['total'] / n:.0f}",
            "wall time": f"{r['wall_s']:.1f} s ({r['wall_s'] / n:.2f} s per row)",
            "labels right": f"{r['right']} of {s['rows']}",
            "failing conditions": ", ".join(f"{c['check']} x{c['count']}" for c in s["failing_conditions"][:3]) or "-",
        }[what]
    modes = list(results)
    rows = ["| | " + " | ".join(f"`--structured {m}`" for m in modes) + " |", "|---|" + "---|" * len(modes)]
    for what in ("rows", "first try", "remedied (at attempt: rows)", "failed", "structure fallbacks", "requests per row",
                 "tokens per row", "wall time", "labels right", "failing conditions"):
        rows.append(f"| {what} | " + " | ".join(cell(m, what) for m in modes) + " |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", nargs="+", default=["off", "auto"])
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    gguf = gguf_path()
    if gguf is None:
        raise SystemExit(MISSING)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = start(gguf, work)
        try:
            results = {mode: run_eval(server.api_base, mode, args.concurrency, work) for mode in args.modes}
        finally:
            stop(server.process)
    print(table(results))


if __name__ == "__main__":
    main()
