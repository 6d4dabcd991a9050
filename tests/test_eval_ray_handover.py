"""How the Ray engine's driver shares rows with actors that are still starting (no Ray needed: stand-in actors whose
start the test decides): rows run in the driver until an actor is up, then on it; every row is run and recorded
once, with the records the local engine gives; an actor lost to Ray loses no row."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from contractstudio.evaluation import ray_engine
from contractstudio.evaluation.dataset import Row, read_rows
from contractstudio.evaluation.evaluate import EvalConfig, _job
from contractstudio.evaluation.ray_engine import Crew, _drive
from contractstudio.evaluation.rows import RowRunner

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
ROWS = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"


class RayError(Exception):
    """Stands for ray.exceptions.RayError (a worker lost to Ray)."""


RAY = SimpleNamespace(exceptions=SimpleNamespace(RayError=RayError))


class Method:
    """`actor.method.remote(...)`: an object whose `.future()` is the answer, as Ray's ObjectRef has."""

    def __init__(self, answer: Callable[..., Future[Any]]) -> None:
        self.answer = answer

    def remote(self, *args: Any) -> SimpleNamespace:
        return SimpleNamespace(future=lambda: self.answer(*args))


class StartingActor:
    """A worker actor that is up when the test says so; it runs rows with its own RowRunner, or is lost to Ray."""

    def __init__(self, runner: RowRunner, *, lost: bool = False) -> None:
        self.runner = runner
        self.lost = lost
        self.up: Future[bool] = Future()
        self.ran: list[str] = []
        self.ready = Method(lambda: self.up)
        self.run = Method(self._run)

    def _run(self, row: Row) -> Future[dict[str, Any]]:
        assert self.up.done(), "a row was handed to an actor that was not up yet"
        self.ran.append(row.key)
        answer: Future[dict[str, Any]] = Future()
        if self.lost:
            answer.set_exception(RayError("The actor died unexpectedly before finishing this task."))
        else:
            answer.set_result(self.runner.run(row))
        return answer


def sample_rows(runner: RowRunner) -> list[Row]:
    rows = [row for row in read_rows(ROWS, lambda value: runner.input_shape.validate(value)[1]) if isinstance(row, Row)]
    assert len(rows) >= 12
    return rows


def what_a_user_reads(rec: dict[str, Any]) -> tuple[Any, ...]:
    return (rec["outcome"], rec["successful"], rec["attempts"], rec["llm_calls"], json.dumps(rec["output"], sort_keys=True),
            json.dumps(rec["failures"], sort_keys=True), rec["used"])


def drive(actors: list[StartingActor], job: Any, rows: list[Row], *, concurrency: int,
          start_after: dict[int, int]) -> list[dict[str, Any]]:
    """Every record `_drive` yields; actor i comes up once `start_after[i]` records were read."""
    records: list[dict[str, Any]] = []
    for rec in _drive(RAY, iter(rows), job, Crew(hub=None, workers=list(actors), folder=None, driver_runs_rows=True), concurrency):
        if rec is None:
            continue
        records.append(rec)
        for index, after in start_after.items():
            if len(records) == after:
                actors[index].up.set_result(True)
    return records


def test_rows_run_in_the_driver_until_an_actor_is_up_then_on_it_each_once_as_the_local_engine_runs_them() -> None:
    job = _job(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted"))
    local = RowRunner(job)
    rows = sample_rows(local)
    expected = {row.key: what_a_user_reads(local.run(row)) for row in rows}
    actors = [StartingActor(RowRunner(job)), StartingActor(RowRunner(job))]

    records = drive(actors, job, rows, concurrency=4, start_after={0: 4, 1: 9})

    keys = [rec["key"] for rec in records]
    assert sorted(keys) == sorted(row.key for row in rows)  # every row once: none lost, none twice
    assert {key: what_a_user_reads(rec) for key, rec in zip(keys, records, strict=True)} == expected
    on_actors = actors[0].ran + actors[1].ran
    in_driver = set(keys) - set(on_actors)
    assert len(on_actors) == len(set(on_actors))
    assert len(in_driver) >= 4 and actors[0].ran and actors[1].ran  # the driver ran rows while both were starting
    first_on_an_actor = min(keys.index(key) for key in on_actors)
    assert first_on_an_actor >= 4  # no row waited for an actor that was not up


def test_warm_actors_take_every_row_and_a_lost_actor_loses_no_row(monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted"))
    rows = sample_rows(RowRunner(job))
    actors = [StartingActor(RowRunner(job)), StartingActor(RowRunner(job), lost=True)]
    for actor in actors:
        actor.up.set_result(True)
    monkeypatch.setattr(ray_engine, "_WARM", {"job": (None, actors)})

    records = list(_drive(RAY, iter(rows), job, Crew(hub=None, workers=list(actors), folder=None), 4))

    assert sorted(rec["key"] for rec in records if rec) == sorted(row.key for row in rows)
    assert sorted(actors[0].ran + actors[1].ran) == sorted(row.key for row in rows)  # warm: none in the driver
    lost = [rec for rec in records if rec and rec["key"] in actors[1].ran]
    assert lost and all(rec["outcome"] == "error" and "actor died" in rec["errors"][0] for rec in lost)
    assert ray_engine._WARM == {}  # the next run starts new actors


class ClusterRay:
    """Stands for `ray` connected to one cluster (its node): actors made and killed; handles of another are refused."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.made: list[SimpleNamespace] = []
        self.killed: list[SimpleNamespace] = []
        self.exceptions = SimpleNamespace(RayError=RayError)
        self.util = SimpleNamespace(get_node_ip_address=lambda: "127.0.0.1")

    def get_runtime_context(self) -> SimpleNamespace:
        return SimpleNamespace(get_node_id=lambda: self.node, get_job_id=lambda: "01000000")  # a new cluster: the same id

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}

    def remote(self, cls: type) -> SimpleNamespace:
        def made(*args: Any) -> SimpleNamespace:
            actor = SimpleNamespace(node=self.node, kind=cls.__name__, renew=Method(lambda *a: Future()))
            self.made.append(actor)
            return actor

        return SimpleNamespace(options=lambda **_: SimpleNamespace(remote=made))

    def kill(self, actor: SimpleNamespace) -> None:
        if actor.node != self.node:
            raise RayError("ActorHandle objects are not valid across Ray sessions.")
        self.killed.append(actor)

    def get(self, ref: Any) -> Any:
        raise AssertionError("a warm actor of another cluster was asked")


def test_a_job_run_again_after_ray_was_started_again_gets_new_actors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray.util.scheduling_strategies",
                        SimpleNamespace(NodeAffinitySchedulingStrategy=lambda node, soft: node))
    monkeypatch.setattr(ray_engine, "_WARM", {})
    job = _job(EvalConfig(target=SAMPLE, data=ROWS, model="openai/test-model", api_base="http://127.0.0.1:9/v1"))
    before, after = ClusterRay("node-1"), ClusterRay("node-2")  # ray.shutdown(), then a new local cluster

    first = ray_engine._actors(before, job, 8, None)
    again = ray_engine._actors(after, job, 8, None)

    assert again.driver_runs_rows and all(actor.node == "node-2" for actor in [again.hub, *again.workers])
    assert {actor.kind for actor in after.made} == {"Hub", "RowWorker"} and not after.killed
    assert first.workers and not set(map(id, first.workers)) & set(map(id, again.workers))


@pytest.mark.parametrize(("engine", "workers"), [("local", 1), ("local", 2), ("ray", 1)])
def test_every_engine_is_called_one_way_and_gives_the_local_records(engine: str, workers: int,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # the dispatcher calls local, workers and Ray alike: rows and one EngineSetup in, records (None: a tick) out
    from contractstudio.evaluation.engines import EngineSetup
    from contractstudio.evaluation.evaluate import engine_for

    job = _job(EvalConfig(target=SAMPLE, data=ROWS, mode="scripted"))
    local = RowRunner(job)
    rows = sample_rows(local)
    expected = {row.key: what_a_user_reads(local.run(row)) for row in rows}
    if engine == "ray":  # stand-in actors, up at once (no cluster): the engine's own code from its entry point on
        actors = [StartingActor(RowRunner(job)), StartingActor(RowRunner(job))]
        for actor in actors:
            actor.up.set_result(True)
        monkeypatch.setattr(ray_engine, "import_ray", lambda: RAY)
        monkeypatch.setattr(ray_engine, "start_cluster", lambda *_: False)
        monkeypatch.setattr(ray_engine, "_actors", lambda *_: Crew(hub=None, workers=list(actors), folder=None))

    setup = EngineSetup(run_row=RowRunner(job).run, job=job, concurrency=4, workers=workers)
    records = [rec for rec in engine_for(engine, workers)(iter(rows), setup) if rec is not None]

    assert {rec["key"]: what_a_user_reads(rec) for rec in records} == expected
    assert len(records) == len(rows)
