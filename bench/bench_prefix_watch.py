"""What the prefix watch costs a streamed reply (issue 37.2): CPU per reply and per chunk, next to the whole-reply check.

    .venv/bin/python bench/bench_prefix_watch.py [--rounds N]

A reply of about 1 KB (a label, a reason, tags, a score, a summary the monotone post conditions read) is fed to the
watch the way a stream feeds it: the whole reply so far after each chunk of 4 characters (about a token). Three
shapes: `json_reply: strict` (every character read and every value judged), `lenient` with the JSON in a ```json
fence after a sentence (read from the fence on), and `lenient` with bare JSON (nothing can be decided: only the
fence search runs). The whole-reply check (extract_json + the output type + the post conditions) is timed on the
same reply. Best of N rounds, CPU time (time.process_time), so other processes' load does not enter.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import contractstudio as cs  # noqa: E402
from contractstudio.reading.replies import extract_json  # noqa: E402
from contractstudio.runtime.prefix_watch import watch_for  # noqa: E402

CONTRACT = """kind: contract
name: review
types:
  Review:
    fields:
      label: {type: "Literal['positive', 'negative', 'mixed']"}
      reason: {type: str, max_length: 400}
      tags: {type: "list[str]", max_length: 8}
      score: {type: int, ge: 0, le: 100}
      code: {type: str, pattern: "^[A-Z]{2}-[0-9]{3}$"}
      summary: {type: str}
input: str
output: Review
prompt: Review it.
json_reply: %s
post:
  - assert: len(output.summary) <= 600
    monotone: true
  - assert: "'TODO' not in output.summary"
    monotone: true
"""
VALUE = {"label": "mixed", "reason": "The battery lasts long but the screen scratches easily. " * 4,
         "tags": ["battery", "screen", "price", "support"], "score": 64, "code": "AB-123",
         "summary": "A solid phone with a fragile screen; worth it on sale, not at full price. " * 6}
CHUNK = 4


def _contract(json_reply: str) -> cs.Contract:  # type: ignore[name-defined]
    folder = Path(tempfile.mkdtemp())
    path = folder / f"review_{json_reply}.contract.yaml"
    path.write_text(CONTRACT % json_reply)
    return cs.load(path)


def _best(fn: Callable[[], object], rounds: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(repeat):
            fn()
        best = min(best, (time.process_time() - start) / repeat)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    doc = json.dumps(VALUE, indent=1)
    shapes = {"strict, bare JSON": ("strict", doc),
              "lenient, in a ```json fence": ("lenient", f"Here is the review:\n```json\n{doc}\n```\n"),
              "lenient, bare JSON": ("lenient", doc)}
    print(f"reply of {len(doc):,} characters, fed after each {CHUNK} characters ({len(doc) // CHUNK} chunks)")
    print(f"{'shape':32} {'watch per reply':>16} {'per chunk':>10} {'whole-reply check':>18}")
    for label, (json_reply, reply) in shapes.items():
        watched, chunks, whole = _measure(json_reply, reply, args.rounds)
        print(f"{label:32} {watched * 1e6:>13,.0f} us {watched * 1e6 / chunks:>7,.2f} us {whole * 1e6:>15,.0f} us")


def _measure(json_reply: str, reply: str, rounds: int) -> tuple[float, int, float]:
    """(CPU seconds of the watch over one reply, its chunks, CPU seconds of the whole-reply check)."""
    plan = _contract(json_reply).plan
    ends = list(range(CHUNK, len(reply), CHUNK)) + [len(reply)]

    def watch_once() -> None:
        watch = watch_for(plan, "off", {"input": "x"})
        assert watch is not None
        for end in ends:
            assert watch.feed(reply[:end]) is None

    def whole_once() -> None:
        parsed, problem = extract_json(reply, strict=json_reply == "strict")
        assert problem is None
        output, errors = plan.output.validate(parsed)
        assert not errors
        assert all(check.evaluate({"input": "x", "output": output})[1] for check in plan.post)

    watch_once()  # classification cached, patterns compiled
    return _best(watch_once, rounds, 20), len(ends), _best(whole_once, rounds, 200)

if __name__ == "__main__":
    main()
