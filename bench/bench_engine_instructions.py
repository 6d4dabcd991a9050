"""The machine instructions one contracted call costs (valgrind's callgrind): a measure the machine's load cannot move.

    .venv/bin/python bench/bench_engine_instructions.py [--calls 200] [--tree OLD_CHECKOUT] [--first-reply-valid]

On the project's shared 2-core machine the CPU time of a call moves several-fold with the other sessions' load, so a
change of 10-20% in the engine's own work cannot be seen in `bench_engine.py`'s microseconds. Instructions can: each
tree's process is run under callgrind twice, with 0 and with `--calls` calls of multidoc_qa (scripted model, after
the same warm-up), and the difference divided by the calls is what one call executes (the imports and the warm-up
cancel out). Default: validate plus one retry (issue 36.10: the first reply `{}`, the second the scenario's).
With `--tree`, another checkout's engine is counted the same way, for a before/after in one run. Slow: each process
runs about 50 times slower under callgrind (a few minutes of CPU in all).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CALLS = r'''
import os, sys
root, calls, replies = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
sys.path.insert(0, root)
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.models import ScriptedModel
contract = cs.load(root + "/samples/multidoc_qa.contract.yaml")
scenario = contract.doc.scenarios[0]
replies = [r if r != "GOOD" else scenario.responses[0] for r in replies]
options = CallOptions(wait=False)
for _ in range(30):
    contract.call(scenario.input, ScriptedModel(list(replies)), options=options)
import gc
gc.collect()
for _ in range(calls):
    contract.call(scenario.input, ScriptedModel(list(replies)), options=options)
'''


def instructions(tree: Path, calls: int, replies: list[str]) -> int:
    """Instructions callgrind counts for a process that makes `calls` calls after the warm-up."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _CALLS,
                           str(tree), str(calls), *replies], capture_output=True, text=True, cwd="/tmp", check=True)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind said no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--tree", type=Path, help="another checkout to count the same way (e.g. the commit before a change)")
    ap.add_argument("--first-reply-valid", action="store_true", help="one reply, valid: no retry")
    args = ap.parse_args()
    replies = ["GOOD"] if args.first_reply_valid else ["{}", "GOOD"]
    trees = [ROOT] + ([args.tree.resolve()] if args.tree else [])
    per_call = {}
    for tree in trees:
        per_call[tree] = (instructions(tree, args.calls, replies) - instructions(tree, 0, replies)) / args.calls
        print(f"{tree}: {per_call[tree]:,.0f} instructions per call ({'one reply' if len(replies) == 1 else 'validate + one retry'})")
    if args.tree:
        print(f"this tree / {args.tree}: {per_call[ROOT] / per_call[trees[1]]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
