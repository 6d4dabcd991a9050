"""`check` of a LocalAI-RAG pipeline against the equivalent native file, written the same way line for line.

Goal (issue 13): analysing a dialect file stays within 1.2x of analysing the native
document it reads as. Both texts describe the same steps with the same catalog, in the
same YAML style (flow mappings for short steps); the
dialect side also pays for detection, the folder-setting lookup, the node rewrite
(routes flattened) and, for `--extends`, reading and merging the base file. Both
sides run in the same process (best of N CPU times of `check_file`), so machine speed
cancels out. Run: .venv/bin/python bench/bench_dialects.py [--runs 7] [--sizes 100 1000]
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from contractstudio.analysis.check import check_file
from contractstudio.reading.dialects.localai_rag import REQUEST_FIELDS

BLOCK = 8  # steps per generated block


def generate(steps: int, name: str = "generated", native: bool = False) -> str:
    """Blocks of: model call -> prefix_router (3 routes) -> search -> expand -> fetch -> budget -> judge -> decision router.

    `native`: the same pipeline as a person would write it natively, line for line
    (kind, catalog, entry_step_id and inputs on top; routes as on_<route> / <route>_prefix).
    """
    if native:
        return _native(steps, name)
    lines = [
        "YAMLpipeline:",
        f"  name: {name}",
        "  settings:",
        "    entry_step_id: b0_plan",
        '    behavior_version: "1.0.0"',
        "    compat_mode: latest",
        "    top_k: 8",
        "    max_context_tokens: 4000",
        "    graph_depth: 2",
        "    graph_nodes: 50",
        "    graph_edges: [Calls]",
        "  steps:",
    ]
    blocks = max(1, steps // BLOCK)
    for b in range(blocks):
        nxt = f"b{b + 1}_plan" if b + 1 < blocks else "finish"
        lines += [
            f"    - {{id: b{b}_plan, action: call_model, prompt_key: gen/plan_v{b}, next: b{b}_route}}",
            f"    - id: b{b}_route",
            "      action: prefix_router",
            "      routes:",
            f'        bm25: {{prefix: "[BM25:]", next: b{b}_find}}',
            f'        semantic: {{prefix: "[SEMANTIC:]", next: b{b}_find}}',
            f'        direct: {{prefix: "[DIRECT:]", next: {nxt}}}',
            f"      on_other: {nxt}",
            f"    - {{id: b{b}_find, action: search_nodes, search_type: auto, next: b{b}_grow}}",
            f"    - {{id: b{b}_grow, action: expand_dependency_tree, max_depth_from_settings: graph_depth,",
            f"       max_nodes_from_settings: graph_nodes, edge_allowlist_from_settings: graph_edges, next: b{b}_read}}",
            f"    - {{id: b{b}_read, action: fetch_node_texts, next: b{b}_fit}}",
            f"    - {{id: b{b}_fit, action: manage_context_budget, on_ok: b{b}_judge, on_over: b{b}_judge}}",
            f"    - {{id: b{b}_judge, action: call_model, prompt_key: gen/judge_v{b}, next: b{b}_decide}}",
            f"    - id: b{b}_decide",
            "      action: json_decision_router",
            f"      routes: {{answer: {nxt}, retry: b{b}_find}}",
            f"      on_other: {nxt}",
        ]
    lines.append("    - {id: finish, action: finalize, end: true}")
    return "\n".join(lines) + "\n"


def _native(steps: int, name: str) -> str:
    text = generate(steps, name)
    head, body = text.split("  steps:\n", 1)
    head = head.replace("YAMLpipeline:\n", "kind: pipeline\ncatalog: localai-rag\nentry_step_id: b0_plan\n"
                        f"inputs: [{', '.join(REQUEST_FIELDS)}]\n")
    body = body.replace("      routes:\n", "")
    for route in ("bm25", "semantic", "direct"):
        body = body.replace(f"        {route}: {{prefix: ", f"      {route}_prefix: ")
    out = []
    for line in body.splitlines():
        if "_prefix: " in line and ", next: " in line:  # '      bm25_prefix: "[BM25:]", next: b0_find}'
            prefix, target = line.split(", next: ")
            route = prefix.strip().split("_prefix")[0]
            out += [prefix, f"      on_{route}: {target.rstrip('}')}"]
        elif line.startswith("      routes: {"):
            pairs = line[len("      routes: {"):-1].split(", ")
            out += [f"      on_{p.split(': ')[0]}: {p.split(': ')[1]}" for p in pairs]
        else:
            out.append(line)
    lines = [ln[2:] if ln.startswith("  ") else ln for ln in head.splitlines()] + ["steps:"] + [ln[2:] for ln in out]
    return "\n".join(lines) + "\n"


def child_of(base_name: str) -> str:
    """A child that extends the generated base and overrides one route."""
    return (f"YAMLpipeline:\n  name: child\n  extends: ./base/{base_name}.yaml\n  settings:\n    top_k: 12\n"
            "  steps:\n    - id: b0_route\n      routes:\n        hybrid: {prefix: \"[HYBRID:]\", next: b0_find}\n")


def native_of(path: Path) -> str:
    """The native document `convert --to contractstudio` writes for a dialect file."""
    report = check_file(path)
    assert not [d for d in report.diagnostics if d.severity == "error"], report.diagnostics[:3]
    return yaml.safe_dump(report.documents[0].doc.data, sort_keys=False, default_flow_style=False)


def best(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    args = ap.parse_args()
    print(f"{'case':<26} {'steps':>6} {'dialect s':>10} {'native s':>10} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "base").mkdir()
        for steps in args.sizes:
            single = root / f"single_{steps}.yaml"
            single.write_text(generate(steps))
            (root / "base" / f"base_{steps}.yaml").write_text(generate(steps, f"base_{steps}"))
            child = root / f"child_{steps}.yaml"
            child.write_text(child_of(f"base_{steps}"))
            written = root / f"written_{steps}.pipeline.yaml"
            written.write_text(generate(steps, f"single_{steps}", native=True))
            assert not check_file(written).diagnostics, "the native twin must be clean, as the dialect file is"
            for case, dialect_file in (("LocalAI-RAG, one file", single), ("LocalAI-RAG, extends a base", child)):
                native = written
                check_file(dialect_file), check_file(native)  # warm caches (models, catalogs) for both sides
                d = best(lambda f=dialect_file: check_file(f), args.runs)  # type: ignore[misc]
                n = best(lambda f=native: check_file(f), args.runs)  # type: ignore[misc]
                print(f"{case:<26} {steps:>6} {d:>10.4f} {n:>10.4f} {d / n:>6.2f}")


if __name__ == "__main__":
    main()
