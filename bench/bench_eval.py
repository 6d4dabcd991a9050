"""`eval` at scale: own work per row, live against litellm's floor, process vs in process, workers, Ray, memory.

    .venv/bin/python bench/bench_eval.py [--rows 2000] [--concurrency 32] [--rounds 3] [--before OLD_CHECKOUT]
                                         [--skip-ray] [--skip-rss] [--skip-workers] [--only GOAL]

0. Own work per row: CPU time per row of an in-process `evaluate` in scripted mode (no HTTP: the engine,
   reading the rows, the record with its redacted trace, the results line, the tally), 2,000 rows, in a child
   process. Goal <= 0.4 ms. With --before OLD_CHECKOUT, the same for an older checkout beside it.
1. Live, one process (--workers 1): ROWS rows of the qa contract at --concurrency against the local test server
   (tests/openai_server.py in its own process, 50 ms a reply), fresh reply cache; baseline: bare
   `litellm.acompletion` with the same messages at the same concurrency against the same server (the floor of
   any litellm-based tool; in a fresh process, as litellm's users get it), interleaved over --rounds. Goal <= 1.15x.
   Also against the same calls through litellm as eval sets it up (its success logging off when nothing listens).
   Also shown: a bare httpx client (what the server allows) and the ideal ROWS x 50 ms / concurrency.
2. `contractstudio eval` (--workers 1) as a process against the same run in process, interleaved. Goal <= 1.1x.
   Beside it, a fresh process that only imports litellm: the part of the gap any litellm-based tool has.
3. Peak RSS of `contractstudio eval --scripted --out` (a fresh process each) at
   1,000 and 20,000 rows. Goal: 20,000 <= 1.2x 1,000.
4. Ray: the same run as (1) with --engine ray on a local 2-CPU cluster (started
   before timing), throughput against the local engine's in one process, over --rounds
   interleaved rounds (a fresh cluster each): the job's first run (its actors start
   during it: actor start-up included) and the same job again (warm actors). Goal >= 0.9x
   end to end for both; steady (first to last finished row) shown for the warm run.
5. Workers: the same run as (1) with --workers N (default: the machine's cores)
   against one process, interleaved (one, workers, one, workers); goal >= 1.7x on 2 cores.
   Start-up (the workers' imports) is included.
6. Peak RSS with --workers 2: the parent's, and a worker's, at 1,000 and 20,000 rows.
   Goal: 20,000 <= 1.2x 1,000 for each.

The load of the machine (`uptime`) is printed with the figures: ratios on a busy machine are not a quiet one's.
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


def run_eval(data: Path, url: str, concurrency: int, folder: Path, engine: str = "local", workers: int = 1) -> dict:
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    marks: list[float] = []

    def progress(kind: str, payload: object, p: object) -> None:
        if kind == "record":
            marks.append(time.perf_counter())

    cache = Path(tempfile.mkdtemp(dir=folder))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    outcome = evaluate(EvalConfig(target=QA, data=data, model="openai/test-model", api_base=url, concurrency=concurrency,
                                  cache_dir=cache, out=folder / f"results-{engine}.jsonl", overwrite=True, engine=engine,
                                  workers=workers if engine == "local" else None),
                       on_progress=progress)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    s = outcome.summary
    assert s.kind == "contract" and s.successful == s.rows, s
    steady = (len(marks) - 1) / (marks[-1] - marks[0]) if len(marks) > 1 else 0.0
    return {"wall": wall, "cpu": cpu, "rows": s.rows, "rows_per_s": s.rows / wall, "steady_rows_per_s": steady,
            "first_s": marks[0] - wall0 if marks else wall}


OWN_WORK = """
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from contractstudio.evaluation.evaluate import EvalConfig, evaluate
folder, n, qa = Path(tempfile.mkdtemp()), int(sys.argv[2]), Path(sys.argv[3])
good = sys.argv[4]
data = folder / "rows.jsonl"
with open(data, "w") as f:
    for i in range(n):
        value = {"query": f"question {i}?", "documents": [{"id": "A1", "content": f"text {i}"}]}
        f.write(json.dumps({"id": f"r{i}", "input": value, "replies": [good]}) + "\\n")
def run():
    cpu = time.process_time()
    s = evaluate(EvalConfig(target=qa, data=data, mode="scripted", out=folder / "r.jsonl", overwrite=True, concurrency=8)).summary
    assert s.successful == n, s
    return (time.process_time() - cpu) / n
run()
print(json.dumps(sorted(run() for _ in range(3))))
"""


def own_work_ms(tree: Path, rows: int = 2000) -> list[float]:
    """CPU ms per row of a scripted in-process eval, in a child process importing `tree` (3 runs after a warm-up)."""
    done = subprocess.run([sys.executable, "-c", OWN_WORK, str(tree), str(rows), str(QA), GOOD], capture_output=True,
                          text=True, cwd=tree, check=True)
    return [x * 1e3 for x in json.loads(done.stdout.strip().splitlines()[-1])]


def sent_messages() -> list[dict[str, str]]:
    """The messages eval sends for a row of the qa contract (taken from a scripted call's trace)."""
    import contractstudio as cs

    value = {"query": "question 1?", "documents": [{"id": "A1", "content": "text 1"}]}
    result = cs.load(QA).call(value, [GOOD])
    return list(result.trace.of_type("llm_request")[0]["messages"])


async def litellm_calls(url: str, count: int, concurrency: int, messages: list[dict[str, str]]) -> float:
    """Wall seconds of `count` `litellm.acompletion` calls at `concurrency` on the running loop (the floor of a
    litellm-based tool)."""
    import asyncio

    import litellm

    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await litellm.acompletion(model="openai/test-model", api_base=url, api_key="no-key", messages=messages,
                                      max_retries=0, num_retries=0, timeout=30)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(count)))
    return time.perf_counter() - started


BARE_LITELLM = """
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[5])
from bench_eval import litellm_calls
url, n, concurrency, messages = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])

async def main():
    await litellm_calls(url, 64, concurrency, messages)  # warm: litellm's own client
    cpu = time.process_time()
    wall = await litellm_calls(url, n, concurrency, messages)
    return wall, (time.process_time() - cpu) / n

print(json.dumps(asyncio.run(main())))
"""


def bare_litellm(url: str, n: int, concurrency: int, messages: list[dict[str, str]], cpu: list[float] | None = None) -> float:
    """Wall seconds of n `litellm.acompletion` calls at `concurrency` on one event loop (the floor of a litellm tool),
    in a fresh process: litellm as its users get it, not set up by this process's evals (contractstudio turns its
    success logging off when nothing listens); the CPU seconds per call are appended to `cpu`."""
    done = subprocess.run([sys.executable, "-c", BARE_LITELLM, url, str(n), str(concurrency), json.dumps(messages),
                           str(Path(__file__).resolve().parent)], capture_output=True, text=True, check=True, cwd=ROOT)
    wall, per_call = json.loads(done.stdout.strip().splitlines()[-1])
    if cpu is not None:
        cpu.append(per_call)
    return float(wall)


def litellm_as_set_up(url: str, n: int, concurrency: int, messages: list[dict[str, str]],
                      cpu: list[float] | None = None) -> float:
    """The same calls in this process, whose litellm the evals before set up as contractstudio does (its success
    logging off when nothing listens): what is left of the gap when litellm is configured alike."""
    import asyncio

    started = time.process_time()
    wall = asyncio.run(litellm_calls(url, n, concurrency, messages))
    if cpu is not None:
        cpu.append((time.process_time() - started) / n)
    return wall


def bare_httpx(url: str, n: int, concurrency: int, messages: list[dict[str, str]]) -> float:
    """Wall seconds of n bare HTTP requests (httpx, one loop) at `concurrency`: what the server itself allows."""
    import asyncio

    import httpx

    body = {"model": "test-model", "messages": messages}

    async def main() -> float:
        gate = asyncio.Semaphore(concurrency)
        limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency * 2)
        async with httpx.AsyncClient(limits=limits, timeout=30) as client:
            async def one() -> None:
                async with gate:
                    (await client.post(url + "/chat/completions", json=body)).json()

            started = time.perf_counter()
            await asyncio.gather(*(one() for _ in range(n)))
            return time.perf_counter() - started

    return asyncio.run(main())


def eval_process(data: Path, url: str, concurrency: int, folder: Path) -> float:
    """Wall seconds of `contractstudio eval` (live, fresh cache) as a process, from its start to its exit."""
    cache = Path(tempfile.mkdtemp(dir=folder))
    args = [sys.executable, "-m", "contractstudio", "eval", str(QA), "--data", str(data), "--model", "openai/test-model",
            "--api-base", url, "--concurrency", str(concurrency), "--workers", "1", "--cache", str(cache), "--out",
            str(folder / "results-process.jsonl"), "--overwrite", "--quiet"]
    started = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def litellm_import() -> float:
    """Wall seconds of a fresh process that only imports litellm (its offline price map, as eval sets it)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import litellm"], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def spread(values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    """min / median / max of a few measurements."""
    v = sorted(x * scale for x in values)
    return f"{v[0]:.2f} / {v[len(v) // 2]:.2f} / {v[-1]:.2f} {unit}"


PEAK_RSS = """
import os, sys, threading, time
from pathlib import Path
from contractstudio.cli import main

worker_peak = [0]


def watch_workers():
    # the workers are forks of the warm process (not children of this one): their VmHWM, read while they run
    me = os.getpid()
    while True:
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != me:
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                    grand = int((Path("/proc") / str(ppid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
                    if grand == me:
                        hwm = next(l for l in (entry / "status").read_text().splitlines() if l.startswith("VmHWM:"))
                        worker_peak[0] = max(worker_peak[0], int(hwm.split()[1]))
            except (OSError, ValueError, StopIteration, IndexError):
                continue
        time.sleep(0.1)


threading.Thread(target=watch_workers, daemon=True).start()
code = main(sys.argv[1:])
# VmHWM: the peak RSS of this program since its exec (ru_maxrss would include the forking parent's pages)
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(code, int(peak.split()[1]), worker_peak[0])
"""


def peak_rss_mb(data: Path, out: Path, *extra: str) -> tuple[float, float]:
    """The peak RSS of `contractstudio eval --scripted --out` over `data`, in a fresh process (Linux), and of
    its first worker process (0 with none), in MB."""
    args = ["eval", str(QA), "--data", str(data), "--scripted", "--out", str(out), "--overwrite", "--quiet", "--json", *extra]
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, *args], capture_output=True, text=True, cwd=ROOT, check=True)
    code, kb, worker_kb = done.stdout.strip().splitlines()[-1].split()
    assert code == "0", done.stderr
    return int(kb) / 1024, int(worker_kb) / 1024


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes), printed beside each figure."""
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def workers_ratio(data: Path, url: str, concurrency: int, folder: Path, count: int, rounds: int = 3) -> list[float]:
    """One process's wall time over --workers COUNT's, per round, run one after the other in each round."""
    ratios = []
    for _ in range(rounds):
        one = run_eval(data, url, concurrency, folder, workers=1)
        many = run_eval(data, url, concurrency, folder, workers=count)
        ratios.append(one["wall"] / many["wall"])
        print(f"   round: one process {one['wall']:.2f} s, {count} workers {many['wall']:.2f} s: {ratios[-1]:.2f}x "
              f"(first row after {one['first_s']:.2f} s / {many['first_s']:.2f} s; steady {one['steady_rows_per_s']:.0f} / "
              f"{many['steady_rows_per_s']:.0f} rows/s; CPU per row in this process {one['cpu'] / one['rows'] * 1e3:.2f} / "
              f"{many['cpu'] / many['rows'] * 1e3:.2f} ms) ({load()})")
    return ratios


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-rss", action="store_true")
    ap.add_argument("--skip-workers", action="store_true")
    ap.add_argument("--workers", type=int, default=None, help="worker processes for (5) (default: the machine's cores)")
    ap.add_argument("--only", choices=("own", "live", "process", "workers", "ray", "rss"), help="only this goal")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of (1), (2) and (4)")
    ap.add_argument("--before", type=Path, help="an older checkout: (0) measured for it too")
    args = ap.parse_args()
    compile_package()  # fresh processes load bytecode, as an installed package does (bench/bench_bytecode.py)
    folder = Path(tempfile.mkdtemp(prefix="bench-eval-"))
    ok = True
    wanted = {args.only} if args.only else {"own", "live", "process", "workers", "ray", "rss"} - {
        name for name, skip in (("ray", args.skip_ray), ("rss", args.skip_rss), ("workers", args.skip_workers)) if skip}
    if "own" in wanted:
        for name, tree in [("now", ROOT)] + ([("before", args.before.resolve())] if args.before else []):
            ms = own_work_ms(tree)
            ok &= name != "now" or ms[1] <= 0.4
            print(f"0. own work per row, scripted, {name} ({tree.name}): {spread(ms, 'ms')} (min / median / max of 3; "
                  f"goal <= 0.4 ms; {load()})")
    server, url = start_server()
    try:
        data = rows_file(folder, args.rows)
        run_eval(rows_file(folder, 64), url, args.concurrency, folder)  # warm: imports, the client, pydantic models
        ok &= one_process_goals(args, wanted, data, url, folder)
        if "ray" in wanted:
            ok &= ray_goal(data, url, args.concurrency, folder, args.rounds)
        if "workers" in wanted:
            from contractstudio.evaluation.workers import machine_cores

            count = args.workers or machine_cores()
            # warm, as (1) is: the parent's warm process imports litellm once, then forks workers for every run
            run_eval(rows_file(folder, 64), url, args.concurrency, folder, workers=count)
            ratios = sorted(workers_ratio(data, url, args.concurrency, folder, count))
            ok &= ratios[len(ratios) // 2] >= 1.7
            print(f"5. --workers {count} vs one process, {args.rows} rows: {ratios[len(ratios) // 2]:.2f}x "
                  f"(rounds {', '.join(f'{r:.2f}' for r in ratios)}) (goal >= 1.7x on 2 cores; {load()})")
    finally:
        server.terminate()
    if "rss" in wanted:
        ok &= rss_goals(folder, one_process=not args.only)
    print("all goals met" if ok else "some goals NOT met")
    return 0 if ok else 1


def one_process_goals(args: argparse.Namespace, wanted: set[str], data: Path, url: str, folder: Path) -> bool:
    """(1) one process against bare litellm.acompletion, (2) the eval process against the same run in process."""
    ok = True
    ideal = args.rows * LATENCY / args.concurrency
    if "live" in wanted:
        messages = sent_messages()
        ours, floor, http, cpu, floor_cpu, alike, alike_cpu = [], [], [], [], [], [], []
        for _ in range(args.rounds):  # interleaved, so the machine's load falls on each alike
            floor.append(bare_litellm(url, args.rows, args.concurrency, messages, floor_cpu))
            local = run_eval(data, url, args.concurrency, folder)
            ours.append(local["wall"])
            cpu.append(local["cpu"] / local["rows"])
            alike.append(litellm_as_set_up(url, args.rows, args.concurrency, messages, alike_cpu))
            http.append(bare_httpx(url, args.rows, args.concurrency, messages))
        ratios = [o / f for o, f in zip(ours, floor, strict=True)]
        ok &= sorted(ratios)[len(ratios) // 2] <= 1.15
        print(f"1. {args.rows} rows at {LATENCY * 1e3:.0f} ms, concurrency {args.concurrency}, one process: eval {spread(ours)}; "
              f"bare litellm.acompletion (a fresh process) {spread(floor)}; ratio {spread(ratios, 'x')} (goal <= 1.15x; {load()})")
        print(f"   against the ideal {ideal:.2f} s: eval {spread(ours, 'x', 1 / ideal)}, litellm {spread(floor, 'x', 1 / ideal)}, "
              f"bare httpx {spread(http, 'x', 1 / ideal)}; CPU per row: eval {spread(cpu, 'ms', 1e3)}, "
              f"litellm {spread(floor_cpu, 'ms', 1e3)}")
        alike_ratios = [o / a for o, a in zip(ours, alike, strict=True)]
        print(f"   litellm set up as eval sets it up (in this process): {spread(alike)}, CPU per call "
              f"{spread(alike_cpu, 'ms', 1e3)}; eval against it {spread(alike_ratios, 'x')}")
    if "process" in wanted:
        inside, outside, imports = [], [], []
        for _ in range(args.rounds):
            inside.append(run_eval(data, url, args.concurrency, folder)["wall"])
            outside.append(eval_process(data, url, args.concurrency, folder))
            imports.append(litellm_import())
        ratios = [o / i for o, i in zip(outside, inside, strict=True)]
        floors = [(i + m) / i for i, m in zip(inside, imports, strict=True)]
        ok &= sorted(ratios)[len(ratios) // 2] <= 1.1
        print(f"2. `contractstudio eval` as a process {spread(outside)}; in process {spread(inside)}; "
              f"ratio {spread(ratios, 'x')} (goal <= 1.1x; {load()})")
        print(f"   a bare `python -c 'import litellm'` {spread(imports)}: what any litellm tool's process adds; the run in "
              f"process plus that import alone is {spread(floors, 'x')} the run in process")
    return ok


def ray_goal(data: Path, url: str, concurrency: int, folder: Path, rounds: int = 3) -> bool:
    """(4): --engine ray on a local 2-CPU cluster against one local process, interleaved over `rounds`: each round a
    fresh cluster (started before timing), the job's first run on it (the actors start during it), the local engine,
    then the same job again (warm actors)."""
    import ray

    from contractstudio.evaluation.ray_engine import start_cluster

    first, warm, steady = [], [], []
    for _ in range(rounds):
        start_cluster(ray, None, {"num_cpus": 2})  # on loopback, as `eval --engine ray` starts one
        try:
            cold = run_eval(data, url, concurrency, folder, engine="ray")  # new actors: rows run in the driver meanwhile
            local = run_eval(data, url, concurrency, folder)
            again = run_eval(data, url, concurrency, folder, engine="ray")  # the same job: its actors stay up (_WARM)
        finally:
            ray.shutdown()
        first.append(cold["rows_per_s"] / local["rows_per_s"])
        warm.append(again["rows_per_s"] / local["rows_per_s"])
        steady.append(again["steady_rows_per_s"] / local["steady_rows_per_s"])
        print(f"   round: local {local['wall']:.2f} s; Ray first run {cold['wall']:.2f} s ({first[-1]:.2f}x), warm "
              f"{again['wall']:.2f} s ({warm[-1]:.2f}x; steady {steady[-1]:.2f}x); first record after {local['first_s']:.2f} / "
              f"{cold['first_s']:.2f} / {again['first_s']:.2f} s ({load()})")
    median = sorted(first)[len(first) // 2]
    print(f"4. Ray (local, 2 CPUs) end to end against the local engine: first run {spread(first, 'x')}, "
          f"warm actors {spread(warm, 'x')} (steady {spread(steady, 'x')}); goal >= 0.9x for both ({load()})")
    return median >= 0.9 and sorted(warm)[len(warm) // 2] >= 0.9


def rss_goals(folder: Path, *, one_process: bool) -> bool:
    """(3) and (6): peak RSS at 20,000 rows against 1,000, in one process and with --workers 2."""
    ok = True
    small_rows, big_rows = rows_file(folder, 1000, scripted=True), rows_file(folder, 20000, scripted=True)
    if one_process:
        small, _ = peak_rss_mb(small_rows, folder / "rss-1k.jsonl")
        big, _ = peak_rss_mb(big_rows, folder / "rss-20k.jsonl")
        ok &= big / small <= 1.2
        print(f"3. peak RSS: 1,000 rows {small:.1f} MB, 20,000 rows {big:.1f} MB; ratio {big / small:.2f}x (goal <= 1.2x)")
    small, small_worker = peak_rss_mb(small_rows, folder / "rss-1k-w.jsonl", "--workers", "2")
    big, big_worker = peak_rss_mb(big_rows, folder / "rss-20k-w.jsonl", "--workers", "2")
    ok &= big / small <= 1.2 and big_worker / small_worker <= 1.2
    print(f"6. peak RSS with --workers 2: parent {small:.1f} MB -> {big:.1f} MB ({big / small:.2f}x), a worker "
          f"{small_worker:.1f} MB -> {big_worker:.1f} MB ({big_worker / small_worker:.2f}x) (goal <= 1.2x each)")
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
