"""Issue 37, point 4: early stops measured on a real model, against waiting for the whole reply.

Starts llama-cpp-python's server with SmolLM2-135M-Instruct on a free loopback port (tests/real_model.py's start),
and calls the sentiment contract of samples/local/ (structured outputs off, where a small model breaks clauses most;
`--strict`: as `json_reply: strict`) on each review of the bundled dataset
twice: with the prefix watch (replies cut at their first broken clause) and without (every reply read whole). Prints,
over all rows and over the rows that needed a remedy in either run: completion tokens, requests, wall time, early stops.
Run: .venv/bin/python bench/bench_early_stop.py [--rows 40]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from real_model import MISSING, gguf_path, start, stop  # noqa: E402 - the tests' server start, one copy

CONTRACT = ROOT / "samples" / "local" / "sentiment.contract.yaml"
DATA = ROOT / "samples" / "local" / "reviews.rows.jsonl"


def run(contract: Any, api_base: str, rows: list[Any], watched: bool) -> list[dict[str, Any]]:
    """Each row's call: completion tokens, requests, seconds, early stops, whether it needed a remedy."""
    from contractstudio.runtime.call_state import CallOptions
    from contractstudio.runtime.events import EarlyStop, ModelReply

    options = CallOptions(wait=False, structured_output="off", **({} if watched else {"watch_for": None}))
    out = []
    for row in rows:
        started = time.perf_counter()
        result = contract.session(row, "openai/smollm2", api_base=api_base, options=options).run(raise_on_violation=False)
        replies = result.trace.of(ModelReply)
        out.append({"tokens": sum(r.completion_tokens for r in replies), "requests": len(replies),
                    "seconds": time.perf_counter() - started, "stops": len(result.trace.of(EarlyStop)),
                    "remedied": result.attempts > 0, "ok": result.successful})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--strict", action="store_true", help="json_reply: strict (a lenient reply is decided only "
                        "inside a ```json fence)")
    args = parser.parse_args()
    gguf = gguf_path()
    if gguf is None:
        raise SystemExit(MISSING)
    import contractstudio as cs

    with tempfile.TemporaryDirectory() as folder:
        strict = Path(folder) / "sentiment.contract.yaml"
        strict.write_text(CONTRACT.read_text() + ("json_reply: strict\n" if args.strict else ""))
        contract = cs.load(strict)
        rows = [json.loads(line)["input"] for line in DATA.read_text().splitlines()[: args.rows]]
        server = start(gguf, Path(folder))
        try:
            whole = run(contract, server.api_base, rows, watched=False)
            cut = run(contract, server.api_base, rows, watched=True)
        finally:
            stop(server.process)
    remedied = [i for i in range(len(rows)) if whole[i]["remedied"] or cut[i]["remedied"]]
    print(f"{len(rows)} rows, {len(remedied)} needing a remedy in either run; structured outputs off, json_reply "
          f"{'strict' if args.strict else 'lenient'}")
    print(f"{'':28}{'whole replies':>16}{'early stops':>16}")
    for name, picked in (("all rows", range(len(rows))), ("remedied rows", remedied)):
        for key, label in (("tokens", "completion tokens"), ("requests", "requests"), ("seconds", "wall time (s)"),
                           ("stops", "replies cut early"), ("ok", "successful")):
            a = sum(whole[i][key] for i in picked)
            b = sum(cut[i][key] for i in picked)
            shown = (f"{a:>16.1f}{b:>16.1f}" if key == "seconds" else f"{a:>16}{b:>16}")
            print(f"{name + ': ' + label:<28}{shown}")


if __name__ == "__main__":
    main()
