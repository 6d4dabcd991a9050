"""Studio timings, side by side in one run (never asserted in tests).

1. Start to first screen: the studio vs a bare Textual app with a YAML TextArea and a footer, each a fresh
   process in a real terminal (a tmux server of the bench's own), from starting the program to its first
   screen painted; whether litellm was imported by then. Runs interleaved; medians.
   The first live call in the debugger: a fresh studio process against the local OpenAI-compatible test server;
   the user opens the debugger a moment after the first analysis, picks the live model and presses G: how long
   the call waits for the model client (litellm's import) and how long its generate stage takes.
2. Edit to diagnostics on a 1,000-line file: keystroke -> findings drawn, with the debounce
   taken out (it is a deliberate wait), plus the analyzer's own share.
3. Highlighting cost per edit at growing sizes, with and without the editor's windowed highlighting.

Run: .venv/bin/python bench/bench_studio.py [--runs N] [--first-screen-only] [--tree OTHER_CHECKOUT]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_bytecode import compile_package  # noqa: E402

SAMPLE = ROOT / "tests" / "studio" / "workspace"

# Both write the moment right after their first screen's first refresh (call_after_refresh on mount) to $MARK:
# the bare app, a YAML TextArea and a footer; the studio, its edit screen (file list, editor, findings, footer).
BARE = textwrap.dedent("""
    import os, sys, time
    from textual.app import App
    from textual.widgets import Footer, TextArea
    class Bare(App):
        def compose(self):
            yield TextArea(open(sys.argv[1]).read(), language="yaml")
            yield Footer()
        def on_mount(self):
            self.call_after_refresh(self.mark)
        def mark(self):
            with open(os.environ["MARK"], "w") as f:
                f.write(f"{time.time()} {'litellm' in sys.modules}")
    Bare().run()
""")

STUDIO = textwrap.dedent("""
    import os, sys, time
    from contractstudio.studio.app import StudioApp
    from contractstudio.studio.screens.edit import EditScreen
    mounted = EditScreen.on_mount
    def on_mount(self):
        mounted(self)
        self.call_after_refresh(mark)
    def mark():
        with open(os.environ["MARK"], "w") as f:
            f.write(f"{time.time()} {'litellm' in sys.modules}")
    EditScreen.on_mount = on_mount
    StudioApp([sys.argv[1], sys.argv[2]]).run()
""")


class Terminal:
    """A real terminal: a tmux server of our own (its own socket, no user config), one 120x40 window."""

    def __init__(self, tree: Path | None = None) -> None:
        self.socket = f"cs-bench-{os.getpid()}"
        self.env = [f"PYTHONPATH={tree}"] if tree is not None else []  # another checkout's studio (before/after)
        self.tmux("new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "sleep 600")

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True,
                              check=True).stdout

    def first_screen(self, code: str, *args: str) -> tuple[float, bool]:
        """Seconds from starting the program in the terminal to its first screen; whether litellm was imported then."""
        mark = Path(tempfile.mkdtemp()) / "mark"
        command = " ".join(shlex.quote(a) for a in [sys.executable, "-c", code, *args])
        started = time.time()
        env = [arg for pair in ([f"MARK={mark}"], *([e] for e in self.env)) for v in pair for arg in ("-e", v)]
        self.tmux("respawn-pane", "-k", "-t", "bench", *env, "-c", tempfile.gettempdir(), command)
        deadline = started + 120
        while not mark.exists() or not mark.read_text().strip():
            if time.time() > deadline:
                raise SystemExit(f"no first screen:\n{self.tmux('capture-pane', '-p', '-t', 'bench')}")
            time.sleep(0.005)
        stamp, litellm = mark.read_text().split()
        self.tmux("respawn-pane", "-k", "-t", "bench", "sleep 600")  # ends the program before the next run
        return float(stamp) - started, litellm == "True"

    def close(self) -> None:
        self.tmux("kill-server")


LIVE = textwrap.dedent("""
    import asyncio, os, shutil, sys, tempfile, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])  # tests/: the local OpenAI-compatible server
    from openai_server import OpenAIServer
    from contractstudio.studio.app import StudioApp
    GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'

    async def main(server, ws, pause_s):
        app = StudioApp([ws / "multidoc_qa.contract.yaml", ws])
        async with app.run_test(size=(120, 40)) as pilot:
            while app.analysis is None:
                await pilot.pause(0.02)
            await asyncio.sleep(pause_s)  # the user reads the file, then opens the debugger
            await pilot.press("f4")
            screen = app.screen
            while screen.contract_doc is None:
                await pilot.pause(0.02)
            if sys.argv[4] == "live":
                screen.query_one("#model-select").value = "live"
            await pilot.pause()
            screen.query_one("#timeline").focus()
            from contractstudio.studio import calls
            ready = calls.client_ready()
            pressed = time.perf_counter()
            await pilot.press("g")
            while screen.session is None:
                await pilot.pause(0.005)
            waited = time.perf_counter() - pressed
            while not screen.session.done:
                await pilot.pause(0.02)
            if sys.argv[4] != "live":  # the scripted call: how long G takes to start any call (the UI's own latency)
                print("LIVE", waited, 0.0, screen.session.result.successful, ready)
                return
            generate = sum(e.get("duration_s") or 0 for e in screen.session.trace if e.type == "stage_end" and e.stage == "generate")
            print("LIVE", waited, generate, screen.session.result.successful, ready)

    ws = Path(tempfile.mkdtemp()) / "ws"
    shutil.copytree(sys.argv[2], ws)
    os.environ["OPENAI_API_KEY"] = "sk-test-bench-1234567890"
    with OpenAIServer() as server:
        server.script(GOOD)
        path = ws / "multidoc_qa.contract.yaml"
        path.write_text(path.read_text().replace("  # api_base: http://127.0.0.1:8000/v1   # any OpenAI-compatible server\\n",
                                                 f"  api_base: {server.base_url}\\n"))
        asyncio.run(main(server, ws, float(sys.argv[3])))
""")


def first_live_call(tree: Path | None, pause_s: float, model: str = "live") -> tuple[float, float]:
    """(seconds the call waited for the model client after G, seconds of its generate stage), in a fresh process."""
    env = {**os.environ, "XDG_CONFIG_HOME": tempfile.mkdtemp()}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    out = subprocess.run([sys.executable, "-c", LIVE, str(ROOT / "tests"), str(SAMPLE), str(pause_s), model],
                         capture_output=True,
                         text=True, timeout=300, env=env, cwd=tempfile.gettempdir())
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("LIVE")), None)
    if line is None:
        raise SystemExit(f"no live call:\n{out.stdout}\n{out.stderr[-3000:]}")
    _, waited, generate, ok, ready = line.split()
    print(f"    client ready when G was pressed: {ready}")
    if ok != "True":
        raise SystemExit(f"the live call failed:\n{out.stdout}")
    return float(waited), float(generate)


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

    def timed_start(self):  # the moment the debounce ends
        fired.append(time.perf_counter())
        start_analysis(self)

    edit.EditScreen.start_analysis = timed_start  # type: ignore[method-assign]
    done: list[float] = []
    cycles, keys, after_debounce = [], [], []
    app = StudioApp([target, folder])
    original = app.analysis_finished

    arrived = asyncio.Event()  # waiting on an event, not polling: polling would steal the GIL from the worker

    def stamped(analysis):  # called once the findings and markers are drawn
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
        def compose(self):
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
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--first-screen-only", action="store_true")
    parser.add_argument("--live-only", action="store_true", help="only the first live call in the debugger")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between the first analysis and opening the debugger")
    parser.add_argument("--tree", type=Path, help="import the studio from this checkout (e.g. a worktree of an older commit)")
    args = parser.parse_args()
    first = SAMPLE / "multidoc_qa.contract.yaml"
    tree = args.tree.resolve() if args.tree else None
    compile_package()  # fresh processes load bytecode, as an installed package does (bench/bench_bytecode.py)
    if tree is not None:
        import compileall

        compileall.compile_dir(str(tree / "contractstudio"), quiet=1)
    if args.live_only:
        calls, scripted = [], []
        for _ in range(args.runs):  # interleaved with a scripted call: the time G takes to start any call
            calls.append(first_live_call(tree, args.pause))
            scripted.append(first_live_call(tree, args.pause, "scripted")[0])
        print(f"the first live call in the debugger, opened {args.pause:.1f} s after the first analysis "
              f"(median of {args.runs} fresh processes)")
        print(f"  G to the start of the live call       {statistics.median(w for w, _ in calls) * 1000:8.0f} ms")
        print(f"  its generate stage                   {statistics.median(g for _, g in calls) * 1000:8.0f} ms")
        print(f"  G to the start of a scripted call    {statistics.median(scripted) * 1000:8.0f} ms  (the same screen, no client)")
        return
    terminal = Terminal(tree)
    bare: list[float] = []
    studio_runs: list[tuple[float, bool]] = []
    ratios: list[float] = []
    try:
        for _ in range(args.runs):  # interleaved: each pair sees the same machine load
            bare.append(terminal.first_screen(BARE, str(first))[0])
            studio_runs.append(terminal.first_screen(STUDIO, str(first), str(SAMPLE)))
            ratios.append(studio_runs[-1][0] / bare[-1])
    finally:
        terminal.close()
    studio = [s for s, _ in studio_runs]
    print(f"start to first screen in a real terminal (tmux, 120x40), median of {args.runs} interleaved fresh processes")
    print(f"  bare Textual app (YAML TextArea + footer) {statistics.median(bare) * 1000:8.0f} ms")
    print(f"  studio (file list + editor)              {statistics.median(studio) * 1000:8.0f} ms   "
          f"ratio {statistics.median(studio) / statistics.median(bare):.2f}x (median of pairs {statistics.median(ratios):.2f}x; goal 1.5x)")
    print(f"  litellm imported at first screen: {any(imported for _, imported in studio_runs)}")
    if args.first_screen_only:
        return
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
