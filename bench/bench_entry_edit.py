"""One edit's analysis in a 5 MB file of one document, per entry (analysis/by_entry.py) against whole (issue 35.1).

The two one-document shapes of bench/bench_typing.py: `chain` (a pipeline of about 44,000 chained steps) and
`examples` (a contract of about 32,000 `examples:`). For each, two `Analyzer`s (analysis/incremental.py) analyze the
same sequence of edits, one edit each in turn (interleaved, so both see the same machine load):

  after   the Analyzer as it is: the edited entry read again, and the analysis per entry
  before  the same Analyzer with the analysis per entry switched off (the reading is still per entry: what the
          studio and the language server did before this round)

Edits (`--edits`): `typing` types one letter at a time into the first step's description / the first example's name
(what bench_typing.py types), `middle` the same in the entry in the middle of the list, `target` types into a step's
`next:` target (a pipeline: the step graph changes; an example's query in a contract), `rename` types into the id of
a step another step targets, `action` into a step's action (both a pipeline's only). Printed per shape and edit: CPU
seconds of one edit's analysis, min / median / max over `--keys` keys, and the longest time another thread waited to
run while the edit was analyzed (what holding the GIL costs the screen's thread: pure Python gives way every
`sys.getswitchinterval()`, one long call into C does not), against the same thread's longest wait while nothing runs
(on a loaded machine the scheduler's own delays). Each analysis's findings are compared with `check_text`'s on the
first and last key.

Run: .venv/bin/python bench/bench_entry_edit.py [--keys 15] [--cases chain examples] [--edits typing middle target
rename action]. Against another commit's code: PYTHONPATH=<its worktree> (the bench's own code stays this one's).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_typing import chain_pipeline, examples_contract

from contractstudio.analysis import by_entry
from contractstudio.analysis.check import check_text
from contractstudio.analysis.incremental import Analyzer

PLACES = {  # (shape, edit) -> the text after which keys are typed, and its occurrence (None: the middle one)
    ("chain", "typing"): ("description: the first step", 0), ("chain", "middle"): ("    description: a step in the middle", 0),
    ("chain", "target"): ("    next: b100_dispatch", 0),
    ("chain", "rename"): ("  - id: b100_dispatch", 0), ("chain", "action"): ("    action: search_nodes", 0),
    ("examples", "typing"): ("name: ex-0", 0), ("examples", "middle"): ("name: ex-1", None),
    ("examples", "target"): ("query: Why are vector databases useful?", 0),
}


class Whole(by_entry.EntriesKept):
    """The analysis per entry switched off: every analysis of one document is whole."""

    def analyze(self, source: Any, ctx: Any, expressions: Any, edited: Any = None, reading: Any = None) -> Any:
        return super().analyze(source, ctx, expressions, None, reading)


class Waits:
    """The longest time a thread that asks to run every millisecond waited, while `watch` is on."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._on = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        last = time.perf_counter()
        while not self._stop:
            time.sleep(0.001)
            now = time.perf_counter()
            if self._on.is_set():
                self.longest = max(self.longest, now - last - 0.001)
            last = now

    def watch(self, on: bool) -> None:
        if on:
            self.longest = 0.0
            self._on.set()
        else:
            self._on.clear()

    def close(self) -> None:
        self._stop = True
        self._thread.join()


def _steps(text: str) -> list[int]:
    found, at = [], text.find("\n  - id: ")
    while at >= 0:
        found.append(at)
        at = text.find("\n  - id: ", at + 1)
    return found


def place_of(text: str, marker: str, occurrence: int | None) -> int:
    if occurrence is None:
        starts, at = [], text.find(marker)
        while at >= 0:
            starts.append(at)
            at = text.find(marker, at + 1)
        return starts[len(starts) // 2] + len(marker)
    return text.index(marker) + len(marker)


def run(case: str, edit: str, keys: int, waits: Waits) -> dict[str, tuple[list[float], list[float]]]:
    text = chain_pipeline() if case == "chain" else examples_contract()
    if case == "chain" and edit == "middle":  # a description in the middle step to type into
        steps = _steps(text)
        line_end = text.index("\n", steps[len(steps) // 2] + 1)
        text = text[:line_end] + "\n    description: a step in the middle" + text[line_end:]
    path = f"big.{'pipeline' if case == 'chain' else 'contract'}.yaml"
    after, before = Analyzer(), Analyzer()
    before.entries = Whole()
    for analyzer in (after, before):
        analyzer.check(text, path)
    at = place_of(text, *PLACES[(case, edit)])
    times: dict[str, tuple[list[float], list[float]]] = {"after": ([], []), "before": ([], [])}
    for n in range(keys):
        text = text[:at] + "x" + text[at:]
        at += 1
        order = [("after", after), ("before", before)] if n % 2 == 0 else [("before", before), ("after", after)]
        for name, analyzer in order:
            waits.watch(True)
            started = time.process_time()
            report = analyzer.check(text, path)
            cpu = time.process_time() - started
            waits.watch(False)
            times[name][0].append(cpu)
            times[name][1].append(waits.longest)
            if n in (0, keys - 1):
                assert report.diagnostics == check_text(text, path).diagnostics, (case, edit, name, n)
    return times


def spread(values: list[float], scale: float = 1.0) -> str:
    return " / ".join(f"{v * scale:,.3f}" if scale == 1 else f"{v * scale:,.1f}"
                      for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=15)
    parser.add_argument("--cases", nargs="+", default=["chain", "examples"], choices=["chain", "examples"])
    parser.add_argument("--edits", nargs="+", default=["typing", "middle", "target"],
                        choices=["typing", "middle", "target", "rename", "action"])
    args = parser.parse_args()
    waits = Waits()
    idle = []
    for _ in range(7):  # the same thread's longest wait while nothing of ours runs: the machine's own delays
        waits.watch(True)
        time.sleep(0.15)
        waits.watch(False)
        idle.append(waits.longest)
    print(f"longest wait of the ticking thread while idle (7 x 150 ms): {spread(idle, 1000)} ms")
    print("| shape | edit | analysis | CPU s per key, min / median / max | longest wait of another thread, ms |")
    print("|---|---|---|---|---|")
    try:
        for case in args.cases:
            for edit in [e for e in args.edits if (case, e) in PLACES]:
                times = run(case, edit, args.keys, waits)
                for name in ("after", "before"):
                    cpu, waited = times[name]
                    print(f"| {case} | {edit} | {name} | {spread(cpu)} | {spread(waited, 1000)} |", flush=True)
    finally:
        waits.close()


if __name__ == "__main__":
    main()
