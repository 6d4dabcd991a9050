"""Python bytecodes one live validate-plus-one-retry call runs, against its two requests as bare litellm calls.

    .venv/bin/python bench/bench_live_bytecodes.py [--structured MODE] [--tree OLD_CHECKOUT] [--top N]

An operation count the machine's load cannot move, and quick (seconds, where callgrind's `--live` takes many minutes
on a loaded machine): each Python bytecode executed is counted by the function it runs in (sys.settrace's opcode
events), for multidoc_qa's live call (`LiveModel` -> `litellm.completion` with `mock_response`, the first reply `{}`,
replies not streamed), the same two requests as bare `litellm.completion` calls (the same messages and replies), and
the same call with the scripted model. It splits what the live call runs over litellm into our own code (the engine's
and the live model's) and what litellm runs beyond the bare calls because of how we call it (our arguments). C work
(pydantic's validation, JSON, dict copies) is not counted: callgrind's `bench_engine_instructions.py --live` counts it.
With `--tree`, another checkout is counted the same way, for a before/after in one run.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_COUNT = r'''
import collections, json, os, sys
root, structured, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, root)
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0000000000000000")  # nothing is sent: replies are mock_response
import litellm
import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.live import LiveModel
from contractstudio.runtime.models import ScriptedModel
contract = cs.load(root + "/samples/multidoc_qa.contract.yaml")
scenario = contract.doc.scenarios[0]
value, good = scenario.input, scenario.responses[0]
options = CallOptions(wait=False, structured_output=None if structured == "-" else structured, watch_for=None)
live = LiveModel("openai/gpt-4o-mini")
live.params = {"mock_response": good}
completion, queue, sent = litellm.completion, [], []
def answering(**kwargs):
    kwargs["mock_response"] = queue.pop(0)
    sent.append((kwargs["messages"], kwargs["mock_response"]))
    return completion(**kwargs)
litellm.completion = answering
def live_call():
    queue[:] = ["{}", good]
    contract.call(value, live, options=options)
def scripted_call():
    contract.call(value, ScriptedModel(["{}", good]), options=options)
live_call()
requests = list(sent)
def bare_calls():
    for messages, reply in requests:
        completion(model="openai/gpt-4o-mini", messages=messages, mock_response=reply)
counts = collections.Counter()
def tracer(frame, event, arg):
    frame.f_trace_opcodes = True
    if event == "opcode":
        counts[frame.f_code.co_filename.split("site-packages/")[-1].split(root + "/")[-1] + ":" + frame.f_code.co_name] += 1
    return tracer
def count(fn, n=5):
    for _ in range(10):
        fn()
    counts.clear()
    sys.settrace(tracer)
    for _ in range(n):
        fn()
    sys.settrace(None)
    harness = {"<string>:" + name for name in ("answering", "live_call", "scripted_call", "bare_calls")}
    return {k: v / n for k, v in counts.items() if k not in harness}
print(json.dumps({"live": count(live_call), "bare": count(bare_calls), "scripted": count(scripted_call)}))
'''


def counted(tree: Path, structured: str) -> dict[str, dict[str, float]]:
    import json

    done = subprocess.run([sys.executable, "-c", _COUNT, str(tree), structured, "0"], capture_output=True, text=True,
                          cwd="/tmp", check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def ours(name: str) -> bool:
    return name.startswith("contractstudio/")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--structured", default="-", choices=("-", "off", "json_object", "json_schema", "auto"))
    ap.add_argument("--tree", type=Path, help="another checkout to count the same way (e.g. the commit before a change)")
    ap.add_argument("--top", type=int, default=25, help="functions listed by what the live call adds")
    args = ap.parse_args()
    for tree in [ROOT] + ([args.tree.resolve()] if args.tree else []):
        c = counted(tree, args.structured)
        live, bare, scripted = (sum(c[k].values()) for k in ("live", "bare", "scripted"))
        own_live = sum(v for k, v in c["live"].items() if ours(k))
        own_scripted = sum(v for k, v in c["scripted"].items() if ours(k))
        theirs = sum(v for k, v in c["live"].items() if "litellm/" in k) - sum(v for k, v in c["bare"].items() if "litellm/" in k)
        print(f"{tree} (structured: {args.structured}): bytecodes per call: live {live:,.0f}, its bare litellm calls "
              f"{bare:,.0f}, over litellm {live - bare:,.0f}; scripted {scripted:,.0f}")
        print(f"  contractstudio's own: {own_live:,.0f} in the live call, {own_scripted:,.0f} in the scripted one "
              f"(the live model's and its requests' own: {own_live - own_scripted:,.0f}); in litellm's own modules "
              f"beyond the bare calls: {theirs:,.0f}; the standard library's and pydantic's beyond the bare calls "
              f"{live - bare - own_live - theirs:,.0f} (the engine's JSON, validation, contexts: the scripted call runs "
              f"{scripted - own_scripted:,.0f} there)")
        added = collections.Counter(c["live"])
        added.subtract(c["bare"])
        added.subtract({k: v for k, v in c["scripted"].items() if ours(k)})
        for name, n in sorted(added.items(), key=lambda kv: -abs(kv[1]))[:args.top]:
            if abs(n) >= 5 and not name.startswith("contractstudio/expressions"):
                print(f"  {n:8,.0f}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
