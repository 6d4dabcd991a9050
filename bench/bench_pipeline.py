"""`check` on generated pipelines of 1,000 and 10,000 steps with routers, against libyaml's composer.

Goals (issue 3): the analysis stays within 3x the time PyYAML's C loader needs
to compose the same text (`yaml.compose(text, Loader=yaml.CSafeLoader)`), and
time grows linearly: 10k steps within 12x of 1k steps. Both sides are measured
in the same process and run (best of N CPU times), so machine speed cancels
out; interpreter start-up is excluded. Timed twice: with the cyclic GC paused
(the algorithms' own cost) and with it on (what a user sees; CPython's full
collections make every allocation-heavy step, libyaml's compose included,
grow faster than linearly on big heaps).
Run: .venv/bin/python bench/bench_pipeline.py [--runs 5] [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

import yaml

from contractstudio.analysis.check import check_text, load, run_rules
from contractstudio.analysis.shape import validate
from contractstudio.reading.source import read_source

BLOCK = 7  # steps per routed block


def generate(steps: int) -> str:
    """A chain of routed blocks: router model -> prefix_router -> 3 retrievals or direct -> join -> next block."""
    blocks = max(1, steps // BLOCK)
    lines = [
        "kind: pipeline",
        f"name: generated_{steps}",
        "entry_step_id: b0_route",
        "inputs: [user_query]",
        "routers:",
        "  router_v1:",
        '    prefixes: ["[SEMANTIC:]", "[BM25:]", "[GRAPH:]", "[DIRECT:]"]',
        "actions:",
        "  rerank:",
        "    requires_state: [context_blocks]",
        "    requires_any_state: [[followup_query, retrieval_query]]",
        "    requires_step: [top_k]",
        "    ensures_state: [context_blocks]",
        "steps:",
    ]
    for b in range(blocks):
        nxt = f"b{b + 1}_route" if b + 1 < blocks else "persist"
        p = f"b{b}_"
        lines += [
            f"  - id: {p}route",
            "    action: call_model",
            "    prompt: router_v1",
            f"    next: {p}dispatch",
            f"  - id: {p}dispatch",
            "    action: prefix_router",
            '    semantic_prefix: "[SEMANTIC:]"',
            f"    on_semantic: {p}search",
            '    bm25_prefix: "[BM25:]"',
            f"    on_bm25: {p}search",
            '    graph_prefix: "[GRAPH:]"',
            f"    on_graph: {p}search_graph",
            '    direct_prefix: "[DIRECT:]"',
            f"    on_direct: {p}answer",
            f"    on_other: {p}answer",
            f"  - id: {p}search",
            "    action: search_nodes",
            f"    next: {p}rerank",
            f"  - id: {p}search_graph",
            "    action: search_nodes",
            f"    next: {p}expand",
            f"  - id: {p}expand",
            "    action: expand_dependency_tree",
            f"    next: {p}rerank",
            f"  - id: {p}rerank",
            "    action: rerank",
            "    top_k: 5",
            f"    next: {p}answer",
            f"  - id: {p}answer",
            "    action: call_model",
            "    prompt: answer_v1",
            f"    next: {nxt}",
        ]
    lines += ["  - id: persist", "    action: persist_turn", "    end: true", ""]
    return "\n".join(lines)


def best(fn: Callable[[], object], runs: int, collect: bool) -> float:
    """Best of `runs`; with `collect` off, the cyclic GC is paused while timing (the algorithm's own cost)."""
    times = []
    for _ in range(runs):
        gc.collect()
        if not collect:
            gc.disable()
        try:
            t0 = time.process_time()  # CPU time of this process: other processes on the machine do not count
            fn()
            times.append(time.process_time() - t0)
        finally:
            gc.enable()
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = ap.parse_args()
    for collect in (False, True):
        print(f"\n== cyclic GC {'on (as a user runs it)' if collect else 'paused while timing (algorithmic cost)'}")
        print(f"{'steps':>7} {'lines':>7} {'compose':>9} {'check':>9} {'= source':>9} {'+ shape':>9} {'+ pipeline':>11} "
              f"{'+ rest':>8} {'check/compose':>14}")
        results: dict[int, tuple[float, float]] = {}
        for n in args.sizes:
            text = generate(n)
            report = check_text(text, "generated.yaml")
            assert not report.diagnostics, report.diagnostics[:3]  # the generated pipeline is clean
            loaded = report.documents[0]
            compose = best(lambda text=text: yaml.compose(text, Loader=yaml.CSafeLoader), args.runs, collect)
            check = best(lambda text=text: check_text(text, "generated.yaml"), args.runs, collect)
            # Where check's time goes: reading nodes with spans, shape validation, the pipeline rules, the rest
            source = best(lambda text=text: read_source(text, "generated.yaml"), args.runs, collect)
            doc = read_source(text, "generated.yaml").documents[0]
            shape = best(lambda doc=doc: validate(doc, "generated.yaml"), args.runs, collect)
            # A fresh document each run: its facts (step graph, state flow) are computed once per analysis, as in check.
            rules = best(lambda d=loaded: run_rules(load(d.file, d.text, d.doc, d.model, d.ctx)), args.runs, collect)
            rest = max(0.0, check - source - shape - rules)
            results[n] = (compose, check)
            steps = len(loaded.model.steps)  # type: ignore[union-attr]
            ms = " ".join(f"{v * 1000:>7.1f}ms" for v in (compose, check, source, shape))
            print(f"{steps:>7} {text.count(chr(10)):>7} {ms} {rules * 1000:>9.1f}ms {rest * 1000:>6.1f}ms {check / compose:>13.2f}x")
        if len(args.sizes) >= 2:
            small, large = args.sizes[0], args.sizes[-1]
            growth = results[large][1] / results[small][1]
            print(f"check time {large} / {small} steps: {growth:.2f}x (goal <= {1.2 * large / small:.0f}x: linear); "
                  f"compose: {results[large][0] / results[small][0]:.2f}x")
            worst = max(c / k for k, c in results.values())
            print(f"check / compose, worst size: {worst:.2f}x (goal <= 3x)")


if __name__ == "__main__":
    main()
