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
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import math
import os
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from contractstudio.evaluation.dataset import Row
from contractstudio.evaluation.hub import Hub, HubLimits, HubStore
from contractstudio.evaluation.rows import EvalJob, RowRunner, error_record

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


class RowWorker:
    """Runs rows of one job on its own threads (a threaded actor)."""

    def __init__(self, job: EvalJob, hub: Any) -> None:
        live = job.mode == "live"
        call, tell = _hub_calls(hub)
        store = HubStore(call, tell) if live and job.use_cache else None
        limits = HubLimits(call, tell, limited=bool(job.rpm or job.tpm)) if live else None
        self.runner = RowRunner(job, store=store, limits=limits)

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
    if not local:
        ray.init(address=address, **options)  # None: $RAY_ADDRESS
        return True
    with _loopback_node():
        ray.init(_node_ip_address="127.0.0.1", **options)
    node_ip = ray.util.get_node_ip_address()
    if not ipaddress.ip_address(node_ip).is_loopback:  # never run a cluster others can reach, whatever Ray changed
        ray.shutdown()
        raise RuntimeError(f"the local Ray cluster took the address {node_ip}, not loopback: refusing to run on it")
    return True


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


def run_ray(rows: Iterator[Row], job: EvalJob, concurrency: int, *, address: str | None = None,
            init: dict[str, Any] | None = None, cache_dir: str | None = None) -> Iterator[dict[str, Any] | None]:
    """Each row's record as it finishes (None on a quiet tick), the rows running on Ray actors."""
    import ray

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


def _actors(ray: Any, job: EvalJob, concurrency: int, folder: str | None) -> list[Any]:
    """The worker actors for this job (their hub behind them): the warm ones of the same job, else new ones.

    New actors are created without waiting: rows are submitted at once and start as each actor is up."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    # the hub's cache folder and limits are each run's own; the rest of the job decides whether the actors fit
    same = dataclasses.replace(job, cache_dir=None, rpm=None, tpm=None)
    key = hashlib.sha256(pickle.dumps((ray.get_runtime_context().get_job_id(), same, bool(job.rpm or job.tpm),
                                       concurrency))).hexdigest()
    if key in _WARM:
        hub, workers = _WARM[key]
        ray.get(hub.renew.remote(folder, job.rpm, job.tpm))  # before any row of this run asks it
        return list(workers)
    for old in _WARM.pop(next(iter(_WARM), ""), (None, []))[1]:
        ray.kill(old)
    hub_actor: Any = ray.remote(Hub)  # actor classes; their .options is not in ray's stubs
    here = ray.get_runtime_context().get_node_id()
    hub = hub_actor.options(num_cpus=0, max_concurrency=max(4 * concurrency, 16),
                            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(folder, job.rpm, job.tpm)
    worker_actor: Any = ray.remote(RowWorker)
    cpus = max(int(ray.cluster_resources().get("CPU", 1)), 1)
    count = max(min(cpus, concurrency), 1)
    threads = math.ceil(concurrency / count)
    workers = [worker_actor.options(num_cpus=1, max_concurrency=threads).remote(job, hub) for _ in range(count)]
    _WARM.clear()
    _WARM[key] = (hub, workers)
    return workers


def _drive(ray: Any, rows: Iterator[Row], job: EvalJob, workers: list[Any], concurrency: int) -> Iterator[dict[str, Any] | None]:
    load = [0] * len(workers)
    pending: dict[Any, tuple[int, Row]] = {}
    exhausted = False
    while True:
        while not exhausted and len(pending) < concurrency:
            row = next(rows, None)
            if row is None:
                exhausted = True
                break
            index = min(range(len(workers)), key=load.__getitem__)
            load[index] += 1
            pending[workers[index].run.remote(row)] = (index, row)
        if not pending:
            return
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=TICK_S)
        if not ready:
            yield None
            continue
        others = [r for r in pending if r not in ready]
        more = ray.wait(others, num_returns=len(others), timeout=0)[0] if others else []
        for ref in [*ready, *more]:
            index, row = pending.pop(ref)
            load[index] -= 1
            try:
                yield ray.get(ref)
            except ray.exceptions.RayError as err:  # a worker that died: the row is recorded as failed, never lost
                _WARM.clear()  # and the next run starts new actors
                yield error_record(job, row, f"Ray: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}", 0.0)
