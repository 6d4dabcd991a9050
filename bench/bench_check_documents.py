"""`check` of one file holding N YAML documents, for growing N: the time must grow linearly.

Goal (issue 10.2): doubling the number of documents at most about doubles the time
(it was quadratic: the secrets scan read the whole file once per document, and
positions, syntax recovery and long type strings re-read the text per item). Each
size is measured in the same run, best of N, so machine speed cancels out in the ratios.
Run: .venv/bin/python bench/bench_check_documents.py [--runs 3] [--sizes 2000 4000 8000]
"""

from __future__ import annotations

import argparse
import time

from contractstudio.analysis.check import check_text

TOOLS = ("kind: tools\nname: t{i}\ndescription: d\ntools:\n  - name: f{i}\n    description: does f\n"
         "    params:\n      title: {{type: str, description: T}}\n")
CONTRACT = """kind: contract
name: c{i}
prompt: Answer.
types:
  In: {{description: In, fields: {{text: {{type: str, description: T}}}}}}
  Out: {{description: Out, fields: {{ok: {{type: bool, description: B}}}}}}
input: In
output: Out
on_failure: raise
pre:
  - assert: "input.text != ''
      and input.txet != ''"
"""


def best_of(text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        check_text(text, "bench.yaml")
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 4000, 8000])
    args = ap.parse_args()
    check_text(TOOLS.format(i=0), "warm.yaml")  # rule modules imported before timing
    cases = [
        ("tools documents", lambda n: "---\n".join(TOOLS.format(i=i) for i in range(n))),
        ("contracts, a finding each", lambda n: "---\n".join(CONTRACT.format(i=i) for i in range(n))),
        ("tools, syntax error at the end", lambda n: "---\n".join(TOOLS.format(i=i) for i in range(n)) + "bad: [\n"),
        ("one type string of N literals", lambda n: "kind: tools\nname: t\ntools:\n  - name: f\n    params:\n"
                                                    "      x: {type: \"Literal[" + ", ".join(f"'v{i}'" for i in range(n * 5)) + "]\"}\n"),
    ]
    for name, make in cases:
        previous, prev_n = 0.0, 0
        for n in args.sizes:
            seconds = best_of(make(n), args.runs)
            ratio = f"  x{seconds / previous:4.2f} for x{n / prev_n:g} documents" if previous else ""
            print(f"{name:34s} N={n:6d}: {seconds * 1000:8.1f} ms{ratio}")
            previous, prev_n = seconds, n
    print("goal: each doubling of N costs at most about 2.2x (linear), never 4x (quadratic)")


if __name__ == "__main__":
    main()
