"""The machine instructions the contract's own expressions cost per call (valgrind's callgrind), per evaluation.

    .venv/bin/python bench/bench_expression_instructions.py [--runs 300] [--tree OLD_CHECKOUT] [--profile]

multidoc_qa's validate plus one retry evaluates 11 expressions of its own (issue 36.10): 2 pre conditions, 3 act
assignments, 5 post conditions and a `when`. This tool records them as the engine makes them (each check or act
expression with the names it was given) in one scripted call, then, under callgrind, evaluates each `--runs` times
as the engine does (`Check.evaluate` for a condition, `Expression.evaluate` for an act assignment, inside the call's
shared expression budget), in one process per tree, with `--zero-before` / `--dump-after` of two marker C functions
(`os.getppid`, `os.getpgrp`) around each: the instructions of one evaluation, imports and warm-up left out. With
`--tree`, another checkout is counted the same way, side by side. `--profile` prints a cProfile of the 11
evaluations instead (this tree only). `--whole-call` counts the whole call (validate plus one retry) between the same
markers instead: exact to a few instructions between runs, where `bench_engine_instructions.py`'s difference of two
processes moves by a few percent (a module's bytecode cache written in one of them, the collector's timing).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PIECES = r'''
import sys
from types import MethodType  # the engine's own methods, not the recording ones below
root, runs, profile, whole = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4] == "1"
sys.path.insert(0, root)
import contractstudio as cs
from contractstudio.expressions import language
from contractstudio.expressions.sandbox import ExpressionBudget, shared_expression_budget
from contractstudio.runtime import conditions
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.models import ScriptedModel

contract = cs.load(root + "/samples/multidoc_qa.contract.yaml")
scenario = contract.doc.scenarios[0]
seen, pieces = set(), []
check_evaluate, expression_evaluate = conditions.Check.evaluate, language.Expression.evaluate

def recording_check(self, values, explain=True):
    if ("check", id(self)) not in seen:
        seen.add(("check", id(self)))
        pieces.append((f"{self.label}: {self.source}", MethodType(check_evaluate, self), dict(values)))
    return check_evaluate(self, values, explain)

acts = {id(e): name for name, e in contract.plan.act_assign.items()}
def recording_expression(self, values, **kw):
    if id(self) in acts and ("act", id(self)) not in seen:
        seen.add(("act", id(self)))
        pieces.append((f"act.assign.{acts[id(self)]}: {self.src}", MethodType(expression_evaluate, self), dict(values)))
    return expression_evaluate(self, values, **kw)

conditions.Check.evaluate, language.Expression.evaluate = recording_check, recording_expression
contract.call(scenario.input, ScriptedModel(["{}", scenario.responses[0]]), options=CallOptions(wait=False))
conditions.Check.evaluate, language.Expression.evaluate = check_evaluate, expression_evaluate
if whole:
    options = CallOptions(wait=False)
    pieces = [("the whole call (validate + one retry)", lambda _values: contract.call(
        scenario.input, ScriptedModel(["{}", scenario.responses[0]]), options=options), None)]

import os
marker_start, marker_end = os.getppid, os.getpgrp  # C functions callgrind can name (a Python function is not one)

budget = ExpressionBudget(limit=10**15, what="this bench")
with shared_expression_budget(budget):
    for _label, fn, values in pieces:  # warm-up: closures built, caches filled
        for _ in range(50):
            fn(values)
    import gc
    gc.collect()
    gc.freeze()
    if profile:
        import cProfile, pstats
        prof = cProfile.Profile()
        prof.enable()
        for _label, fn, values in pieces:
            for _ in range(runs):
                fn(values)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    else:
        for label, fn, values in pieces:
            print("PIECE", label, flush=True)
            marker_start()
            for _ in range(runs):
                fn(values)
            marker_end()
'''


def count(tree: Path, runs: int, whole: bool = False) -> list[tuple[str, float]]:
    """(piece, instructions per evaluation) for each of the call's evaluations, in the order the call makes them."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p", "--dump-instr=no",
             "--zero-before=os_getppid", "--dump-after=os_getpgrp", "--collect-atstart=yes",
             sys.executable, "-c", _PIECES, str(tree), str(runs), "0", "1" if whole else "0"],
            capture_output=True, text=True, cwd="/tmp", check=True)
        labels = [line[6:] for line in done.stdout.splitlines() if line.startswith("PIECE ")]
        dumps = sorted((p for p in os.listdir(out) if re.fullmatch(r"cg\.\d+\.\d+", p)), key=lambda p: int(p.rsplit(".", 1)[1]))
        totals = []
        for name in dumps:
            text = Path(out, name).read_text()
            found = re.search(r"^summary:\s*(\d+)", text, re.M) or re.search(r"^totals:\s*(\d+)", text, re.M)
            totals.append(int(found.group(1)) if found else 0)
    if len(totals) != len(labels):
        raise SystemExit(f"{len(labels)} pieces but {len(totals)} dumps:\n{done.stderr[-2000:]}")
    return [(label, total / runs) for label, total in zip(labels, totals, strict=True)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--tree", type=Path, help="another checkout to count the same way (e.g. the commit before a change)")
    ap.add_argument("--profile", action="store_true", help="a cProfile of the evaluations instead (this tree)")
    ap.add_argument("--whole-call", action="store_true", help="the whole call between the markers instead")
    args = ap.parse_args()
    if args.profile:
        subprocess.run([sys.executable, "-c", _PIECES, str(ROOT), str(args.runs), "1", "0"], check=True, cwd="/tmp")
        return 0
    trees = [ROOT] + ([args.tree.resolve()] if args.tree else [])
    counted = {tree: count(tree, args.runs, args.whole_call) for tree in trees}
    for index, (label, here) in enumerate(counted[ROOT]):
        line = f"{here:>10,.0f}  {label}"
        if args.tree:
            there = counted[trees[1]][index][1]
            line = f"{here:>10,.0f} {there:>10,.0f} ({here / there - 1:+.0%})  {label}"
        print(line)
    total = sum(n for _, n in counted[ROOT])
    if args.tree:
        other = sum(n for _, n in counted[trees[1]])
        print(f"{total:>10,.0f} {other:>10,.0f} ({total / other - 1:+.0%})  all {len(counted[ROOT])} (this tree, {args.tree})")
    else:
        print(f"{total:>10,.0f}  all {len(counted[ROOT])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
