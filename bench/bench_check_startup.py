"""`contractstudio check` on one small file vs a bare `python -c "import pydantic, networkx"`.

Goal (issue 6): check starts within 1.5x of the baseline. Both are measured in
the same run, best of N fresh processes each, so machine speed cancels out.
Run: .venv/bin/python bench/bench_check_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_bytecode import compile_package

SMALL = """kind: tools
name: notes
tools:
  - name: create_note
    description: Create a note.
    params:
      title: {type: str, description: Note title.}
    preconditions:
      - assert: title.strip() != ""
        message: Title cannot be empty
"""


def best_of(cmd: list[str], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    compile_package()  # fresh processes load bytecode, as an installed package does (bench/bench_bytecode.py)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "notes.tools.yaml"
        f.write_text(SMALL)
        base = best_of([sys.executable, "-c", "import pydantic, networkx"], args.runs)
        check = best_of([sys.executable, "-m", "contractstudio", "check", str(f)], args.runs)
    print(f"baseline  python -c 'import pydantic, networkx': best {base[0]*1000:7.1f} ms  median {base[1]*1000:7.1f} ms")
    print(f"check     contractstudio check small.yaml:       best {check[0]*1000:7.1f} ms  median {check[1]*1000:7.1f} ms")
    print(f"ratio (best/best): {check[0]/base[0]:.2f}x   (goal <= 1.15x, issue 15; 1.5x before)")


if __name__ == "__main__":
    main()
