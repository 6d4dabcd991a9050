"""`eval --engine ray`: the same rows as tasks of Ray actors, on a running cluster or a local one started here.

The only module that imports `ray` (the `contractstudio[ray]` extra), and only when a run starts: the actor
classes below are plain classes that `run_ray` makes remote, so importing this module costs nothing. Each
worker actor builds one `RowRunner` from the job (the contract's text travels
with it, so a node needs no copy of the file) and runs rows on `max_concurrency`
threads, exactly as the local engine does. One hub actor, pinned to the
driver's node, holds the reply cache (the driver's cache folder) and the rate
limiter: one limiter for the whole cluster, not one per worker. The driver keeps
at most `concurrency` rows in flight across the cluster and yields records as
they finish; reading, resuming, writing and the summary stay in `evaluate.py`.

New actors take seconds to start (each imports litellm: 10-20 s on a loaded
machine). On a local cluster (this machine, this environment) the driver does not
wait for them: while an actor is starting, the rows it would have taken run in
the driver itself, as the local engine runs them (tasks of one event loop), with
the hub's limiter and the same cache file, and each actor is handed rows as soon
as it is up. Each row is sent to exactly one place. On a cluster joined with
`--address` rows wait for the actors (the model may be reachable, and its keys
set, on the cluster's nodes only).
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import math
import os
import pickle
import queue
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contractstudio.evaluation.dataset import Row
from contractstudio.evaluation.engines import EngineSetup
from contractstudio.evaluation.hub import Hub, HubLimits, HubStore
from contractstudio.evaluation.rows import EvalJob, RowRunner, error_record
from contractstudio.runtime.child_processes import environment_of_children, neutral_folder

LOCAL_OBJECT_STORE_BYTES = 128 * 1024 * 1024  # rows and records are small; Ray's default takes 30% of the memory
TICK_S = 0.25
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # off: Ray takes 127.0.0.1 as the node's IP


def _get(ref: Any) -> Any:
    """`ray.get`, in a worker actor (ray is loaded there already)."""
    import ray

    return ray.get(ref)


def _hub_calls(hub: Any) -> tuple[Any, Any]:
    """(call, tell) to the hub actor, for the proxies of `hub.py`."""

    def call(method: str, *args: Any) -> Any:
        return _get(getattr(hub, method).remote(*args))

    def tell(method: str, *args: Any) -> None:
        getattr(hub, method).remote(*args)

    return call, tell


def _driver_calls(hub: Any) -> tuple[Any, Any]:
    """(call, tell) to the hub for the driver's own rows, which share its event loop: asking how long the run is
    paused never waits (the latest answer is used and the next asked in the background), so no row stalls while
    the hub actor itself is still starting."""
    call, tell = _hub_calls(hub)
    paused_until = [0.0]  # on this machine's monotonic clock
    asking = threading.Lock()

    def answered(done: Future[Any]) -> None:
        try:
            paused_until[0] = max(paused_until[0], time.monotonic() + float(done.result()))
        except Exception:  # noqa: BLE001 - a hub lost to Ray: the rows' own calls to it report that
            pass
        asking.release()

    def ask(method: str, *args: Any) -> Any:
        if method != "paused_for":
            return call(method, *args)
        if asking.acquire(blocking=False):
            hub.paused_for.remote().future().add_done_callback(answered)
        return max(paused_until[0] - time.monotonic(), 0.0)

    return ask, tell


def hub_runner(job: EvalJob, call: Any, tell: Any, *, cache: Any = None) -> RowRunner:
    """The job's `RowRunner` with the hub's limiter and cache (or `cache`, the same file opened here)."""
    live = job.mode == "live"
    store = (HubStore(call, tell) if cache is None else cache) if live and job.use_cache else None  # an empty cache is falsy
    limits = HubLimits(call, tell, limited=bool(job.rpm or job.tpm)) if live else None
    return RowRunner(job, store=store, limits=limits)


def telemetry_environment(*, joined: bool) -> dict[str, str]:
    """The driver's OpenTelemetry variables (`--otlp URL` set the endpoint): each worker actor exports as they say.

    To a cluster joined with `--address` (other machines) the exporter's headers are not sent: they hold the
    receiver's credentials, kept from the cluster as the model's keys are (its nodes set their own)."""
    return {name: value for name, value in os.environ.items()
            if name.startswith("OTEL_") and not (joined and name.endswith("_HEADERS"))}


class RowWorker:
    """Runs rows of one job on its own threads (a threaded actor)."""

    def __init__(self, job: EvalJob, hub: Any, telemetry: dict[str, str] | None = None) -> None:
        if telemetry:  # the driver's; with none, the node's own environment decides (its operator may have set it)
            from contractstudio.runtime import otel

            os.environ.update(telemetry)
            otel.reset()
        self.runner = hub_runner(job, *_hub_calls(hub))

    def flush_spans(self) -> bool:
        """Send the spans of the rows run here: Ray stops an actor without its interpreter's teardown."""
        from contractstudio.runtime import otel

        return otel.flush()

    def ready(self) -> bool:
        """Answered once the actor is built (litellm and the contract loaded): the driver then hands it rows."""
        return True

    def run(self, row: Row) -> dict[str, Any]:
        return self.runner.run(row)


def start_cluster(ray: Any, address: str | None, init: dict[str, Any]) -> bool:
    """Join the cluster at `address` (or $RAY_ADDRESS), or start a local one on loopback; True when started here."""
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
    local = not address and not os.environ.get("RAY_ADDRESS")
    if local:
        options["object_store_memory"] = LOCAL_OBJECT_STORE_BYTES
    options.update(init)
    with neutral_folder() as folder:
        options["runtime_env"] = _runtime_env(options.get("runtime_env"), folder)
        if not local:
            ray.init(address=address, **options)  # None: $RAY_ADDRESS
            return True
        with _loopback_node(), environment_of_children():  # Ray's servers and workers start with this environment
            ray.init(_node_ip_address="127.0.0.1", **options)
    node_ip = ray.util.get_node_ip_address()
    if not ipaddress.ip_address(node_ip).is_loopback:  # never run a cluster others can reach, whatever Ray changed
        ray.shutdown()
        raise RuntimeError(f"the local Ray cluster took the address {node_ip}, not loopback: refusing to run on it")
    return True


def _runtime_env(asked: dict[str, Any] | None, folder: str) -> dict[str, Any]:
    """The job's runtime_env: an empty `working_dir` (`folder`) unless one was asked for.

    Without a working_dir Ray puts the driver's current folder (and its script's) first on every worker's
    `sys.path`: a cloned repository's `asyncio.py` would run in each worker. With it, a worker starts in a copy
    of that empty folder, so neither is on its path and a relative PYTHONPATH entry finds nothing.
    """
    env = dict(asked or {})
    env.setdefault("working_dir", folder)
    return env


@contextmanager
def _loopback_node() -> Iterator[None]:
    """While a local cluster starts, Ray picks 127.0.0.1 as the node's IP, so every server it starts listens there only.

    Ray has no authentication, and its GCS, raylet, object manager, agents and workers bind every interface
    unless the node's IP is loopback. It picks loopback when its cluster switch is off (as on macOS and Windows):
    the environment variable reaches every process it starts (agents and workers import ray afresh), and the
    constant covers a driver that imported ray before this run. Both are restored afterwards, so a later
    `--address` run from the same process joins a real cluster with the machine's address.
    """
    from ray._private import ray_constants

    if not hasattr(ray_constants, "ENABLE_RAY_CLUSTER"):
        raise RuntimeError(f"this Ray ({_ray_version()}) has no loopback switch (ray_constants.ENABLE_RAY_CLUSTER): "
                           "a local cluster cannot be kept on 127.0.0.1; start one yourself and pass --address")
    saved_env, saved_switch = os.environ.get(LOOPBACK_SWITCH), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[LOOPBACK_SWITCH] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved_switch
        if saved_env is None:
            os.environ.pop(LOOPBACK_SWITCH, None)
        else:
            os.environ[LOOPBACK_SWITCH] = saved_env


def _ray_version() -> str:
    import ray

    return str(getattr(ray, "__version__", "?"))


class RayMissing(ImportError):
    """Ray is not installed (the `contractstudio[ray]` extra): what to install, said before a run starts."""


def import_ray() -> Any:
    """The `ray` module, or RayMissing when Ray itself is not installed. The one test of a missing Ray: the module
    that was not found is named `ray` (or one of its own); any other import error (a broken dependency of an
    installed Ray) is raised as it is, whatever its message says."""
    try:
        import ray
    except ModuleNotFoundError as err:
        if err.name is not None and (err.name == "ray" or err.name.startswith("ray.")):
            raise RayMissing("--engine ray needs Ray: pip install 'contractstudio[ray]'", name=err.name) from err
        raise
    return ray


def run_ray(rows: Iterator[Row], setup: EngineSetup) -> Iterator[dict[str, Any] | None]:
    """Each row's record as it finishes (None on a quiet tick), the rows running on Ray actors (engines.Engine).
    Ray is imported now, as the engine is chosen (RayMissing before the results file is opened), not when the first
    record is asked."""
    ray = import_ray()
    if setup.job is None:
        raise ValueError("the Ray engine runs a contract's rows (a pipeline's simulation runs in this process)")
    return _run_ray(ray, rows, setup.job, setup.concurrency, setup.address, setup.ray_init, setup.cache_dir)


def _run_ray(ray: Any, rows: Iterator[Row], job: EvalJob, concurrency: int, address: str | None,
             init: dict[str, Any] | None, cache_dir: str | None) -> Iterator[dict[str, Any] | None]:
    from contractstudio.evaluation.cache import default_cache_dir

    started = start_cluster(ray, address, dict(init or {}))
    try:
        folder = (cache_dir or job.cache_dir or str(default_cache_dir())) if job.use_cache else None
        yield from _drive(ray, rows, job, _actors(ray, job, concurrency, folder), concurrency)
    finally:
        if started:
            _WARM.clear()
            ray.shutdown()


# The actors of the last job this driver ran, kept while it stays connected to the cluster: the same job run
# again (the studio's re-runs, a benchmark's rounds) starts on warm actors, with litellm and the contract loaded.
_WARM: dict[str, tuple[Any, list[Any]]] = {}


@dataclass(slots=True)
class Crew:
    """A run's worker actors and their hub."""

    hub: Any
    workers: list[Any]
    folder: str | None  # the reply cache's folder (on the driver's machine: the hub is pinned there)
    # new actors on a local cluster: the driver runs rows while they start (warm ones are up; on a cluster joined
    # with --address the model may be reachable, and its keys set, on the cluster's nodes only)
    driver_runs_rows: bool = False


def _actors(ray: Any, job: EvalJob, concurrency: int, folder: str | None) -> Crew:
    """The worker actors for this job (their hub behind them): the warm ones of the same job, else new ones.

    New actors are created without waiting for them to start (`_drive` runs rows in the driver meanwhile)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    # the hub's cache folder and limits are each run's own; the rest of the job decides whether the actors fit
    same = dataclasses.replace(job, cache_dir=None, rpm=None, tpm=None)
    context = ray.get_runtime_context()
    here = context.get_node_id()  # in the key: a cluster started again (after ray.shutdown) reuses the job's id
    local = ipaddress.ip_address(ray.util.get_node_ip_address()).is_loopback  # a cluster on loopback is this machine
    telemetry = telemetry_environment(joined=not local)
    key = hashlib.sha256(pickle.dumps((here, context.get_job_id(), same, bool(job.rpm or job.tpm),
                                       concurrency, sorted(telemetry.items())))).hexdigest()
    if key in _WARM:
        hub, workers = _WARM[key]
        ray.get(hub.renew.remote(folder, job.rpm, job.tpm))  # before any row of this run asks it
        return Crew(hub, list(workers), folder)
    for old_hub, old_workers in _WARM.values():
        for actor in (old_hub, *old_workers):
            try:
                ray.kill(actor)
            except ray.exceptions.RayError:
                pass  # an actor of a cluster this driver has left: gone with it
    hub_actor: Any = ray.remote(Hub)  # actor classes; their .options is not in ray's stubs
    hub = hub_actor.options(num_cpus=0, max_concurrency=max(4 * concurrency, 16),
                            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(folder, job.rpm, job.tpm)
    worker_actor: Any = ray.remote(RowWorker)
    cpus = max(int(ray.cluster_resources().get("CPU", 1)), 1)
    count = max(min(cpus, concurrency), 1)
    threads = math.ceil(concurrency / count)
    workers = [worker_actor.options(num_cpus=1, max_concurrency=threads).remote(job, hub, telemetry) for _ in range(count)]
    _WARM.clear()
    _WARM[key] = (hub, workers)
    return Crew(hub, workers, folder, driver_runs_rows=local)


def _drive(ray: Any, rows: Iterator[Row], job: EvalJob, crew: Crew, concurrency: int) -> Iterator[dict[str, Any] | None]:
    """Records as rows finish, at most `concurrency` in flight: on the actors that are up, in the driver meanwhile."""
    from contractstudio.evaluation.cache import ReplyCache
    from contractstudio.evaluation.local import RowLoop

    # one queue for all that finishes: (actor, None, future) when an actor is up, (actor or None: the driver, row,
    # future) when a row is done; the futures complete in Ray's or the driver's loop thread, this one takes them
    finished: queue.SimpleQueue[tuple[int | None, Row | None, Future[Any]]] = queue.SimpleQueue()

    def tell(index: int | None, row: Row | None, future: Future[Any]) -> None:
        future.add_done_callback(lambda done: finished.put((index, row, done)))

    workers = crew.workers
    up = [not crew.driver_runs_rows] * len(workers)  # else rows wait at an actor that is starting
    if crew.driver_runs_rows:
        for number, worker in enumerate(workers):
            tell(number, None, worker.ready.remote().future())
    threads = math.ceil(concurrency / len(workers))
    load = [0] * len(workers)
    used: set[int] = set()  # the actors handed rows: their spans are sent before the run ends
    driver: tuple[RowRunner, RowLoop] | None = None
    # the driver's rows read and write the hub's cache file themselves (SQLite is safe across processes): a
    # round trip to the hub per request would stall its event loop, as the local engine's rows are never stalled
    cache = ReplyCache(Path(crew.folder)) if crew.folder and job.mode == "live" and crew.driver_runs_rows else None
    in_flight = 0
    exhausted = False
    try:
        while True:
            while not exhausted and in_flight < concurrency:
                row = next(rows, None)
                if row is None:
                    exhausted = True
                    break
                index: int | None = _actor_for(load, up, threads)
                if index is None:
                    if driver is None:
                        driver = (hub_runner(job, *_driver_calls(crew.hub), cache=cache), RowLoop())
                    future: Future[Any] = driver[1].submit(_run_here(driver[0], row))
                else:
                    load[index] += 1
                    used.add(index)
                    future = workers[index].run.remote(row).future()
                tell(index, row, future)
                in_flight += 1
            if in_flight == 0:
                _flush_spans(ray, [workers[i] for i in sorted(used)])
                return
            try:
                index, row, done = finished.get(timeout=TICK_S)
            except queue.Empty:
                yield None
                continue
            if row is None and index is not None:  # an actor is up (or failed to start: its rows fail, as a lost actor's)
                up[index] = True
                continue
            assert row is not None
            in_flight -= 1
            if index is not None:
                load[index] -= 1
            try:
                yield done.result()
            except ray.exceptions.RayError as err:  # a worker that died: the row is recorded as failed, never lost
                _WARM.clear()  # and the next run starts new actors
                yield error_record(job, row, f"Ray: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}", 0.0)
    finally:
        if driver is not None:
            driver[1].close()
        if cache is not None:
            cache.close()


def _flush_spans(ray: Any, workers: list[Any], timeout_s: float = 30.0) -> None:
    """When spans are exported, each actor that ran rows sends them before the run ends (the driver's own are sent
    by the command as it ends)."""
    from contractstudio.runtime import otel

    if not workers or not otel.active():
        return
    try:
        ray.get([worker.flush_spans.remote() for worker in workers], timeout=timeout_s)
    except (ray.exceptions.RayError, TimeoutError):  # an actor lost or slow: its spans are lost, never the records
        pass


def _actor_for(load: list[int], up: list[bool], threads: int) -> int | None:
    """The actor for the next row: the least busy one that is up; None (the driver runs it) while an actor is
    still starting and those up have no free thread (a row queued on a busy actor would wait for it)."""
    ready = [i for i, is_up in enumerate(up) if is_up]
    if len(ready) < len(up):
        ready = [i for i in ready if load[i] < threads]
    return min(ready, key=load.__getitem__) if ready else None


async def _run_here(runner: RowRunner, row: Row) -> dict[str, Any]:
    """A row in the driver, as the local engine runs it: awaited when live, else at once."""
    return await runner.arun(row) if runner.job.mode == "live" else runner.run(row)
