"""`check` on generated pipelines of 1,000 and 10,000 steps with routers, against libyaml's composer.

Goals (issue 3): the analysis stays within 3x the time PyYAML's C loader needs
to compose the same text (`yaml.compose(text, Loader=yaml.CSafeLoader)`), and
time grows linearly: 10k steps within 12x of 1k steps. Both sides are measured
in the same process and run, compose and check interleaved pair by pair (CPU
time; the ratios are printed as min / median / max over the pairs), so machine
speed cancels out; interpreter start-up is excluded. Timed twice: with the
cyclic GC paused (the algorithms' own cost) and with it on. Nothing of an
earlier analysis is alive while compose and check are timed: with the GC on,
every full collection walks the whole heap, so a report kept by the bench made
compose (which does not pause the GC) look up to 4x slower than in a fresh
process, and check (which does) look faster than compose. The columns that
split check's time (source, shape, rules) are best of N, measured afterwards.
Run: .venv/bin/python bench/bench_pipeline.py [--runs 9] [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
import gc
import statistics
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


DENSE_BLOCK = 15  # steps per block of the dense generator


def generate_dense(steps: int) -> str:
    """A dense, realistic pipeline: per block three routers with different prefix sets, branches that re-join,
    custom actions with requires / ensures, config keys and comments (issue 15's dense 10,000-step file)."""
    blocks = max(1, steps // DENSE_BLOCK)
    lines = [
        "# A dense, realistic retrieval pipeline: every block routes three times (retrieval mode,",
        "# relevance grading, answer verification), branches re-join, custom actions declare contracts.",
        "kind: pipeline",
        f"name: dense_{steps}",
        "description: Route, retrieve, grade, answer and verify, block after block.",
        "entry_step_id: b0_route",
        "inputs: [user_query]                     # set before the first step",
        "routers:                                 # model output contracts",
        "  router_v1:",
        "    description: Picks a retrieval mode and rewrites the question as a search query.",
        '    prefixes: ["[SEMANTIC:]", "[BM25:]", "[GRAPH:]", "[DIRECT:]"]',
        "  grader_v2:",
        "    description: Grades the retrieved context against the question.",
        '    prefixes: ["[RELEVANT:]", "[PARTIAL:]", "[IRRELEVANT:]"]',
        "  verifier_v3:",
        "    description: Checks the answer and asks for citations when it lacks them.",
        '    prefixes: ["[OK:]", "[CITE:]"]',
        "actions:                                 # contracts of custom actions",
        "  rerank:",
        "    description: Reorders the retrieved context by relevance to the query.",
        "    requires_state: [context_blocks]",
        "    requires_any_state: [[followup_query, retrieval_query]]",
        "    requires_step: [top_k]",
        "    ensures_state: [context_blocks]",
        "  summarize_context:",
        "    description: Condenses partially relevant context into a short summary.",
        "    requires_state: [context_blocks, last_model_response]",
        "    requires_step: [max_words]",
        "    ensures_state: [context_summary]",
        "  add_citations:",
        "    description: Attaches the sources the answer relies on.",
        "    requires_state: [last_model_response]",
        "    requires_step: [style]",
        "    ensures_state: [citations]",
        "steps:",
    ]
    for b in range(blocks):
        nxt = f"b{b + 1}_route" if b + 1 < blocks else "persist"
        p = f"b{b}_"
        lines += [
            f"  # block {b}: route the question, retrieve by mode, grade, answer, verify",
            f"  - id: {p}route",
            "    action: call_model",
            "    prompt: router_v1                    # emits one of router_v1's prefixes",
            "    temperature: 0.0",
            f"    next: {p}dispatch",
            f"  - id: {p}dispatch",
            "    action: prefix_router",
            '    semantic_prefix: "[SEMANTIC:]"',
            f"    on_semantic: {p}search",
            '    bm25_prefix: "[BM25:]"',
            f"    on_bm25: {p}search",
            '    graph_prefix: "[GRAPH:]"',
            f"    on_graph: {p}seed",
            '    direct_prefix: "[DIRECT:]"',
            f"    on_direct: {p}answer",
            f"    on_other: {p}clarify                # unrecognised model output",
            f"  - id: {p}search",
            "    action: search_nodes",
            "    top_k: 20",
            f"    next: {p}rerank",
            f"  - id: {p}seed",
            "    action: search_nodes",
            "    top_k: 8",
            f"    next: {p}expand",
            f"  - id: {p}expand",
            "    action: expand_dependency_tree",
            "    depth: 2",
            f"    next: {p}fetch",
            f"  - id: {p}fetch",
            "    action: fetch_node_texts",
            f"    next: {p}rerank",
            f"  - id: {p}rerank                       # the keyword, semantic and graph branches re-join here",
            "    action: rerank",
            "    top_k: 5",
            f"    next: {p}grade",
            f"  - id: {p}grade",
            "    action: call_model",
            "    prompt: grader_v2",
            f"    next: {p}judge",
            f"  - id: {p}judge",
            "    action: prefix_router",
            '    relevant_prefix: "[RELEVANT:]"',
            f"    on_relevant: {p}answer",
            '    partial_prefix: "[PARTIAL:]"',
            f"    on_partial: {p}summarize",
            '    irrelevant_prefix: "[IRRELEVANT:]"',
            f"    on_irrelevant: {p}clarify",
            f"    on_other: {p}answer",
            f"  - id: {p}summarize",
            "    action: summarize_context",
            "    max_words: 200",
            f"    next: {p}answer",
            f"  - id: {p}clarify",
            "    action: call_model",
            "    prompt: clarify_v1",
            f"    next: {p}answer",
            f"  - id: {p}answer                       # every branch re-joins here",
            "    action: call_model",
            "    prompt: answer_v1",
            "    max_tokens: 400",
            f"    next: {p}verify",
            f"  - id: {p}verify",
            "    action: call_model",
            "    prompt: verifier_v3",
            f"    next: {p}check",
            f"  - id: {p}check",
            "    action: prefix_router",
            '    ok_prefix: "[OK:]"',
            f"    on_ok: {nxt}",
            '    cite_prefix: "[CITE:]"',
            f"    on_cite: {p}cite",
            f"    on_other: {nxt}",
            f"  - id: {p}cite",
            "    action: add_citations",
            "    style: inline",
            f"    next: {nxt}",
        ]
    lines += ["  - id: persist", "    action: persist_turn", "    end: true", ""]
    return "\n".join(lines)


def cpu_once(fn: Callable[[], object], collect: bool) -> float:
    """CPU time of one call; with `collect` off, the cyclic GC is paused while timing (the algorithm's own cost)."""
    gc.collect()
    if not collect:
        gc.disable()
    try:
        t0 = time.process_time()  # CPU time of this process: other processes on the machine do not count
        fn()
        return time.process_time() - t0
    finally:
        gc.enable()


def best(fn: Callable[[], object], runs: int, collect: bool) -> float:
    """Best of `runs` CPU times."""
    return min(cpu_once(fn, collect) for _ in range(runs))


def paired(text: str, runs: int, collect: bool) -> tuple[list[float], list[float]]:
    """CPU times of compose and check, interleaved run by run, with nothing else of ours alive on the heap."""
    composes, checks = [], []
    for i in range(runs):
        sides = [("compose", lambda: yaml.compose(text, Loader=yaml.CSafeLoader)),
                 ("check", lambda: check_text(text, "generated.yaml"))]
        for name, fn in sides if i % 2 == 0 else sides[::-1]:
            (composes if name == "compose" else checks).append(cpu_once(fn, collect))
    return composes, checks


def spread(xs: list[float]) -> str:
    return f"{min(xs):.2f} / {statistics.median(xs):.2f} / {max(xs):.2f}x"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = ap.parse_args()
    texts = {n: generate(n) for n in args.sizes}
    for text in texts.values():
        assert not check_text(text, "generated.yaml").diagnostics  # the generated pipeline is clean
    for collect in (False, True):
        print(f"\n== cyclic GC {'on (as a user runs it)' if collect else 'paused while timing (algorithmic cost)'}")
        print(f"{'steps':>7} {'lines':>7} {'compose':>9} {'check':>9} {'check/compose min/median/max':>30}")
        results: dict[int, tuple[list[float], list[float]]] = {}
        for n, text in texts.items():
            composes, checks = results[n] = paired(text, args.runs, collect)
            ms = " ".join(f"{statistics.median(v) * 1000:>7.1f}ms" for v in (composes, checks))
            print(f"{n:>7} {text.count(chr(10)):>7} {ms} {spread([c / k for k, c in zip(composes, checks, strict=True)]):>30}")
        if len(args.sizes) >= 2:
            small, large = args.sizes[0], args.sizes[-1]
            growth = [b / a for a, b in zip(results[small][1], results[large][1], strict=True)]
            compose_growth = [b / a for a, b in zip(results[small][0], results[large][0], strict=True)]
            print(f"check time {large} / {small} steps, run by run: {spread(growth)} "
                  f"(goal <= {1.2 * large / small:.0f}x: linear); compose: {spread(compose_growth)}")
    print(f"\n== where check's time goes (best of {args.runs} CPU times, GC paused)")
    print(f"{'steps':>7} {'source':>9} {'+ shape':>9} {'+ pipeline':>11} {'+ rest':>8}")
    for text in texts.values():
        report = check_text(text, "generated.yaml")
        loaded = report.documents[0]
        check = best(lambda text=text: check_text(text, "generated.yaml"), args.runs, False)
        # Where check's time goes: reading nodes with spans, shape validation, the pipeline rules, the rest
        source = best(lambda text=text: read_source(text, "generated.yaml"), args.runs, False)
        doc = read_source(text, "generated.yaml").documents[0]
        shape = best(lambda doc=doc: validate(doc, "generated.yaml"), args.runs, False)
        # A fresh document each run: its facts (step graph, state flow) are computed once per analysis, as in check.
        rules = best(lambda d=loaded: run_rules(load(d.file, d.text, d.doc, d.model, d.ctx)), args.runs, False)
        rest = max(0.0, check - source - shape - rules)
        steps = len(loaded.model.steps)  # type: ignore[union-attr]
        print(f"{steps:>7} {source * 1000:>7.1f}ms {shape * 1000:>7.1f}ms {rules * 1000:>9.1f}ms {rest * 1000:>6.1f}ms")
        del report, loaded, doc


if __name__ == "__main__":
    main()
