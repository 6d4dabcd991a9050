"""`eval` at scale: throughput against a 50 ms server, CPU per row, memory in the number of rows, Ray vs local.

    .venv/bin/python bench/bench_eval.py [--rows 2000] [--concurrency 32] [--skip-ray] [--skip-rss]

1. Throughput: ROWS rows of the qa contract against the local test server
   (tests/openai_server.py, in its own process) answering every request after a
   fixed 50 ms, at --concurrency 32, with the default engine and a fresh reply
   cache. Baseline: the ideal ROWS x 50 ms / concurrency. Goal <= 1.3x.
2. CPU per row: this process's CPU time during that run, per row, against the CPU
   of one `contract.call` against the same server (sequential, same process).
   Goal <= 1.5x.
3. Peak RSS of `contractstudio eval --scripted --out` (a fresh process each) at
   1,000 and 20,000 rows. Goal: 20,000 <= 1.2x 1,000.
4. Ray: the same run as (1) with --engine ray on a local 2-CPU cluster (started
   before timing), throughput against the local engine's. Goal >= 0.8x. Reported
   end to end (actor start-up included) and steady (first to last finished row).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bytecode import compile_package  # noqa: E402

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
LATENCY = 0.05
SERVER = f"""
import sys, time
sys.path.insert(0, {str(ROOT / 'tests')!r})
from openai_server import OpenAIServer, Reply
with OpenAIServer([Reply({GOOD!r}, delay={LATENCY})]) as s:
    print(s.base_url, flush=True)
    sys.stdin.read()
"""


def rows_file(folder: Path, n: int, *, scripted: bool = False) -> Path:
    path = folder / f"rows-{n}{'-scripted' if scripted else ''}.jsonl"
    with open(path, "w") as f:
        for i in range(n):
            value = {"query": f"question {i}?", "documents": [{"id": "A1", "content": f"text {i}"}]}
            f.write(json.dumps({"id": f"r{i}", "input": value, "replies": [GOOD]} if scripted else value) + "\n")
    return path


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def run_eval(data: Path, url: str, concurrency: int, folder: Path, engine: str = "local") -> dict:
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    marks: list[float] = []

    def progress(kind: str, payload: object, p: object) -> None:
        if kind == "record":
            marks.append(time.perf_counter())

    cache = Path(tempfile.mkdtemp(dir=folder))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    outcome = evaluate(EvalConfig(target=QA, data=data, model="openai/test-model", api_base=url, concurrency=concurrency,
                                  cache_dir=cache, out=folder / f"results-{engine}.jsonl", overwrite=True, engine=engine),
                       on_progress=progress)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    s = outcome.summary
    assert s["successful"] == s["rows"], s
    steady = (len(marks) - 1) / (marks[-1] - marks[0]) if len(marks) > 1 else 0.0
    return {"wall": wall, "cpu": cpu, "rows": s["rows"], "rows_per_s": s["rows"] / wall, "steady_rows_per_s": steady}


def single_call_cpu(url: str, calls: int = 200) -> float:
    import contractstudio as cs

    contract = cs.load(QA)
    value = {"query": "question?", "documents": [{"id": "A1", "content": "text"}]}
    for _ in range(10):
        contract.call(value, "openai/test-model", api_base=url)
    cpu0 = time.process_time()
    for _ in range(calls):
        contract.call(value, "openai/test-model", api_base=url)
    return (time.process_time() - cpu0) / calls


PEAK_RSS = """
import sys
from contractstudio.cli import main
code = main(sys.argv[1:])
# VmHWM: the peak RSS of this program since its exec (ru_maxrss would include the forking parent's pages)
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(code, int(peak.split()[1]))
"""


def peak_rss_mb(data: Path, out: Path) -> float:
    """The peak RSS of `contractstudio eval --scripted --out` over `data`, in a fresh process (Linux)."""
    args = ["eval", str(QA), "--data", str(data), "--scripted", "--out", str(out), "--overwrite", "--quiet", "--json"]
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, *args], capture_output=True, text=True, cwd=ROOT, check=True)
    code, kb = done.stdout.strip().splitlines()[-1].split()
    assert code == "0", done.stderr
    return int(kb) / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-rss", action="store_true")
    args = ap.parse_args()
    compile_package()  # fresh processes load bytecode, as an installed package does (bench/bench_bytecode.py)
    folder = Path(tempfile.mkdtemp(prefix="bench-eval-"))
    ok = True
    server, url = start_server()
    try:
        data = rows_file(folder, args.rows)
        run_eval(rows_file(folder, 64), url, args.concurrency, folder)  # warm: imports, the client, pydantic models
        local = run_eval(data, url, args.concurrency, folder)
        ideal = args.rows * LATENCY / args.concurrency
        ratio = local["wall"] / ideal
        ok &= ratio <= 1.3
        print(f"1. {args.rows} rows at {LATENCY * 1e3:.0f} ms, concurrency {args.concurrency}: {local['wall']:.2f} s "
              f"({local['rows_per_s']:.0f} rows/s); ideal {ideal:.2f} s; ratio {ratio:.2f}x (goal <= 1.3x)")
        one = single_call_cpu(url)
        per_row = local["cpu"] / local["rows"]
        cpu_ratio = per_row / one
        ok &= cpu_ratio <= 1.5
        print(f"2. CPU per row {per_row * 1e3:.2f} ms; one contract.call {one * 1e3:.2f} ms; ratio {cpu_ratio:.2f}x (goal <= 1.5x)")
        if not args.skip_ray:
            import ray

            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                     object_store_memory=128 * 1024 * 1024)
            try:
                on_ray = run_eval(data, url, args.concurrency, folder, engine="ray")
            finally:
                ray.shutdown()
            end_to_end = on_ray["rows_per_s"] / local["rows_per_s"]
            steady = on_ray["steady_rows_per_s"] / local["steady_rows_per_s"]
            ok &= steady >= 0.8
            print(f"4. Ray (local, 2 CPUs): {on_ray['wall']:.2f} s, {on_ray['rows_per_s']:.0f} rows/s end to end "
                  f"({end_to_end:.2f}x local), {on_ray['steady_rows_per_s']:.0f} rows/s steady "
                  f"({steady:.2f}x local's {local['steady_rows_per_s']:.0f}) (goal >= 0.8x)")
    finally:
        server.terminate()
    if not args.skip_rss:
        small = peak_rss_mb(rows_file(folder, 1000, scripted=True), folder / "rss-1k.jsonl")
        big = peak_rss_mb(rows_file(folder, 20000, scripted=True), folder / "rss-20k.jsonl")
        ok &= big / small <= 1.2
        print(f"3. peak RSS: 1,000 rows {small:.1f} MB, 20,000 rows {big:.1f} MB; ratio {big / small:.2f}x (goal <= 1.2x)")
    print("all goals met" if ok else "some goals NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
