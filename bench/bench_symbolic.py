"""A SymbolicAI-style class (contractstudio.symbolic) against the same contract written in YAML, per call.

    .venv/bin/python bench/bench_symbolic.py [--calls N] [--rounds N]

Both run seed 000's multi-document QA agent on the one engine with the same two scripted replies (a post
failure, then a cited answer: one remedy): samples/python/multidoc_qa_agent.py and
samples/multidoc_qa.contract.yaml. What the Python form adds per call is its plan (the prompt property read,
the class's bound methods), its perf view with SymbolicAI's keys and the class's own methods. Batches
alternate; medians of the per-call means are printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import contractstudio as cs  # noqa: E402
from contractstudio.runtime.call_state import CallOptions  # noqa: E402
from contractstudio.symbolic import use_model  # noqa: E402

spec = importlib.util.spec_from_file_location("multidoc_qa_agent", ROOT / "samples" / "python" / "multidoc_qa_agent.py")
assert spec and spec.loader
agent_module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = agent_module
spec.loader.exec_module(agent_module)

YAML_REPLIES = [
    '{"answer": "They are fast.", "evidence": [], "coverage_score": 0.3}',
    '{"answer": "They store embeddings and retrieve text similar to a query vector.", '
    '"evidence": [{"doc_id": "B2", "snippet": "They retrieve text similar to a query vector"}], "coverage_score": 0.9}',
]


def python_batch(calls: int) -> float:
    agent = agent_module.MultiDocQAgent(min_coverage=0.6)
    start = time.perf_counter()
    with use_model(cs.ScriptedModel(agent_module.SCRIPTED_REPLIES * calls), wait=False):
        for _ in range(calls):
            agent(input=agent_module.QUESTION)
    return (time.perf_counter() - start) / calls


def yaml_batch(calls: int) -> float:
    contract = cs.load(ROOT / "samples" / "multidoc_qa.contract.yaml")
    value = agent_module.QUESTION.model_dump(mode="json")
    opts = CallOptions(wait=False)
    start = time.perf_counter()
    for _ in range(calls):
        contract.call(value, cs.ScriptedModel(YAML_REPLIES), options=opts)
    return (time.perf_counter() - start) / calls


def main() -> None:
    """Print the median per-call time of each form and their ratio."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    python_batch(20), yaml_batch(20)  # warm: pydantic validators, imports
    py, ya = [], []
    for _ in range(args.rounds):
        py.append(python_batch(args.calls))
        ya.append(yaml_batch(args.calls))
    p, y = statistics.median(py), statistics.median(ya)
    print(f"python class: {p * 1e3:.3f} ms per call; yaml contract: {y * 1e3:.3f} ms per call; ratio {p / y:.2f}")


if __name__ == "__main__":
    main()
