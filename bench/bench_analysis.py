"""Issue 15's analysis and reading rows, each as a ratio or a percentile measured in one run.

1. `check` on the dense 10,000-step pipeline (bench_pipeline.generate_dense), whole process beyond
   start-up, against PyYAML's C loader composing the same text, also a whole process beyond `import yaml`
   (start-up of `check`: the same command on a 15-step dense pipeline). Goal <= 1.1x.
2. The same in process with the cyclic GC paused for both sides (`check_text` vs
   `yaml.compose(text, Loader=yaml.CSafeLoader)`). Goal <= 2.5x.
3. Growth of that in-process `check_text` from 1,000 to 10,000 steps. Goal <= 11x.
4. `contractstudio check` on a small file vs `python -c "import pydantic, networkx"`, fresh processes. Goal <= 1.15x.
5. Analysis after one keystroke in a 1,000-line contract (bench_lsp.generate_contract: types and ~130
   post conditions), what the studio and the language server run per edit: a fresh `check_text` of the new
   text, and the `Analyzer` session they use, which reuses what the edit cannot have changed. Goal <= 16 ms p90.

The machine is shared: every comparison interleaves its two sides run by run and takes medians; processes
are timed by their CPU time (user + system, from getrusage) as well as by the wall clock, and the
in-process rows by this process's CPU time, so other processes' load counts as little as it can.
Run: .venv/bin/python bench/bench_analysis.py [--runs 9] [--edits 300] [--only 1 2 ...]
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bytecode import compile_package
from bench_check_startup import SMALL
from bench_lsp import generate_contract
from bench_pipeline import generate_dense

from contractstudio.analysis.check import check_text

PY = sys.executable


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """Each command run `runs` times, round-robin (the order alternating): the (wall, CPU) seconds of each run."""
    wall: dict[str, list[float]] = {k: [] for k in commands}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    for i in range(runs):
        for name, cmd in list(commands.items())[:: 1 if i % 2 == 0 else -1]:
            c0, t0 = children_cpu(), time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(children_cpu() - c0)
    return {k: (wall[k], cpu[k]) for k in commands}


def spread(xs: list[float]) -> str:
    """min / median / max of per-run ratios."""
    return f"min {min(xs):.2f}x  median {statistics.median(xs):.2f}x  max {max(xs):.2f}x"


def cpu_once(fn: Callable[[], object], collect: bool) -> float:
    gc.collect()
    if not collect:
        gc.disable()
    try:
        t0 = time.process_time()
        fn()
        return time.process_time() - t0
    finally:
        gc.enable()


def row_processes(folder: Path, runs: int) -> None:
    big, small = folder / "dense10k.pipeline.yaml", folder / "dense15.pipeline.yaml"
    compose = "import sys, yaml; yaml.compose(open(sys.argv[1], encoding='utf-8').read(), Loader=yaml.CSafeLoader)"
    got = interleaved({
        "check": [PY, "-m", "contractstudio", "check", str(big)],
        "check start-up": [PY, "-m", "contractstudio", "check", str(small)],
        "compose": [PY, "-c", compose, str(big)],
        "import yaml": [PY, "-c", "import sys, yaml"],
    }, runs)
    print(f"\n1. whole process, dense 10,000 steps ({runs} interleaved runs; CPU = user + system)")
    for name, (w, c) in got.items():
        print(f"   {name:16s} wall median {statistics.median(w) * 1000:7.0f} ms   CPU median {statistics.median(c) * 1000:7.0f} ms")
    for i, what in ((1, "CPU"), (0, "wall")):
        # run by run: check's own work beyond its start-up over compose's beyond `import yaml`, all four of one round
        ratios = [(a - b) / (c - d) for a, b, c, d in zip(got["check"][i], got["check start-up"][i], got["compose"][i],
                                                           got["import yaml"][i], strict=True)]
        print(f"   beyond start-up, check / compose ({what}), run by run: {spread(ratios)}   (goal <= 1.1x)")


def row_in_process(runs: int) -> None:
    texts = {n: generate_dense(n) for n in (1000, 10000)}
    for text in texts.values():
        assert not check_text(text, "dense.yaml").diagnostics  # the generated pipeline is clean
    for collect in (False, True):
        times: dict[tuple[str, int], list[float]] = {}
        for i in range(runs):
            for n, text in texts.items():
                sides = [("compose", lambda t=text: yaml.compose(t, Loader=yaml.CSafeLoader)),
                         ("check", lambda t=text: check_text(t, "dense.yaml"))]
                for name, fn in sides[:: 1 if i % 2 == 0 else -1]:
                    times.setdefault((name, n), []).append(cpu_once(fn, collect))
        med = {k: statistics.median(v) for k, v in times.items()}
        label = "GC on for both (as a user runs it)" if collect else "GC paused for both"
        print(f"\n2./3. in process, dense pipeline, {label} ({runs} interleaved runs, CPU)")
        for n in texts:
            ratios = [c / k for c, k in zip(times["check", n], times["compose", n], strict=True)]
            print(f"   {n:>6} steps: compose median {med['compose', n] * 1000:7.1f} ms   check median {med['check', n] * 1000:7.1f} ms"
                  f"   check / compose run by run: {spread(ratios)}" + ("   (goal <= 2.5x)" if n == 10000 and not collect else ""))
        growth = [b / a for a, b in zip(times["check", 1000], times["check", 10000], strict=True)]
        compose_growth = [b / a for a, b in zip(times["compose", 1000], times["compose", 10000], strict=True)]
        print(f"   growth 1,000 -> 10,000 steps, run by run: check {spread(growth)}"
              f"{'   (goal <= 11x)' if not collect else ''}   compose {spread(compose_growth)}")


def row_startup(folder: Path, runs: int) -> None:
    small = folder / "notes.tools.yaml"
    if subprocess.run([PY, "-c", "import networkx"], stderr=subprocess.DEVNULL, check=False).returncode != 0:
        # contractstudio dropped networkx (issue 23.6); a baseline that fails on import would time an ImportError
        print("\n4. skipped: networkx, half of issue 15's baseline, is not installed (pip install networkx to run it)")
        return
    got = interleaved({
        "check": [PY, "-m", "contractstudio", "check", str(small)],
        "import pydantic, networkx": [PY, "-c", "import pydantic, networkx"],
    }, runs)
    print(f"\n4. cold start, check on a small file ({runs} interleaved fresh processes)")
    for name, (w, c) in got.items():
        print(f"   {name:26s} wall median {statistics.median(w) * 1000:7.1f} ms   CPU median {statistics.median(c) * 1000:7.1f} ms")
    for i, what in ((0, "wall"), (1, "CPU")):
        ratios = [a / b for a, b in zip(got["check"][i], got["import pydantic, networkx"][i], strict=True)]
        print(f"   check / baseline ({what}), run by run: {spread(ratios)}   (goal <= 1.15x)")


def keystrokes(text: str, bursts: int, seed: int = 15) -> list[str]:
    """Texts after each keystroke of typing bursts on lines that hold a value: a word typed then erased at the
    line's end or inside the value, or a new line opened and closed again (which moves every line below)."""
    rng = random.Random(seed)
    out = []
    lines = text.split("\n")
    valued = [i for i, ln in enumerate(lines) if ": " in ln and not ln.rstrip().endswith(":")]  # lines that hold a value
    for _ in range(bursts):
        row = rng.choice(valued)
        line = lines[row]
        start = sum(len(x) + 1 for x in lines[:row])
        if rng.random() < 0.15:
            at = start + len(line)
            opened = text[:at] + "\n" + text[at:]
            out += [opened, text]
            continue
        colon = line.find(": ")
        col = len(line) if colon < 0 or rng.random() < 0.6 else rng.randrange(colon + 2, len(line) + 1)
        at = start + col
        word = "".join(rng.choice("abcdefghij") for _ in range(4))
        for k in range(1, len(word) + 1):
            out.append(text[:at] + word[:k] + text[at:])
        for k in range(len(word) - 1, -1, -1):
            out.append(text[:at] + word[:k] + text[at:])
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def row_per_edit(folder: Path, edits: int) -> None:
    path = str(folder / "big.contract.yaml")
    text = generate_contract(1000)
    texts = keystrokes(text, max(1, edits // 8))
    print(f"\n5. analysis after one keystroke, 1,000-line contract ({len(texts)} keystrokes; wall and this thread's CPU)")
    sessions: list[tuple[str, Callable[[str], object]]] = [("fresh check_text per edit", lambda t: check_text(t, path))]
    try:
        from contractstudio.analysis.incremental import Analyzer
    except ImportError:  # before the session existed
        Analyzer = None  # type: ignore[assignment,misc]
    if Analyzer is not None:
        analyzer = Analyzer()
        analyzer.check(text, path)
        sessions.append(("Analyzer session (studio, lsp)", lambda t: analyzer.check(t, path)))
    results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _ in sessions}
    check_text(text, path)
    for t in texts:  # interleaved: each keystroke is analyzed by both, one after the other
        for name, run in sessions:
            w0, c0 = time.perf_counter(), time.thread_time()
            run(t)
            results[name][1].append(time.thread_time() - c0)
            results[name][0].append(time.perf_counter() - w0)
    for name, (wall, cpu) in results.items():
        print(f"   {name:32s} wall median {statistics.median(wall) * 1000:6.1f} ms  p90 {pct(wall, 0.9) * 1000:6.1f} ms   "
              f"CPU median {statistics.median(cpu) * 1000:6.1f} ms  p90 {pct(cpu, 0.9) * 1000:6.1f} ms   (goal: p90 <= 16 ms)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--edits", type=int, default=300)
    ap.add_argument("--only", type=int, nargs="+", default=[1, 2, 4, 5], help="rows to run (2 includes 3)")
    args = ap.parse_args()
    compile_package()  # fresh processes load bytecode, as an installed package does (bench/bench_bytecode.py)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "dense10k.pipeline.yaml").write_text(generate_dense(10000))
        (folder / "dense15.pipeline.yaml").write_text(generate_dense(15))
        (folder / "notes.tools.yaml").write_text(SMALL)
        if 1 in args.only:
            row_processes(folder, args.runs)
        if 2 in args.only or 3 in args.only:
            row_in_process(args.runs)
        if 4 in args.only:
            row_startup(folder, max(args.runs, 15))
        if 5 in args.only:
            row_per_edit(folder, args.edits)


if __name__ == "__main__":
    main()
