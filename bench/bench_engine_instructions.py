"""The machine instructions one contracted call costs (valgrind's callgrind): a measure the machine's load cannot move.

    .venv/bin/python bench/bench_engine_instructions.py [--calls 200] [--tree OLD_CHECKOUT] [--first-reply-valid]
                                                        [--live [--structured MODE]]

On the project's shared 2-core machine the CPU time of a call moves several-fold with the other sessions' load, so a
change of 10-20% in the engine's own work cannot be seen in `bench_engine.py`'s microseconds. Instructions can: each
tree's process is run under callgrind twice, with 0 and with `--calls` calls of multidoc_qa (scripted model, after
the same warm-up), and the difference divided by the calls is what one call executes (the imports and the warm-up
cancel out). Default: validate plus one retry (issue 36.10: the first reply `{}`, the second the scenario's).
With `--tree`, another checkout's engine is counted the same way, for a before/after in one run. Slow: each process
runs about 50 times slower under callgrind (a few minutes of CPU in all).

With `--live` (issue 36.10, over litellm): the same call through the live model (`LiveModel` -> `litellm.completion`
with `mock_response`, replies not streamed), and, in a third process, as many bare `litellm.completion` calls with the
same messages and replies as the live calls made: the live call's count minus theirs is what the call costs over
litellm (our own code and whatever litellm does only because of how we call it). litellm leaves no thread running
(its success logging is skipped when nobody listens), so the count is the call's own.
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
root, kind, structured, calls, replies = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
sys.path.insert(0, root)
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0000000000000000")  # nothing is sent: replies are mock_response
import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.models import ScriptedModel
contract = cs.load(root + "/samples/multidoc_qa.contract.yaml")
scenario = contract.doc.scenarios[0]
replies = [r if r != "GOOD" else scenario.responses[0] for r in replies]
options = CallOptions(wait=False, structured_output=None if structured == "-" else structured)
model = lambda: ScriptedModel(list(replies))
if kind != "scripted":
    from contractstudio.runtime.live import LiveModel
    import litellm
    options.watch_for = None  # replies not streamed: litellm's stream wrapper is not what is counted
    live, completion, sent, queue = LiveModel("openai/gpt-4o-mini"), litellm.completion, [], []
    live.params = {"mock_response": replies[-1]}
    def answering(**kwargs):  # each request gets the next reply; the messages each was sent with are kept
        kwargs["mock_response"] = queue.pop(0)
        sent.append((kwargs["messages"], kwargs["mock_response"]))
        return completion(**kwargs)
    litellm.completion = answering
    def model():
        queue[:] = replies
        return live
    contract.call(scenario.input, model(), options=options)
    litellm.completion = completion
    if kind == "bare":  # the same requests as bare calls: the same messages and replies, nothing else
        def call():
            for messages, reply in sent:
                completion(model="openai/gpt-4o-mini", messages=messages, mock_response=reply)
if kind != "bare":
    if kind == "live":
        litellm.completion = answering
    def call():
        contract.call(scenario.input, model(), options=options)
for _ in range(30):
    call()
import gc
gc.collect()
gc.freeze()  # the heap so far (imports, warm-up) is never walked again: a full collection landing inside one of the
             # two processes and not the other moved a run's count by 15% (the young collections still count)
for _ in range(calls):
    call()
'''


def instructions(tree: Path, kind: str, structured: str, calls: int, replies: list[str]) -> int:
    """Instructions callgrind counts for a process that makes `calls` calls of `kind` after the warm-up."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _CALLS,
                           str(tree), kind, structured, str(calls), *replies], capture_output=True, text=True, cwd="/tmp",
                          check=True)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind said no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--tree", type=Path, help="another checkout to count the same way (e.g. the commit before a change)")
    ap.add_argument("--first-reply-valid", action="store_true", help="one reply, valid: no retry")
    ap.add_argument("--live", action="store_true",
                    help="through the live model (litellm, mock_response), less as many bare litellm.completion calls")
    ap.add_argument("--structured", default="-", choices=("-", "off", "json_object", "json_schema", "auto"),
                    help="the calls' structure mode (default: the contract's own)")
    args = ap.parse_args()
    replies = ["GOOD"] if args.first_reply_valid else ["{}", "GOOD"]
    trees = [ROOT] + ([args.tree.resolve()] if args.tree else [])
    what = "one reply" if len(replies) == 1 else "validate + one retry"
    per_call = {}
    for tree in trees:
        def count(kind: str, tree: Path = tree) -> float:
            return (instructions(tree, kind, args.structured, args.calls, replies)
                    - instructions(tree, kind, args.structured, 0, replies)) / args.calls

        if args.live:
            live, bare = count("live"), count("bare")
            per_call[tree] = live - bare
            print(f"{tree}: {live:,.0f} instructions per live call ({what}), {bare:,.0f} for its bare litellm calls: "
                  f"{live - bare:,.0f} over litellm")
        else:
            per_call[tree] = count("scripted")
            print(f"{tree}: {per_call[tree]:,.0f} instructions per call ({what})")
    if args.tree:
        print(f"this tree / {args.tree}: {per_call[ROOT] / per_call[trees[1]]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
