"""What each slow key waited for: the studio run with a sampler of its threads, for bench_typing.py --sample.

As a program (`python bench/key_sampler.py OUT studio ARGS...`), it runs the studio with:
  - the time each key reached the app (Textual's driver thread, as it parses the terminal's input);
  - every millisecond, the screen thread's stack and the top of every other thread's.
SIGUSR1 writes them to OUT (a pickle). Times are time.perf_counter(), the system's monotonic clock on Linux, which
the bench's own clock shares: a key's send and echo times pick out the samples of its wait.

`report(OUT, keys)` prints the slowest keys' waits: where the screen thread was, and what else ran.
"""

from __future__ import annotations

import collections
import os
import pickle
import signal
import sys
import threading
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import Any

INTERVAL_S = 0.001
DEPTH = 40
IDLE = ("select", "poll", "wait", "read", "sleep", "get", "_wait_for_tstate_lock", "readinto", "recv_into", "epoll",
        "_worker")  # a frame at the top of a stack that waits in C: a pool thread waiting for work, a read
SKIPPED = ("events.py", "base_events.py", "threading.py", "selectors.py", "runners.py")  # the event loop's own frames


def _stack(frame: Any, depth: int = DEPTH) -> tuple[str, ...]:
    out: list[str] = []
    while frame is not None and len(out) < depth:
        code = frame.f_code
        out.append(f"{os.path.basename(code.co_filename)}:{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return tuple(out)


def noting_keys() -> list[float]:
    """The time each key reaches the app, as Textual's driver thread parses the terminal's input (a list it fills)."""
    from textual import events
    from textual.drivers.linux_driver import LinuxDriver

    arrived: list[float] = []
    process_message = LinuxDriver.process_message

    def noted(self: LinuxDriver, message: Any) -> None:
        if isinstance(message, events.Key):
            arrived.append(time.perf_counter())
        process_message(self, message)

    LinuxDriver.process_message = noted  # type: ignore[method-assign]
    return arrived


def run_studio(out: Path, argv: list[str], recorded: Callable[[], dict[str, Any]]) -> None:
    """Run the studio with `argv`; on SIGUSR1, write what `recorded()` gives to OUT (a pickle)."""
    def write(*_: object) -> None:
        with open(out, "wb") as f:
            pickle.dump(recorded(), f)

    signal.signal(signal.SIGUSR1, write)
    sys.argv = ["contractstudio", *argv]
    from contractstudio.cli import entry

    sys.exit(entry())


def _run(out: Path, argv: list[str]) -> None:
    arrived = noting_keys()
    samples: collections.deque[tuple[float, tuple[str, ...], list[tuple[str, ...]]]] = collections.deque(maxlen=600_000)
    screen = threading.main_thread().ident

    def sample() -> None:
        me = threading.get_ident()
        while True:
            time.sleep(INTERVAL_S)
            frames = sys._current_frames()  # noqa: SLF001 - the one way to read another thread's stack
            main = frames.get(screen)
            others = [_stack(f, 4) for ident, f in frames.items() if ident not in (screen, me)]
            samples.append((time.perf_counter(), _stack(main) if main is not None else (), others))

    threading.Thread(target=sample, daemon=True, name="key sampler").start()
    run_studio(out, argv, lambda: {"arrived": arrived, "samples": list(samples)})


def report(out: Path, keys: list[tuple[float, float, str]], slowest: int = 5) -> None:
    """Print the `slowest` keys of (sent, shown, key) with what the screen thread and the others did meanwhile."""
    data = pickle.loads(out.read_bytes())
    arrived: list[float] = data["arrived"]
    samples = data["samples"]
    times = [s[0] for s in samples]
    order = sorted(range(len(keys)), key=lambda n: keys[n][1] - keys[n][0], reverse=True)
    for n in order[:slowest]:
        sent, shown, key = keys[n]
        at = bisect_left(arrived, sent)
        came = f"reached the app after {(arrived[at] - sent) * 1000:.1f} ms" if at < len(arrived) else "never reached the app"
        window = samples[bisect_left(times, sent):bisect_right(times, shown)]
        print(f"    key {n} ({key}): {(shown - sent) * 1000:.0f} ms, {came}, {len(window)} samples "
              f"(fewer than {(shown - sent) * 1000:.0f}: the sampler waited for the interpreter too)")
        screen: collections.Counter[str] = collections.Counter()
        others: collections.Counter[str] = collections.Counter()
        for _, main, rest in window:
            inner = [f for f in main if not f.startswith(SKIPPED)]
            busy = main and main[0].split(":")[1] not in IDLE
            screen[" < ".join(inner[:6]) if busy else "(idle: waiting for events)"] += 1
            for stack in rest:
                if stack and stack[0].split(":")[1] not in IDLE:
                    others[" < ".join(stack[:3])] += 1
        for where, count in screen.most_common(5):
            print(f"      {count:4}  screen: {where[:220]}")
        for where, count in others.most_common(3):
            print(f"      {count:4}  other:  {where[:220]}")


if __name__ == "__main__":
    _run(Path(sys.argv[1]), sys.argv[2:])
