"""The editing help's symbols after one edit in a 5 MB file of one document, and the time from the key to a rename
(issue 35.1, ninth round).

The two one-document shapes of bench/bench_typing.py (`chain`: ~38,000 chained steps; `examples`: ~32,000
examples). A `LiveDocument` (editing/live.py) analyzes the text and collects its symbols, as the studio does; then,
per key (a letter typed into the first step's description / the first example's name, as bench_entry_edit.py's
`typing`): the analysis, then `collect_symbols` (the studio's worker), then a rename of a step id / an input field
(what Shift+F6 waits for). Printed: CPU seconds of the symbols, and wall seconds from the key's analysis starting to
the rename's edits being ready, min / median / max over `--keys` keys.

`--tree DIR` runs the same measure with another checkout's code (its `contractstudio` first on sys.path), in a
child process per shape, alternating with this checkout's: the symbols before this round were collected whole.

Run: .venv/bin/python bench/bench_symbols_edit.py [--keys 7] [--cases chain examples] [--tree OLD_CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the name renamed, after this text at this column: the step a `next:` names, the input field `query` of an example
RENAME_AT = {"chain": ("    next: ", 12), "examples": ("      query: ", 8)}
TYPE_AT = {"chain": "description: the first step", "examples": "name: ex-0"}


def measure(case: str, keys: int) -> dict[str, list[float]]:
    sys.path.insert(0, str(HERE))
    from bench_typing import chain_pipeline, examples_contract

    from contractstudio.editing import rename
    from contractstudio.editing.live import LiveDocument

    text = chain_pipeline() if case == "chain" else examples_contract()
    path = f"big.{'pipeline' if case == 'chain' else 'contract'}.yaml"
    doc = LiveDocument(path)
    report = doc.analyze(text, None, path, symbols=False)
    doc.accept(doc.edit(text), report)
    doc.collect_symbols(report)
    at = text.index(TYPE_AT[case]) + len(TYPE_AT[case])
    out: dict[str, list[float]] = {"symbols_cpu": [], "rename_wall": [], "analysis_cpu": []}
    for _ in range(keys):
        text = text[:at] + "x" + text[at:]
        at += 1
        version = doc.edit(text)
        wall, cpu = time.perf_counter(), time.process_time()
        report = doc.analyze(text, None, path, symbols=False)
        doc.accept(version, report)
        analysed = time.process_time()
        doc.collect_symbols(report)
        out["symbols_cpu"].append(time.process_time() - analysed)
        out["analysis_cpu"].append(analysed - cpu)
        marker, column = RENAME_AT[case]
        line = text.count("\n", 0, text.index(marker, at)) + 1
        result = rename(report, line, column, "renamed_x")
        out["rename_wall"].append(time.perf_counter() - wall)
        assert result.edits, result.refused
    return out


def spread(values: list[float]) -> str:
    return " / ".join(f"{v:,.3f}" for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=7)
    parser.add_argument("--cases", nargs="+", default=["chain", "examples"], choices=["chain", "examples"])
    parser.add_argument("--tree", help="another checkout to measure alongside (before)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.keys)))
        return
    trees = [("after", HERE.parent)] + ([("before", Path(args.tree).resolve())] if args.tree else [])
    print(f"load average at start: {os.getloadavg()}")
    print("| shape | code | symbols CPU s per key | key to rename ready, wall s | analysis CPU s |")
    print("|---|---|---|---|---|")
    for case in args.cases:
        for name, tree in trees:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            got = subprocess.run([sys.executable, __file__, "--child", case, "--keys", str(args.keys)], env=env,
                                 capture_output=True, text=True, check=True, cwd=tree)
            r = json.loads(got.stdout.strip().splitlines()[-1])
            print(f"| {case} | {name} | {spread(r['symbols_cpu'])} | {spread(r['rename_wall'])} | {spread(r['analysis_cpu'])} |",
                  flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
