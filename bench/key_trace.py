"""Where each key's time goes, from timestamps alone: the studio run with a trace, for bench_typing.py --trace.

As a program (`python bench/key_trace.py OUT studio ARGS...`), it runs the studio and records, at almost no cost
(no sampler thread taking the interpreter):
  - the time each key reached the app (Textual's driver thread, as it parses the terminal's input);
  - the time each frame was handed to the output thread;
  - the wall and CPU time of each edit of the editor, each screen update (Textual's compositor drawing a frame) and
    each analysis (its worker).
SIGUSR1 writes them to OUT (a pickle). Times are time.perf_counter(), the system's monotonic clock on Linux, which
the bench's own clock shares: a key's send and echo times pick out its arrival, its edit and its frame.

`report(OUT, keys)` prints, over the keys, how long each step took (median, p90, max), and the slowest keys' steps.
A frame's CPU time well under its wall time means the screen's thread waited: for the interpreter (a worker held it)
or for a core (the bench and tmux took them).
"""

from __future__ import annotations

import functools
import pickle
import statistics
import sys
import time
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import Any

from key_sampler import noting_keys, run_studio


def _run(out: Path, argv: list[str]) -> None:
    from textual.drivers import _writer_thread
    from textual.screen import Screen

    arrived = noting_keys()
    frames: list[float] = []
    spans: list[tuple[str, float, float, float]] = []  # (what, start, end, CPU seconds of its thread)

    def noting_frames(write: Any) -> Any:
        def noted(self: Any, text: str) -> None:
            frames.append(time.perf_counter())
            write(self, text)
        return noted

    def timed(what: str, function: Any) -> Any:
        @functools.wraps(function)
        def timing(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spans.append((what, start, time.perf_counter(), time.thread_time() - cpu))
        return timing

    _writer_thread.WriterThread.write = noting_frames(_writer_thread.WriterThread.write)  # type: ignore[method-assign]
    # a frame: the screen update timer's tick (Textual has no public hook around drawing a frame)
    Screen._on_timer_update = timed("frame", Screen._on_timer_update)  # type: ignore[method-assign]  # noqa: SLF001
    from contractstudio.editing.live import LiveDocument
    from contractstudio.studio import calls
    from contractstudio.studio.screens.edit import EditScreen
    from contractstudio.studio.widgets.editor import ContractEditor

    ContractEditor.edit = timed("edit", ContractEditor.edit)  # type: ignore[method-assign]
    LiveDocument.analyze = timed("analysis", LiveDocument.analyze)  # type: ignore[method-assign]
    # the steps between the last key and the findings shown (`report_findings`)
    LiveDocument.collect_symbols = staticmethod(timed("symbols", LiveDocument.collect_symbols))  # type: ignore[method-assign]
    EditScreen.start_analysis = timed("analysis asked", EditScreen.start_analysis)  # type: ignore[method-assign]
    LiveDocument.accept = timed("findings accepted", LiveDocument.accept)  # type: ignore[method-assign]  # on the screen's thread
    calls.load_client = timed("model client import", calls.load_client)  # type: ignore[method-assign]

    import gc
    import threading

    collecting: dict[int, tuple[float, float]] = {}

    def note_collection(phase: str, info: dict[str, int]) -> None:
        """A garbage collection: a span of the thread that ran it (any allocation can start one)."""
        me = threading.get_ident()
        if phase == "start":
            collecting[me] = (time.perf_counter(), time.thread_time())
        elif me in collecting:
            start, cpu = collecting.pop(me)
            on = "screen" if threading.current_thread() is threading.main_thread() else "worker"
            spans.append((f"collection {info['generation']} ({on})", start, time.perf_counter(), time.thread_time() - cpu))

    gc.callbacks.append(note_collection)

    run_studio(out, argv, lambda: {"arrived": arrived, "frames": frames, "spans": spans})


def _steps(data: dict[str, Any], sent: float, shown: float) -> dict[str, float]:
    """One key's steps in ms: to the app, to its frame handed out, to the screen; its edit and frames (wall, CPU)."""
    arrived, frames = data["arrived"], data["frames"]
    at = arrived[min(bisect_left(arrived, sent), len(arrived) - 1)]
    last_frame = frames[max(bisect_right(frames, shown) - 1, 0)]
    steps = {"to the app": at - sent, "to its frame": last_frame - at, "frame to screen": shown - last_frame}
    collected = [(name, end - start) for name, start, end, _ in data["spans"]
                 if name.startswith("collection") and start < shown and end > at]
    steps["collections"] = sum(wall for _, wall in collected)
    for what in ("edit", "frame"):
        mine = [(end - start, cpu) for name, start, end, cpu in data["spans"] if name == what and at <= start and end <= shown]
        steps[f"{what}s wall"] = sum(wall for wall, _ in mine)
        steps[f"{what}s CPU"] = sum(cpu for _, cpu in mine)
    for what in ("analysis", "model client import"):
        steps[f"{what} running"] = float(any(name == what and start < shown and end > sent
                                             for name, start, end, _ in data["spans"]))
    first = data["first analysis"]  # which keys do not stop (screens/edit.py, `_stops_analysis`)
    steps["first analysis running"] = float(first is not None and first[0] < shown and first[1] > sent)
    return {name: value if name.endswith("running") else value * 1000 for name, value in steps.items()}


def report(out: Path, keys: list[tuple[float, float, str]], slowest: int = 5) -> None:
    """Print the steps of the keys (sent, shown, key): median, p90 and max of each, then the slowest keys'."""
    data = pickle.loads(out.read_bytes())
    data["first analysis"] = min(((start, end) for name, start, end, _ in data["spans"] if name == "analysis"), default=None)
    rows = [(shown - sent, key, _steps(data, sent, shown)) for sent, shown, key in keys]
    names = list(rows[0][2]) if rows else []
    for name in names:
        values = sorted(steps[name] for _, _, steps in rows)
        if name.endswith("running"):
            print(f"      keys typed while the {name.removesuffix(' running')} ran: {sum(values):.0f} of {len(values)}")
            continue
        print(f"      {name:16} median {statistics.median(values):6.1f} ms  p90 {values[int(0.9 * (len(values) - 1))]:6.1f}"
              f"  max {values[-1]:6.1f}")
    during = sorted(total * 1000 for total, _, steps in rows if steps.get("first analysis running"))
    after = sorted(total * 1000 for total, _, steps in rows if not steps.get("first analysis running"))
    for label, echoes in (("during the file's first analysis", during), ("after it", after)):
        if echoes:
            print(f"      keys typed {label}: {len(echoes)}, echo median {statistics.median(echoes):.1f} ms, "
                  f"max {echoes[-1]:.1f} ms")
    for total, key, steps in sorted(rows, key=lambda row: row[0], reverse=True)[:slowest]:
        parts = ", ".join(f"{name} {value:.1f}" for name, value in steps.items() if not name.endswith("running"))
        running = [name.removesuffix(" running") for name, value in steps.items() if name.endswith("running") and value]
        print(f"      key {key!r} {total * 1000:.0f} ms: {parts}" + (f" (ran meanwhile: {', '.join(running)})" if running else ""))


def report_findings(out: Path, pauses: list[tuple[float, float]]) -> None:
    """For each pause for the findings (last key shown, findings shown): what ran in between, from the last key."""
    data = pickle.loads(out.read_bytes())
    for last, found in pauses:
        print(f"      findings {found - last:.2f} s after the last key:")
        for name, start, end, cpu in sorted(data["spans"], key=lambda span: span[1]):
            if end < last - 0.5 or start > found or name in ("frame", "edit") or name.startswith("collection 0"):
                continue
            print(f"        {name:18} {start - last:+7.3f} -> {end - last:+7.3f} s (CPU {cpu * 1000:.0f} ms)")


if __name__ == "__main__":
    _run(Path(sys.argv[1]), sys.argv[2:])
