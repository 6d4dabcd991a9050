"""Studio timings, side by side in one run (never asserted in tests).

1. Start to first screen: the studio vs a bare Textual app, each in a fresh headless process
   (process start -> first screen painted, via Textual's auto-pilot), and whether litellm was loaded.
2. Edit to diagnostics on a 1,000-line file: keystroke -> findings drawn, with the debounce
   taken out (it is a deliberate wait), plus the analyzer's own share.
3. Highlighting cost per edit at growing sizes, with and without the editor's windowed highlighting.

Run: .venv/bin/python bench/bench_studio.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "studio" / "workspace"

# Both mark the moment right after their first screen's first refresh (call_after_refresh on mount).
BARE = textwrap.dedent("""
    import sys, time
    from textual.app import App
    from textual.widgets import Footer, Static
    class Bare(App):
        def compose(self):
            yield Static("hello")
            yield Footer()
        def on_mount(self):
            self.call_after_refresh(self.mark)
        def mark(self):
            print("FIRST", time.time(), "litellm" in sys.modules, flush=True)
            self.exit()
    Bare().run(headless=True, size=(120, 40))
""")

STUDIO = textwrap.dedent("""
    import sys, time
    from contractstudio.studio.app import StudioApp
    from contractstudio.studio.screens.edit import EditScreen
    def mark(self):  # edit mode starts its first analysis right after its first refresh
        print("FIRST", time.time(), "litellm" in sys.modules, flush=True)
        self.app.exit()
    EditScreen.start_analysis = mark
    StudioApp([sys.argv[1]]).run(headless=True, size=(120, 40))
""")


def first_screen(code: str, *args: str) -> tuple[float, bool]:
    started = time.time()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=tempfile.gettempdir())
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("FIRST")), None)
    if line is None:
        raise SystemExit(f"no first screen:\n{out.stdout}\n{out.stderr}")
    _, stamp, litellm = line.split()
    return float(stamp) - started, litellm == "True"


def generated_contract(lines: int) -> str:
    """A valid contract of about `lines` lines: many declared types with described fields."""
    out = ["kind: contract", "name: big", "prompt: Answer.", "input: In", "output: Out", "types:",
           "  In:", "    fields:", "      q: {type: str, description: The question.}",
           "  Out:", "    fields:", "      a: {type: str, description: The answer.}"]
    i = 0
    while len(out) < lines:
        out += [f"  T{i}:", f"    description: Type number {i}.", "    fields:",
                f"      f{i}: {{type: str, description: Field {i}.}}", f"      g{i}: {{type: int, ge: 0, description: Count {i}.}}"]
        i += 1
    return "\n".join(out[:lines]) + "\n"


async def edit_cycle(lines: int, runs: int) -> dict[str, float]:
    from contractstudio.analysis.check import check_text
    from contractstudio.studio.app import StudioApp
    from contractstudio.studio.screens import edit

    folder = Path(tempfile.mkdtemp())
    target = folder / "big.contract.yaml"
    text = generated_contract(lines)
    target.write_text(text)
    analysis = []
    for _ in range(runs):
        t0 = time.perf_counter()
        check_text(text, str(target))
        analysis.append((time.perf_counter() - t0) * 1000)
    edit.DEBOUNCE_S = 0.001  # the debounce is a deliberate wait; measure everything else (Textual timers need > 0)
    fired: list[float] = []
    start_analysis = edit.EditScreen.start_analysis

    def timed_start(self):  # noqa: ANN001, ANN202 - the moment the debounce ends
        fired.append(time.perf_counter())
        start_analysis(self)

    edit.EditScreen.start_analysis = timed_start  # type: ignore[method-assign]
    done: list[float] = []
    cycles, keys, after_debounce = [], [], []
    app = StudioApp([target, folder])
    original = app.analysis_finished

    arrived = asyncio.Event()  # waiting on an event, not polling: polling would steal the GIL from the worker

    def stamped(analysis):  # noqa: ANN001, ANN202 - called once the findings and markers are drawn
        original(analysis)
        done.append(time.perf_counter())
        arrived.set()

    app.analysis_finished = stamped  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        editor = app.screen.editor
        for i in range(runs):
            done.clear()
            fired.clear()
            arrived.clear()
            t0 = time.perf_counter()
            # One keystroke's edit, as TextArea applies it (Pilot.press adds its own idle waits).
            if i % 2 == 0:
                editor.insert("x", (1, 0))
            else:
                editor.delete((1, 0), (1, 1))
            keys.append((time.perf_counter() - t0) * 1000)
            await arrived.wait()
            cycles.append((done[0] - t0) * 1000)
            after_debounce.append((done[0] - fired[-1]) * 1000)
            await pilot.pause()
    edit.EditScreen.start_analysis = start_analysis  # type: ignore[method-assign]
    return {"analysis_ms": statistics.median(analysis), "cycle_ms": statistics.median(cycles),
            "after_debounce_ms": statistics.median(after_debounce),
            "key_ms": statistics.median(keys), "cycle_max_ms": max(cycles)}


async def highlight_cost(lines: int, windowed: bool, runs: int = 20, threshold: int = 1500) -> float:
    from textual.app import App

    from contractstudio.studio.widgets import editor as editor_module
    from contractstudio.studio.widgets.editor import ContractEditor

    editor_module.LARGE_FILE_LINES = 10**9 if not windowed else threshold

    class Host(App):
        def compose(self):  # noqa: ANN202
            yield ContractEditor(generated_contract(lines))

    app = Host()
    times = []
    async with app.run_test(size=(120, 40)) as pilot:
        area = app.query_one(ContractEditor)
        await pilot.pause()
        for i in range(runs):
            t0 = time.perf_counter()
            area.insert("x" if i % 2 == 0 else "", (lines // 2, 0)) if i % 2 == 0 else area.delete((lines // 2, 0), (lines // 2, 1))
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sample = str(SAMPLE)
    bare = [first_screen(BARE)[0] for _ in range(args.runs)]
    studio_runs = [first_screen(STUDIO, sample) for _ in range(args.runs)]
    studio = [s for s, _ in studio_runs]
    print(f"start to first screen (median of {args.runs} fresh processes, headless 120x40)")
    print(f"  bare Textual app   {statistics.median(bare) * 1000:8.0f} ms")
    print(f"  studio             {statistics.median(studio) * 1000:8.0f} ms   ratio {statistics.median(studio) / statistics.median(bare):.2f}x")
    print(f"  litellm imported at first screen: {any(imported for _, imported in studio_runs)}")
    cycle = asyncio.run(edit_cycle(1000, max(args.runs * 4, 20)))
    print("edit to diagnostics, 1,000-line contract (debounce of 150 ms excluded)")
    print(f"  analyzer alone (check_text)        {cycle['analysis_ms']:7.1f} ms")
    print(f"  one edit applied (TextArea)        {cycle['key_ms']:7.1f} ms")
    print(f"  keystroke -> findings drawn        {cycle['cycle_ms']:7.1f} ms  (max {cycle['cycle_max_ms']:.1f}; goal 50)")
    print(f"  debounce end -> findings drawn     {cycle['after_debounce_ms']:7.1f} ms  (the edit's own redraw overlaps the debounce)")
    print("one edit in the editor (insert or delete one character, median), by file size")
    for lines in (300, 1000, 5000, 20000):
        full = asyncio.run(highlight_cost(lines, windowed=False))
        window = asyncio.run(highlight_cost(lines, windowed=True, threshold=0))
        print(f"  {lines:>6} lines: whole-file highlights {full:7.2f} ms · windowed {window:7.2f} ms")


if __name__ == "__main__":
    main()
