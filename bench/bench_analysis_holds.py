"""How long an analysis holds the interpreter without letting another thread run: what a key typed meanwhile waits for.

    .venv/bin/python bench/bench_analysis_holds.py [--cases big chain examples] [--edits 5] [--tree OLD_CHECKOUT]

The studio analyzes in a worker thread while the screen's thread handles keys; Python hands the interpreter over every
0.5 ms (studio/keys.py, KEY_SWITCH_S), but only between bytecodes: one long call in C (a split, a join, a regular
expression over 5 MB) holds it to its end, and the key waits (issue 35.1). Here a watcher thread wakes every 0.2 ms
while one analysis runs and notes each gap between its wake-ups longer than --min-ms, with where the analysis thread
was at the wake-up before the gap and after it (the call that held it lies between). Analyses as the studio runs them
(`LiveDocument.analyze`, the collector's keep_readings, the same switch interval): the file's first analysis, then
--edits edits of one character each (a letter, then Backspace, ...) where bench_typing types near the top of the 5 MB
file and in its middle (the end of a name or a description), each analysis after the last.

Cases: bench_typing's 5 MB files (big: 655 `---` documents; chain: a pipeline of one document; examples: a contract of
one document). With --tree, the same runs for another checkout in turn, in a process of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SWITCH_S = 0.0005  # studio/keys.py's KEY_SWITCH_S (read from there when the tree has it)
WAKE_S = 0.0002


def _where(frame: Any, depth: int = 4) -> str:
    out = []
    while frame is not None and len(out) < depth:
        out.append(f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(out)


def watched(work: Any, min_s: float) -> tuple[float, list[tuple[float, str, str]]]:
    """Run `work()` in a thread; (its wall seconds, [(gap seconds, where before, where after)] for gaps > min_s)."""
    gaps: list[tuple[float, str, str]] = []
    ident: list[int] = []
    done = threading.Event()

    def run() -> None:
        ident.append(threading.get_ident())
        try:
            work()
        finally:
            done.set()

    thread = threading.Thread(target=run)
    started = time.perf_counter()
    thread.start()
    while not ident:
        time.sleep(WAKE_S)
    last, before = time.perf_counter(), ""
    while not done.is_set():
        time.sleep(WAKE_S)
        now = time.perf_counter()
        where = _where(sys._current_frames().get(ident[0]))  # noqa: SLF001 - a bench's look at the other thread
        if now - last > min_s:
            gaps.append((now - last, before, where))
        last, before = now, where
    thread.join()
    return time.perf_counter() - started, gaps


def measure(case: str, edits: int, min_s: float) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_typing

    from contractstudio import collector
    from contractstudio.editing.live import LiveDocument

    try:
        from contractstudio.studio.keys import KEY_SWITCH_S as switch
    except ImportError:
        switch = SWITCH_S
    sys.setswitchinterval(switch)
    collector.keep_readings()  # as the studio does (studio/app.py)
    text = {"big": bench_typing.big_contract, "chain": bench_typing.chain_pipeline,
            "examples": bench_typing.examples_contract}[case]()
    suffix = "pipeline" if case == "chain" else "contract"
    live = LiveDocument(f"/tmp/bench-holds.{suffix}.yaml")
    phases: dict[str, Any] = {}

    def analyze(current: str) -> None:
        version = live.edit(current)
        report = live.analyze(current, None, symbols=False)
        live.accept(version, report)

    wall, gaps = watched(lambda current=text: analyze(current), min_s)
    phases["first"] = {"walls": [wall], "gaps": gaps}
    # where bench_typing types: the end of a name or a description, so each edit is a letter in one scalar
    copies = text.count("name: multidoc_qa_")
    typed = {"big": ("name: multidoc_qa_3\n", f"name: multidoc_qa_{copies // 2}\n"),
             "chain": (bench_typing.TYPED_AT["chain"][1], bench_typing.MIDDLE_AT["chain"]),
             "examples": (bench_typing.TYPED_AT["examples"][1] + "\n", bench_typing.MIDDLE_AT["examples"] + "\n")}[case]
    places = {name: text.index("\n", text.index(at)) for name, at in zip(("top", "middle"), typed, strict=True)}
    for name, at in places.items():
        walls, all_gaps = [], []
        for n in range(edits):
            text = text[:at] + "x" + text[at:] if n % 2 == 0 else text[:at] + text[at + 1:]  # a letter, then Backspace
            wall, gaps = watched(lambda current=text: analyze(current), min_s)
            walls.append(wall)
            all_gaps += gaps
        phases[name] = {"walls": walls, "gaps": all_gaps}
    return phases


def report(label: str, case: str, phases: dict[str, Any], top: int) -> None:
    for name, got in phases.items():
        gaps = sorted(got["gaps"], reverse=True)
        longest = f"{gaps[0][0] * 1e3:6.1f}" if gaps else "     -"
        print(f"  {label:>8} {case:<8} {name:<7} analyses {len(got['walls'])}, wall median "
              f"{statistics.median(got['walls']) * 1e3:7.0f} ms; longest hold {longest} ms; holds over 5 ms: "
              f"{sum(1 for g in gaps if g[0] > 0.005)}, over 2 ms: {sum(1 for g in gaps if g[0] > 0.002)}")
        for gap, before, after in gaps[:top]:
            print(f"  {'':>8} {gap * 1e3:6.1f} ms  before: {before}\n  {'':>8} {'':>9}  after:  {after}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=["big", "chain", "examples"], choices=["big", "chain", "examples"])
    ap.add_argument("--edits", type=int, default=5, help="edits analyzed at each place (top, middle)")
    ap.add_argument("--min-ms", type=float, default=1.0, help="gaps noted from this long")
    ap.add_argument("--top", type=int, default=3, help="the longest holds listed per phase, with where")
    ap.add_argument("--tree", type=Path, help="another checkout, measured the same way in turn")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: one case in this process, JSON out
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.edits, args.min_ms / 1e3)))
        return 0
    trees = [("this", ROOT)] + ([("before", args.tree.resolve())] if args.tree else [])
    print(f"load before: {os.getloadavg()[0]:.2f}")
    for case in args.cases:
        for label, tree in trees:  # a process per case and tree: each first analysis is a first one
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--one", case, "--edits", str(args.edits),
                                   "--min-ms", str(args.min_ms)], capture_output=True, text=True, env=env, cwd=tree)
            if done.returncode != 0:
                print(f"  {label} {case}: failed\n{done.stderr[-2000:]}")
                continue
            report(label, case, json.loads(done.stdout.strip().splitlines()[-1]), args.top)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
