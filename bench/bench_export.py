"""`contractstudio export` against `contractstudio check` on the same 5 MB contract, as fresh processes.

Goal (issue 21.15): export within 2x of check on the same file, in time and in memory. It took 18x
(23.6 s against 1.3 s) and 415 MB: export read the whole file twice more, once with our reader and
once with ruamel.yaml's pure-Python loader. Each repetition runs check and export back to back (the
order alternating), so the machine's load of the moment cancels out in the ratio; the script prints
each ratio's min / median / max over the repetitions: wall time, CPU time (user + system) and peak
RSS (`ru_maxrss` of the process, from wait4).

Files (generated, about --mb megabytes each):
  corpus  samples/multidoc_qa.contract.yaml with one scenario whose input is a corpus of short
          documents (block style): the shape of the issue's file (check ~1.3 s on this machine)
  prompt  a contract whose prompt is one long block scalar

`--with-run` also times `run --scenario` on the corpus file (what dominates it: see docs/performance.md).
`--tree OTHER_CHECKOUT` runs export from another checkout (e.g. a worktree of the commit before the fix)
next to this one's check, to measure "before" in the same run.
Run: .venv/bin/python bench/bench_export.py [--runs 9] [--mb 5] [--only corpus] [--with-run] [--tree DIR]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_bytecode import compile_package

ROOT = Path(__file__).resolve().parent.parent
RUN = "big-corpus"


def corpus_contract(size: int) -> str:
    """multidoc_qa with a scenario whose input corpus makes the file `size` characters long."""
    base = (ROOT / "samples" / "multidoc_qa.contract.yaml").read_text().split("\nscenarios:\n")[0]
    head = (f"{base}\nscenarios:\n  - name: {RUN}\n    description: A corpus of many documents.\n    input:\n"
            "      query: Why are vector databases useful?\n      documents:\n")
    tail = ("    responses:\n      - '{\"answer\": \"They store embeddings.\", \"evidence\": [{\"doc_id\": \"D1\", "
            "\"snippet\": \"Vector databases store embeddings.\"}], \"coverage_score\": 0.9}'\n"
            "    expect: {successful: true, llm_calls: 1}\n")
    docs, n, i = [], len(head) + len(tail), 0
    while n < size:
        doc = (f"        - id: D{i}\n          content: Vector databases store embeddings. "
               f"Document {i} says they answer nearest-neighbour queries quickly.\n")
        docs.append(doc)
        n, i = n + len(doc), i + 1
    return head + "".join(docs) + tail


def prompt_contract(size: int) -> str:
    """A small contract whose prompt is one block scalar of about `size` characters."""
    line = "  Answer the question about the text, citing the lines you use, and be brief about it please.\n"
    return ("kind: contract\nname: big_prompt\ndescription: A contract with a long prompt.\nprompt: |\n"
            + line * (size // len(line))
            + "types:\n  In:\n    description: In\n    fields:\n      text: {type: str, description: T}\n"
            "  Out:\n    description: Out\n    fields:\n      ok: {type: bool, description: B}\n"
            "input: In\noutput: Out\non_failure: raise\npre:\n  - assert: \"input.text != ''\"\n")


SHAPES = {"corpus": corpus_contract, "prompt": prompt_contract}


def measure(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit code) of one fresh process."""
    t0 = time.perf_counter()
    # Started outside any checkout: `python -m` puts the working folder first on sys.path, before PYTHONPATH.
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: keep Popen from waiting again
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def spread(values: list[float]) -> str:
    return f"min {min(values):5.2f}x  median {statistics.median(values):5.2f}x  max {max(values):5.2f}x"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--only", nargs="+", choices=sorted(SHAPES), default=sorted(SHAPES))
    ap.add_argument("--with-run", action="store_true", help="also time `run --scenario` on the corpus file")
    ap.add_argument("--tree", type=Path, help="run export from this checkout (PYTHONPATH), check from this one")
    args = ap.parse_args()
    compile_package()  # fresh processes load bytecode, as an installed package does (bench/bench_bytecode.py)
    here = dict(os.environ)
    there = dict(os.environ)
    if args.tree is not None:
        compileall.compile_dir(str(args.tree.resolve() / "contractstudio"), quiet=1)
        there["PYTHONPATH"] = str(args.tree.resolve())
    cli = [sys.executable, "-m", "contractstudio"]
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.only:
            path = Path(tmp) / f"{shape}.contract.yaml"
            path.write_text(SHAPES[shape](int(args.mb * 1_000_000)))
            out = Path(tmp) / "exported.yaml"
            commands = {"check": (cli + ["check", str(path)], here),
                        "export": (cli + ["export", str(path), "-o", str(out)], there)}
            if args.with_run and shape == "corpus":
                commands["run"] = (cli + ["run", str(path), "--scenario", RUN], here)
            results: dict[str, list[tuple[float, float, float, int]]] = {name: [] for name in commands}
            for rep in range(args.runs):
                names = list(commands) if rep % 2 == 0 else list(reversed(commands))
                for name in names:
                    results[name].append(measure(*commands[name], cwd=tmp))
            exported = out.exists() and out.read_bytes() == path.read_bytes()
            out.unlink(missing_ok=True)
            print(f"\n{shape}: {path.stat().st_size / 1e6:.1f} MB, {args.runs} interleaved repetitions"
                  f" (export wrote the file unchanged: {exported}); load average now {os.getloadavg()[0]:.2f}")
            for name, rows in results.items():
                walls, cpus, rss, codes = zip(*rows, strict=True)
                print(f"  {name:7s} wall median {statistics.median(walls):6.2f} s  CPU median {statistics.median(cpus):6.2f} s"
                      f"  peak RSS median {statistics.median(rss):6.0f} MB  exit codes {sorted(set(codes))}")
            for name in [n for n in commands if n != "check"]:
                pairs = list(zip(results[name], results["check"], strict=True))
                print(f"  {name}/check  wall {spread([a[0] / b[0] for a, b in pairs])}")
                print(f"  {name}/check  CPU  {spread([a[1] / b[1] for a, b in pairs])}")
                print(f"  {name}/check  RSS  {spread([a[2] / b[2] for a, b in pairs])}")
    print("\ngoal (issue 21.15): export/check <= 2x in time and in memory")


if __name__ == "__main__":
    main()
