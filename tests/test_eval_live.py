"""`contractstudio eval` against the local OpenAI-compatible server: the summary's figures on known outcomes,
the reply cache, rate limits and 429s with Retry-After, and resume after `kill -9`."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer, Received, Reply

from contractstudio.cli import main

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'
KEY = "sk-test-eval-0a1b2c3d4e5f6a7b"
MODEL = "openai/gpt-4o-mini"  # in litellm's offline price map: replies have a real cost


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def query_of(received: Received) -> str:
    found = re.search(r'"query": "([^"]+)"', received.body["messages"][1]["content"])
    return found.group(1) if found else ""


def by_query(received: Received) -> Reply | str:
    """ok-*: good at once; fix-*: too low, then good when repaired; never-*: always too low."""
    query = query_of(received)
    repair = len(received.body["messages"]) > 2
    if query.startswith("ok"):
        return GOOD
    if query.startswith("fix"):
        return GOOD if repair else LOW
    return LOW


def dataset(path: Path, queries: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": q, "input": {"query": q, "documents": [{"id": "A1", "content": "text"}]}}) + "\n"
                            for q in queries))
    return path


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("CONTRACTSTUDIO_CACHE", str(folder))
    return folder


# every engine of this machine passes the same tests: one process, and worker processes sharing one hub (Ray: test_eval_ray)
ENGINES = {"local": [], "workers": ["--workers", "2"]}


@pytest.fixture(params=list(ENGINES))
def engine(request: pytest.FixtureRequest) -> list[str]:
    """The options that choose the engine under test."""
    return ENGINES[request.param]


def live(server: OpenAIServer, *extra: str) -> list[str]:
    return ["--model", MODEL, "--api-base", server.base_url, *extra]


def test_summary_figures_on_known_outcomes(capsys: pytest.CaptureFixture[str], tmp_path: Path, cache_dir: Path) -> None:
    data = dataset(tmp_path / "rows.jsonl", ["ok-1", "ok-2", "ok-3", "ok-4", "fix-1", "fix-2", "fix-3", "never-1"])
    with OpenAIServer(responder=by_query) as server:
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live(server), "--json", "--no-wait",
                           "--out", str(tmp_path / "r.jsonl"))
    assert code == 0
    s = json.loads(out)["summary"]
    # 4 first try, 3 remedied at attempt 1, 1 fallback after the contract's 2 remedies: 4 + 6 + 3 = 13 calls
    assert (s["rows"], s["successful"], s["first_try"], s["remedied"], s["fallback"], s["raised"]) == (8, 7, 4, 3, 1, 0)
    assert (s["success_rate"], s["first_try_rate"], s["remedied_rate"]) == (7 / 8, 4 / 8, 3 / 8)
    assert s["remedied_by_attempt"] == {"1": 3}
    [coverage] = s["failing_conditions"]
    assert (coverage["check"], coverage["count"], coverage["rows"]) == ("post[0]", 3 + 3, 4)
    assert coverage["messages"] == ["Coverage score 0.20 is below the minimum 0.55. (condition: output.coverage_score >= 0.55; "
                                    "output.coverage_score = 0.2)"]
    assert s["tokens"] == {"prompt": 13 * 11, "completion": 13 * 7, "total": 13 * 18, "per_successful_row": 13 * 18 / 7}
    cost = s["cost_usd"]
    per_call = cost["total"] / 13
    assert per_call > 0 and cost["per_successful_row"] == pytest.approx(cost["total"] / 7)
    assert cost["paid"] == pytest.approx(cost["total"]) and cost["from_cache"] == 0
    # the remedies are the 3 repairs of fix-* and the 2 of never-1: 5 of 13 calls
    assert s["remedy_share"]["tokens"] == pytest.approx(5 / 13) and s["remedy_share"]["cost"] == pytest.approx(5 / 13)
    lat = s["latency_s"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert s["transport_faults"] == {} and s["cache"] == {"hits": 0, "misses": 13}


def test_a_changed_contract_re_asks_only_the_affected_calls(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                            engine: list[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    data = dataset(tmp_path / "rows.jsonl", ["ok-1", "ok-2", "ok-3", "fix-1", "fix-2", "fix-3"])
    out_file = tmp_path / "r.jsonl"
    contract = tmp_path / "qa.contract.yaml"
    contract.write_text(QA.read_text())
    with OpenAIServer(responder=by_query) as server:
        # the engine under test fills the cache and reads it back after the change; one process reads what it stored
        args = ["eval", str(contract), "--data", str(data), *live(server), "--json", "--no-wait", "--out", str(out_file), "--overwrite"]
        code, out, _ = run(capsys, *args, *engine)
        assert code == 0 and len(server.requests) == 9
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
        first = json.loads(out)["summary"]

        server.requests.clear()
        code, out, _ = run(capsys, *args)  # unchanged: every call replays from the cache, offline
        again = json.loads(out)["summary"]
        assert code == 0 and server.requests == []
        assert again["cache"] == {"hits": 9, "misses": 0}
        assert (again["successful"], again["first_try"], again["remedied"]) == (first["successful"], first["first_try"], first["remedied"])
        assert again["cost_usd"]["paid"] == 0 and again["cost_usd"]["from_cache"] == pytest.approx(first["cost_usd"]["total"])

        # a new message for the coverage condition changes only the repair requests of the fix-* rows
        contract.write_text(QA.read_text().replace("is below the minimum 0.55.", "is under 0.55, the floor."))
        server.requests.clear()
        code, out, _ = run(capsys, *args, *engine)
        changed = json.loads(out)["summary"]
        assert code == 0 and changed["cache"] == {"hits": 6, "misses": 3}
        assert sorted(query_of(r) for r in server.requests) == ["fix-1", "fix-2", "fix-3"]
        assert all("is under 0.55, the floor." in r.body["messages"][-1]["content"] for r in server.requests)

        server.requests.clear()
        code, out, _ = run(capsys, *args, "--no-cache")
        assert code == 0 and len(server.requests) == 9 and json.loads(out)["summary"]["cache"] == {"hits": 0, "misses": 0}
    stored = b"".join(p.read_bytes() for p in cache_dir.iterdir() if p.is_file())
    assert stored and KEY.encode() not in stored  # never stored, never part of a key
    assert KEY not in out_file.read_text()
    assert oct(cache_dir.stat().st_mode & 0o777) == "0o700"


def test_429_with_retry_after_holds_every_row_back(capsys: pytest.CaptureFixture[str], tmp_path: Path, cache_dir: Path,
                                                   engine: list[str]) -> None:
    blocked = {"until": 0.0, "served": 0}
    lock = threading.Lock()

    def limited(received: Received) -> Reply | str:
        # the third request trips the limit; the server then answers 429 until 2 s have passed
        with lock:
            now = time.monotonic()
            blocked["served"] += 1
            if blocked["served"] == 3:
                blocked["until"] = now + 2.0
            if now < blocked["until"]:
                return Reply(status=429, content="rate limited", headers={"Retry-After": str(max(1, round(blocked["until"] - now)))})
        return GOOD

    data = dataset(tmp_path / "rows.jsonl", [f"ok-{i}" for i in range(12)])
    with OpenAIServer(responder=limited) as server:
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live(server), "--json", "--concurrency", "4",
                           "--no-cache", *engine)
    s = json.loads(out)["summary"]
    assert code == 0 and s["successful"] == 12 and s["transport_failed_rows"] == 0
    # the rows in flight when the limit tripped got a 429 each; after it, every row waited for Retry-After
    assert 1 <= s["transport_faults"]["rate_limit"] <= 4
    statuses = len(server.requests)
    assert statuses == 12 + s["transport_faults"]["rate_limit"]


def test_a_row_whose_call_fails_for_good_is_recorded_as_failed(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                              cache_dir: Path) -> None:
    """503 on every retry, and a 401 that is never retried: each row is in the results as failed for good, none lost."""

    def outage(received: Received) -> Reply | str:
        query = query_of(received)
        if query.startswith("down"):
            return Reply(status=503, content="overloaded")
        if query.startswith("denied"):
            return Reply(status=401, content="bad key")
        return GOOD

    data = dataset(tmp_path / "rows.jsonl", ["ok-1", "down-1", "ok-2", "denied-1", "ok-3"])
    out_file = tmp_path / "r.jsonl"
    with OpenAIServer(responder=outage) as server:
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live(server), "--json", "--no-wait",
                           "--no-cache", "--out", str(out_file))
    assert code == 0  # the run went to the end; its figures say what failed
    s = json.loads(out)["summary"]
    assert (s["rows"], s["successful"], s["transport_failed_rows"]) == (5, 3, 2)
    assert s["transport_faults"]["server"] >= 2 and s["transport_faults"]["authentication"] == 1
    records = {r["id"]: r for r in map(json.loads, out_file.read_text().splitlines())}
    assert sorted(records) == ["denied-1", "down-1", "ok-1", "ok-2", "ok-3"]  # every row is there
    down, denied = records["down-1"], records["denied-1"]
    assert down["transport_failed"] and not down["successful"] and down["outcome"] in ("fallback", "raised")
    assert [t["gave_up"] for t in down["transport"]] == [False] * (len(down["transport"]) - 1) + [True]
    assert denied["transport_failed"] and denied["transport"] == [{"kind": "authentication", "status": 401, "gave_up": True}]
    assert any("HTTP 503" in e for e in down["errors"]) and any("HTTP 401" in e for e in denied["errors"])
    retried = [r for r in server.requests if query_of(r) == "down-1"]
    assert len(retried) == len(down["transport"]) > 1  # retried with backoff before giving up; 401 asked once
    assert len([r for r in server.requests if query_of(r) == "denied-1"]) == 1


def test_rpm_keeps_under_a_server_limit_that_would_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path, cache_dir: Path,
                                                        engine: list[str]) -> None:
    arrivals: list[float] = []
    lock = threading.Lock()

    def window(received: Received) -> Reply | str:
        # at most 3 requests in any 0.5 s; more is a 429
        with lock:
            now = time.monotonic()
            arrivals.append(now)
            recent = [t for t in arrivals if now - t < 0.5]
            if len(recent) > 3:
                return Reply(status=429, content="slow down", headers={"Retry-After": "1"})
        return GOOD

    data = dataset(tmp_path / "rows.jsonl", [f"ok-{i}" for i in range(7)])
    with OpenAIServer(responder=window) as server:
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live(server), "--json", "--concurrency", "8",
                           "--no-cache")
        unlimited = json.loads(out)["summary"]
        assert code == 0 and unlimited["transport_faults"].get("rate_limit", 0) > 0  # the limit is real
        arrivals.clear()
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live(server), "--json", "--concurrency", "8",
                           "--no-cache", "--rpm", "120", *engine)
    limited = json.loads(out)["summary"]
    assert code == 0 and limited["successful"] == 7
    assert limited["transport_faults"] == {}  # spaced 1/2 s apart: at most 2 in half a second, one short of the limit
    assert limited["rate_limit_wait_s"] > 0


def test_workers_make_no_more_calls_at_once_than_concurrency(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            cache_dir: Path) -> None:
    """--concurrency bounds the calls the server has at once across the workers (each holds rows ahead, to wait there)."""
    at_once = {"now": 0, "most": 0}
    lock = threading.Lock()

    def counting(received: Received) -> str:
        with lock:
            at_once["now"] += 1
            at_once["most"] = max(at_once["most"], at_once["now"])
        time.sleep(0.05)
        with lock:
            at_once["now"] -= 1
        return GOOD

    data = dataset(tmp_path / "rows.jsonl", [f"ok-{i}" for i in range(16)])
    with OpenAIServer(responder=counting) as server:
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live(server), "--json", "--concurrency", "4",
                           "--no-cache", *ENGINES["workers"])
    assert code == 0 and json.loads(out)["summary"]["successful"] == 16
    assert 1 <= at_once["most"] <= 4


def test_the_limiter_is_shared_and_cools_down_after_a_429() -> None:
    from contractstudio.evaluation.limits import LimitedModel, RateLimiter
    from contractstudio.runtime.models import LLMReply, LLMRequest, TransportFault

    now = [100.0]
    limiter = RateLimiter(rpm=60, clock=lambda: now[0])
    assert [limiter.reserve() for _ in range(3)] == [0.0, 1.0, 2.0]  # one a second, no burst
    tokens = RateLimiter(tpm=600, clock=lambda: now[0])  # 10 tokens a second, 6 s (60 tokens) of burst
    assert [tokens.reserve(60), tokens.reserve(60), tokens.reserve(10)] == [0.0, 0.0, 6.0]
    tokens.settle(-60)  # the second request used 60 tokens fewer than booked
    assert tokens.reserve(10) == 1.0

    class Refusing:
        name = "x"

        def complete(self, request: LLMRequest) -> LLMReply:
            raise TransportFault("429", kind="rate_limit", retryable=True, status=429, retry_after=5.0)

    shared = RateLimiter(clock=lambda: now[0])
    with pytest.raises(TransportFault):
        LimitedModel(Refusing(), shared, sleep=lambda s: None).complete(LLMRequest([], {}))
    slept: list[float] = []
    other = LimitedModel(Refusing(), shared, sleep=slept.append)
    with pytest.raises(TransportFault):
        other.complete(LLMRequest([], {}))
    assert slept == [5.0]  # another row, same limiter: it waits out the first row's Retry-After


def test_a_cache_write_cut_off_by_kill_9_leaves_the_cache_whole(tmp_path: Path) -> None:
    """What a worker killed mid-write leaves: the entries it committed, none of the transaction it was in, no lock held."""
    from contractstudio.evaluation.cache import ReplyCache

    entry = {"text": GOOD, "prompt_tokens": 11, "completion_tokens": 7, "cost_usd": 0.0, "model": MODEL}
    pid = os.fork()
    if pid == 0:  # a worker: one batch committed, the next one cut off by kill -9 before its commit
        try:
            cache = ReplyCache(tmp_path)
            cache.put_many([("kept-1", entry), ("kept-2", entry)])
            cache._db.execute("BEGIN IMMEDIATE")
            cache._db.execute("INSERT INTO replies (key, entry, created) VALUES ('cut', '{\"text\": \"x\"}', 0)")
            os.kill(os.getpid(), signal.SIGKILL)
        finally:
            os._exit(1)
    assert os.waitpid(pid, 0)[1] == signal.SIGKILL
    cache = ReplyCache(tmp_path)
    assert cache.get("kept-1") == cache.get("kept-2") == entry and cache.get("cut") is None
    cache.put_many([("after", entry)])  # the killed writer's lock went with it
    assert cache.get("after") == entry and len(cache) == 3


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True) if path.exists() else []


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _descendants(pid: int) -> set[int]:
    """The processes `pid` started, and the ones they started (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = _parent(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    found, grew = {pid}, True
    while grew:
        more = {child for child, parent in parents.items() if parent in found} - found
        grew, found = bool(more), found | more
    return found - {pid}


@pytest.mark.slow  # two eval processes (each imports the model client) around a kill -9: about 30 s each
@pytest.mark.timeout(300)  # a hang's guard: on a loaded machine the first run's start alone can take a minute
def test_resume_after_kill_9_repeats_no_finished_row_and_loses_none(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                    cache_dir: Path, engine: list[str]) -> None:
    queries = [f"ok-{i:03d}" for i in range(120)]
    data = dataset(tmp_path / "rows.jsonl", queries)
    out_file = tmp_path / "r.jsonl"

    def slow(received: Received) -> Reply:
        return Reply(GOOD, delay=0.03)

    with OpenAIServer(responder=slow) as server:
        cmd = [sys.executable, "-m", "contractstudio", "eval", str(QA), "--data", str(data), *live(server),
               "--no-cache", "--concurrency", "4", "--out", str(out_file), "--quiet", *engine]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
        deadline = time.monotonic() + 240  # half the rows written, or a stuck run: the rows, not the time, end the wait
        while len(_lines(out_file)) < 60 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        workers = _descendants(proc.pid)
        assert len(workers) == (3 if engine else 0)  # the warm process and the two workers it forked
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        while workers and time.monotonic() < deadline:  # a killed parent's workers exit: none runs on or writes
            workers = {pid for pid in workers if Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)}
            time.sleep(0.01)
        assert not workers
        before = [json.loads(line) for line in _lines(out_file) if line.endswith("\n")]
        assert 40 <= len(before) < 120
        with open(out_file, "a") as f:  # the worst moment: killed in the middle of writing a line
            f.write('{"v": 1, "key": "999:cut", "row": 999, "outc')
        finished = {r["id"] for r in before}

        server.requests.clear()
        # The resume is the same command in this process (the killed one was a process of its own: only its files are
        # left), which spares a third start of the model client.
        capsys.readouterr()
        code, out, err = run(capsys, *cmd[3:], "--resume", "--json")
        assert code == 0, err
    asked_again = {query_of(r) for r in server.requests}
    assert not asked_again & finished  # no finished row was run again
    after = [json.loads(line) for line in _lines(out_file)]
    assert sorted(r["id"] for r in after) == queries  # every row once: none lost, none repeated
    assert json.loads(out)["summary"]["rows"] == 120
    assert json.loads(out)["summary"]["rows_this_run"] == 120 - len(before)


def test_resume_refuses_results_of_another_contract_version(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"
    sample = ROOT / "samples" / "multidoc_qa.contract.yaml"
    out_file = tmp_path / "r.jsonl"
    assert run(capsys, "eval", str(sample), "--data", str(rows), "--scripted", "--out", str(out_file), "--limit", "5")[0] == 0
    changed = tmp_path / "c.contract.yaml"
    changed.write_text(sample.read_text().replace(">= 0.55", ">= 0.5"))
    code, _, err = run(capsys, "eval", str(changed), "--data", str(rows), "--scripted", "--out", str(out_file), "--resume")
    assert code == 2 and "holds results of a different version" in err
    code, out, _ = run(capsys, "eval", str(sample), "--data", str(rows), "--scripted", "--out", str(out_file), "--resume", "--json")
    s = json.loads(out)["summary"]
    assert code == 0 and s["rows"] == 48 and s["rows_this_run"] == 43


def test_a_worker_killed_mid_run_loses_no_row_and_writes_none_twice(tmp_path: Path, cache_dir: Path) -> None:
    """...and its writes to the reply cache (a file every worker writes itself) leave the cache whole: a second run
    of the same rows is answered from it alone."""
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    queries = [f"ok-{i:02d}" for i in range(24)]
    out_file = tmp_path / "r.jsonl"
    killed: list[int] = []

    def kill_a_worker(kind: str, payload: object, progress: object) -> None:
        if kind == "record" and not killed:  # a row finished: the workers are up, and each runs rows
            workers = {pid for pid in _descendants(os.getpid()) if _parent(pid) != os.getpid()}  # not the warm process
            killed.append(max(workers))
            os.kill(killed[0], signal.SIGKILL)

    with OpenAIServer(responder=lambda received: Reply(GOOD, delay=0.05)) as server:
        config = EvalConfig(target=QA, data=dataset(tmp_path / "rows.jsonl", queries), out=out_file, model=MODEL,
                            api_base=server.base_url, concurrency=4, workers=2)
        outcome = evaluate(config, on_progress=kill_a_worker)
        assert killed
        records = [json.loads(line) for line in _lines(out_file)]
        assert sorted(r["id"] for r in records) == queries  # every row once: its rows in flight ran again on a fresh worker
        assert all(r["successful"] for r in records) and outcome.summary.rows == 24

        server.requests.clear()
        again = evaluate(dataclasses.replace(config, overwrite=True)).summary  # two workers again, reading the cache
        # the first run's workers wrote (its results replaced: evaluate() keeps an earlier results file unless told)
    assert server.requests == [] and (again.cache.hits, again.cache.misses) == (24, 0) and again.successful == 24


# The interrupted run is a child process of its own: Ctrl+C can land inside `ast.parse`, which on CPython 3.11.7
# leaves the interpreter's AST recursion counter wrong ("AST constructor recursion depth mismatch" in every later
# parse), so a test that interrupts its own process could break the tests after it; a user's Ctrl+C ends the process.
INTERRUPTED_RUN = """
import _thread, json, signal, sys, threading
# Ctrl+C as a terminal delivers it: pytest-xdist's workers ignore SIGINT, and an ignored signal is inherited by
# the processes they start, where interrupt_main() would then do nothing
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from contractstudio.evaluation.evaluate import EvalConfig, evaluate

def interrupt(kind, record, progress):
    if kind == "record" and progress.done == 6:
        threading.Timer(0.03, _thread.interrupt_main).start()  # lands while the loop runs the other rows

qa, data, out, model, base = sys.argv[1:6]
first = evaluate(EvalConfig(target=Path(qa), data=Path(data), out=Path(out), model=model, api_base=base,
                            concurrency=4, workers=1), on_progress=interrupt)
print(json.dumps({"interrupted": first.interrupted, "rows": first.summary.rows,
                  "eval_threads": [t.name for t in threading.enumerate() if t.name.startswith("contractstudio-eval")]}))
"""


def test_ctrl_c_mid_run_keeps_the_finished_rows_and_resume_finishes_the_rest(tmp_path: Path, cache_dir: Path) -> None:
    # Ctrl+C lands wherever the main thread is: in the rows' event loop, or writing a record
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    queries = [f"ok-{i}" for i in range(40)]
    data = dataset(tmp_path / "rows.jsonl", queries)
    out = tmp_path / "r.jsonl"
    with OpenAIServer([Reply(GOOD, delay=0.2)] * 200) as server:  # rows still in flight for seconds after the 6th
        child = subprocess.run([sys.executable, "-c", INTERRUPTED_RUN, str(QA), str(data), str(out), MODEL, server.base_url],
                               capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
        assert child.returncode == 0, child.stderr
        first = json.loads(child.stdout.strip().splitlines()[-1])
        assert first["interrupted"]
        kept = [json.loads(line)["key"] for line in out.read_text().splitlines()]
        assert 6 <= len(kept) < 40 and len(set(kept)) == len(kept) == first["rows"]
        assert first["eval_threads"] == []
        second = evaluate(EvalConfig(target=QA, data=data, out=out, model=MODEL, api_base=server.base_url,
                                     concurrency=4, workers=1, resume=True))
    assert not second.interrupted and second.summary.rows == 40
    keys = [json.loads(line)["key"] for line in out.read_text().splitlines()]
    assert sorted(keys) == sorted(set(keys)) and len(keys) == 40


def test_a_live_run_started_from_a_running_event_loop_runs_its_rows(tmp_path: Path, cache_dir: Path) -> None:
    # a notebook's cell runs inside an event loop: the rows' loop cannot run in that thread, so it gets its own
    import asyncio

    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    data = dataset(tmp_path / "rows.jsonl", [f"ok-{i}" for i in range(5)])
    with OpenAIServer([GOOD] * 10) as server:
        async def cell() -> Any:
            return evaluate(EvalConfig(target=QA, data=data, model=MODEL, api_base=server.base_url, workers=1))

        outcome = asyncio.run(cell())
    assert (outcome.summary.rows, outcome.summary.successful) == (5, 5)


def test_each_row_s_replies_are_in_the_cache_when_its_record_is_written(tmp_path: Path, cache_dir: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # The replies are written to the cache together, not one transaction a row, but never after the record of the
    # row that got them: a record in the results file (a kill -9 after it) has its replies in the cache.
    from contractstudio.evaluation.cache import ReplyCache
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    data = dataset(tmp_path / "rows.jsonl", [f"ok-{n}" for n in range(24)])
    cached_when_written: list[int] = []

    def progress(kind: str, payload: object, _p: object) -> None:
        if kind == "record":
            reader = ReplyCache(cache_dir)  # another connection: what a process started after a kill -9 reads
            cached_when_written.append(len(reader))
            reader.close()

    with OpenAIServer(responder=by_query) as server:
        cfg = EvalConfig(target=QA, data=data, out=tmp_path / "out.jsonl", concurrency=8, model=MODEL,
                         api_base=server.base_url, wait=False, workers=1)
        assert evaluate(cfg, on_progress=progress).summary.successful == 24
    assert all(cached >= written for written, cached in enumerate(cached_when_written, 1)), cached_when_written


def test_a_reply_not_yet_written_to_the_cache_answers_the_same_request_and_is_kept_as_the_file_keeps_it(tmp_path: Path) -> None:
    from contractstudio.evaluation.cache import PendingReplies, ReplyCache

    pending = PendingReplies(ReplyCache(tmp_path))
    pending.put("k", {"text": f"the key is {KEY}", "prompt_tokens": 3, "completion_tokens": 2, "cost_usd": 0.5, "model": MODEL})
    assert len(ReplyCache(tmp_path)) == 0  # not written yet
    assert pending.get("k") == {"text": "the key is ***", "prompt_tokens": 3, "completion_tokens": 2,
                                "cost_usd": 0.5, "model": MODEL}
    pending.commit()
    assert ReplyCache(tmp_path).get("k") == pending.get("k")
    pending.close()
