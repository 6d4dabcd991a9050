"""`contractstudio eval` as a process ends without the interpreter's teardown, losing nothing (issue 24, goal 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from contractstudio.commands import exits

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'


def test_an_eval_process_keeps_its_exit_code_output_results_and_exit_handlers(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "input": {"query": f"q{i}", "documents": [{"id": "A1", "content": "t"}]},
                                        "replies": [reply]}) + "\n" for i, reply in enumerate([GOOD, LOW, GOOD])))
    out = tmp_path / "r.jsonl"
    argv = ["contractstudio", "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out), "--json",
            "--fail-under", "1.0"]
    code = ("import atexit, sys; atexit.register(lambda: print('an exit handler ran', flush=True)); "
            f"sys.argv = {argv!r}; from contractstudio.cli import entry; raise SystemExit(entry())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # one row of three failed: under --fail-under 1.0
    *summary, last = done.stdout.splitlines()
    assert last == "an exit handler ran"
    assert json.loads("\n".join(summary))["summary"]["rows"] == 3  # the whole summary came through the pipe
    lines = out.read_text().splitlines()
    assert [json.loads(line)["successful"] for line in lines] == [True, False, True]


def test_a_thread_still_running_keeps_the_interpreters_own_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    ended: list[int] = []
    monkeypatch.setattr("os._exit", ended.append)
    monkeypatch.setattr("atexit._run_exitfuncs", lambda: None)
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait, daemon=False)
    # The threads alive are this test's alone (a suite's earlier tests may leave pool threads behind).
    alive = [threading.main_thread(), busy]
    monkeypatch.setattr(threading, "enumerate", lambda: list(alive))
    busy.start()
    try:
        exits.exit_now(1)
        assert ended == []  # the interpreter waits for that thread, as a normal exit does
    finally:
        stop.set()
        busy.join()
    alive.remove(busy)
    exits.exit_now(1)
    assert ended == [1]


def test_the_studio_ends_without_the_interpreters_teardown_once_its_app_has_returned(monkeypatch: pytest.MonkeyPatch,
                                                                                     tmp_path: Path) -> None:
    # A 5 MB file's analysis is a heap of ~700 MB: after Ctrl+Q the terminal was back but the process took 3-5 s
    # more to free it, object by object.
    from contractstudio import cli
    from contractstudio.studio.app import StudioApp

    ended: list[int] = []
    monkeypatch.setattr(StudioApp, "run", lambda self, *a, **k: None)  # the app ran and returned (the terminal restored)
    monkeypatch.setattr(cli, "exit_now", ended.append)
    assert cli.main(["studio", str(tmp_path)], quick_exit=True) == 0
    assert ended == [0]
