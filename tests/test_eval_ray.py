"""`eval --engine ray` end to end on a local 2-CPU Ray cluster against the local test server: the same records
and summary as the local engine, the reply cache and resume, one rate limiter across the cluster, and each row's
OpenTelemetry spans sent from the Ray workers (`--otlp`) and imported again to the same run."""

from __future__ import annotations

import ipaddress
import json
import os
import threading
import time
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToJson
from openai_server import OpenAIServer, Received, Reply
from test_eval_live import GOOD, MODEL, QA, by_query, dataset, query_of, run
from test_otel import GOOD as QA_GOOD
from test_otel import HERE, INPUT, LOW
from test_otel_engines import Receiver, call_spans, receiver  # noqa: F401 - receiver: a fixture used below

from contractstudio.evaluation.ray_engine import start_cluster, telemetry_environment
from contractstudio.runtime import otel
from contractstudio.runtime.span_import import contracted_calls, read_export

ray = pytest.importorskip("ray")

# One cluster per module (its fixture): under pytest-xdist the whole module runs on one worker (scripts/test.sh).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300), pytest.mark.xdist_group("ray")]


PLANTED = ("asyncio", "pydantic")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the driver runs in, as a cloned repository may hold it: modules named like those Ray's workers and
    ours import, each writing a marker when imported."""
    folder = tmp_path_factory.mktemp("clone")
    for name in PLANTED:
        (folder / f"{name}.py").write_text(f"from pathlib import Path\nPath(__file__).with_name('{name}.RAN').write_text('x')\n")
    return folder


@pytest.fixture(scope="module")
def cluster(clone: Path):
    """One local cluster for the module, started from `clone` with an empty entry in PYTHONPATH (the current folder)."""
    here, pythonpath = os.getcwd(), os.environ.get("PYTHONPATH")
    os.chdir(clone)
    os.environ["PYTHONPATH"] = os.pathsep + (pythonpath or "")
    try:
        start_cluster(ray, None, {"num_cpus": 2, "object_store_memory": 96 * 1024 * 1024})
    finally:
        os.chdir(here)
        if pythonpath is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = pythonpath
    yield
    ray.shutdown()


def outcomes(path: Path) -> dict[str, tuple[str, int, int]]:
    return {r["id"]: (r["outcome"], r["attempts"], r["llm_calls"]) for r in map(json.loads, path.read_text().splitlines())}


def test_ray_gives_the_local_results_with_cache_and_resume(cluster: None, capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTRACTSTUDIO_CACHE", str(tmp_path / "cache"))
    queries = [f"{kind}-{i}" for i in range(8) for kind in ("ok", "fix", "never")][:20]
    data = dataset(tmp_path / "rows.jsonl", queries)
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    with OpenAIServer(responder=by_query) as server:
        live = ["--model", MODEL, "--api-base", server.base_url, "--no-wait", "--json"]
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live, "--no-cache", "--out", str(local_out))
        assert code == 0
        local = json.loads(out)["summary"]
        asked_locally = len(server.requests)

        server.requests.clear()
        code, out, err = run(capsys, "eval", str(QA), "--data", str(data), *live, "--engine", "ray", "--out", str(ray_out))
        assert code == 0, err
        on_ray = json.loads(out)["summary"]
        assert len(server.requests) == asked_locally  # every call went to the server once, from the Ray workers
        assert outcomes(ray_out) == outcomes(local_out)
        for figure in ("rows", "successful", "first_try", "remedied", "remedied_by_attempt", "fallback", "failing_conditions",
                       "tokens", "transport_faults"):
            assert on_ray[figure] == local[figure], figure
        for figure in ("cost_usd", "remedy_share"):  # sums of floats in another order
            assert on_ray[figure] == pytest.approx(local[figure]), figure

        server.requests.clear()  # the hub's cache, filled by the workers, answers the same calls again
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live, "--engine", "ray", "--out", str(ray_out),
                           "--overwrite")
        assert code == 0 and server.requests == []
        assert json.loads(out)["summary"]["cache"] == {"hits": asked_locally, "misses": 0}

        lines = ray_out.read_text().splitlines(keepends=True)
        ray_out.write_text("".join(lines[:12]))  # an interrupted run: 12 rows finished
        finished = {json.loads(line)["id"] for line in lines[:12]}
        server.requests.clear()
        code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), *live, "--engine", "ray", "--out", str(ray_out),
                           "--resume", "--no-cache")
        assert code == 0
        assert server.requests and not {query_of(r) for r in server.requests} & finished
        assert sorted(outcomes(ray_out)) == sorted(queries)
        assert json.loads(out)["summary"]["successful"] == local["successful"]


def test_one_rate_limiter_for_the_whole_cluster(cluster: None, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    arrivals: list[float] = []
    lock = threading.Lock()

    def window(received: Received) -> Reply | str:
        with lock:  # at most 3 requests in any 0.5 s
            now = time.monotonic()
            arrivals.append(now)
            if len([t for t in arrivals if now - t < 0.5]) > 3:
                return Reply(status=429, content="slow down", headers={"Retry-After": "1"})
        return GOOD

    data = dataset(tmp_path / "rows.jsonl", [f"ok-{i}" for i in range(10)])
    with OpenAIServer(responder=window) as server:
        code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--model", MODEL, "--api-base", server.base_url,
                             "--json", "--no-cache", "--engine", "ray", "--concurrency", "8", "--rpm", "180")
    s = json.loads(out)["summary"]
    # two workers with a limiter each would send up to 4 in half a second; the cluster's one limiter sends 2
    assert code == 0 and s["successful"] == 10 and s["transport_faults"] == {}, err
    assert s["rate_limit_wait_s"] > 0


def _descendants(root: int) -> set[int]:
    """This process and every process it started, read from /proc (Ray's GCS, raylet, agents and workers)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in found} - found
        grew, found = bool(more), found | more
    return found


def _listening_addresses(pids: set[int]) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket listening in one of `pids`."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                hexed, port = fields[1].split(":")
                raw = bytes.fromhex(hexed)
                # /proc writes each 32-bit word in host (little-endian) order
                packed = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found.append((str(ipaddress.ip_address(packed)), int(port, 16)))
    return found


def test_a_local_cluster_listens_on_loopback_only(cluster: None, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = dataset(tmp_path / "rows.jsonl", ["ok-1", "ok-2"])
    with OpenAIServer(responder=by_query) as server:
        code, _, _ = run(capsys, "eval", str(QA), "--data", str(data), "--model", MODEL, "--api-base", server.base_url,
                         "--no-wait", "--json", "--no-cache", "--engine", "ray", "--out", str(tmp_path / "r.jsonl"))
    assert code == 0
    sockets = _listening_addresses(_descendants(os.getpid()))
    assert len(sockets) >= 3  # the GCS, the raylet and the workers were seen, so the check looked at Ray's servers
    exposed = [(address, port) for address, port in sockets if not _loopback(address)]
    assert not exposed, f"Ray listens beyond loopback: {exposed}"


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.is_loopback or (isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None and ip.ipv4_mapped.is_loopback)


def test_ray_workers_never_import_a_module_planted_in_the_drivers_folder(cluster: None, clone: Path,
                                                                         capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = dataset(tmp_path / "rows.jsonl", ["ok-1", "fix-2", "ok-3"])
    with OpenAIServer(responder=by_query) as server:
        code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--model", MODEL, "--api-base", server.base_url,
                             "--no-wait", "--json", "--no-cache", "--engine", "ray", "--out", str(tmp_path / "r.jsonl"))
    assert code == 0, err
    assert json.loads(out)["summary"]["rows"] == 3

    def where_a_worker_imports_from() -> tuple[list[str], str]:
        import os
        import sys

        return list(sys.path), os.getcwd()

    path, folder = ray.get(ray.remote(num_cpus=0)(where_a_worker_imports_from).remote())  # the actors hold the CPUs
    assert not [p for p in path if p in ("", ".") or p.startswith(str(clone))] and not folder.startswith(str(clone))
    assert sorted(p.name for p in clone.glob("*.RAN")) == []


def test_ray_workers_send_each_rows_spans_and_the_export_reruns_the_same(
        cluster: None, receiver: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,  # noqa: F811 - the fixture
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*otel.ENDPOINT_VARIABLES, otel.CONTENT_VARIABLE):  # `--otlp` sets the endpoint in this process
        monkeypatch.setenv(name, "")
    monkeypatch.setenv(otel.CONTENT_VARIABLE, "true")
    monkeypatch.setattr(otel, "_provider", None)
    monkeypatch.setattr(otel, "_configured", None)
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": f"r{i}", "input": INPUT, "replies": [LOW, QA_GOOD] if i % 2 else [QA_GOOD]})
                            + "\n" for i in range(6)))
    first = tmp_path / "first.jsonl"
    ray_eval = ["eval", str(HERE / "qa.contract.yaml"), "--scripted", "--no-wait", "--quiet", "--engine", "ray"]
    for turn in range(2):  # the first run starts the actors (the driver runs rows meanwhile); the second runs all on them
        Receiver.requests = []
        code, _, err = run(capsys, *ray_eval, "--data", str(rows), "--otlp", receiver, "--out", str(first), "--overwrite")
        assert code == 0, err
        spans = call_spans()
        assert len(spans) == 6, f"run {turn + 1}: {len(spans)} call spans for 6 rows"
        assert sorted(s["contractstudio.remedies"].int_value for s in spans) == [0, 0, 0, 1, 1, 1]
    export = tmp_path / "export.jsonl"  # what a Collector's file exporter writes: one request a line
    export.write_text("".join(MessageToJson(request, indent=None) + "\n" for request in Receiver.requests))
    calls = contracted_calls(read_export(export))
    records = {r["id"]: r for r in map(json.loads, first.read_text().splitlines())}
    assert len(calls) == 6  # each row's trace, event for event, as its record holds it
    assert sorted(json.dumps(c.trace.to_dicts()) for c in calls if c.trace is not None) == sorted(
        json.dumps(r["trace"]) for r in records.values())

    code, _, err = run(capsys, "spans", str(export), "--dataset", str(tmp_path / "again.rows.jsonl"))
    assert code == 0, err
    again = tmp_path / "again.jsonl"
    code, _, err = run(capsys, *ray_eval, "--data", str(tmp_path / "again.rows.jsonl"), "--out", str(again))
    assert code == 0, err
    rerun = sorted((r["outcome"], r["attempts"], r["llm_calls"]) for r in map(json.loads, again.read_text().splitlines()))
    assert rerun == sorted((r["outcome"], r["attempts"], r["llm_calls"]) for r in records.values())


def test_the_receivers_credentials_never_go_to_a_joined_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://receiver.example")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic c2VjcmV0")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-api-key=secret")
    monkeypatch.setenv(otel.CONTENT_VARIABLE, "true")
    assert telemetry_environment(joined=True) == {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://receiver.example",
                                                  otel.CONTENT_VARIABLE: "true"}
    assert len(telemetry_environment(joined=False)) == 4  # this machine's cluster: the command's own variables
