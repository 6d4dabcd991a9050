"""Shared test set-up: paths, and no test ever reaches beyond loopback."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from real_model import MISSING, RealServer, serve, server_installed

from contractstudio.safe_text import forget_keys_since, keys_in_use

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES = ROOT / "samples"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # litellm must never fetch its price map, and no real key may leak into a test;
    # nor may the user's own config (folders remembered as trusted, trusted_api_bases), nor the user's reply
    # cache: each test has its own (one test's cached reply would answer another's request, also across xdist workers).
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user-config"))
    # (CONTRACTSTUDIO_CACHE, not XDG_CACHE_HOME: pip and virtualenv in the packaging and hook tests keep theirs)
    monkeypatch.setenv("CONTRACTSTUDIO_CACHE", str(tmp_path / "user-cache"))
    for key in list(os.environ):
        if key.endswith("_API_KEY"):
            monkeypatch.delenv(key, raising=False)
    from contractstudio.runtime.structured import forget_shapes

    forget_shapes()  # each test is a fresh session: no server's request shape is known yet


@pytest.fixture(scope="session")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    """llama-cpp-python's server with SmolLM2-135M on a free loopback port, for this test process (one per xdist
    worker), stopped at the end. Without the `local` extra it skips, which CI's skip policy below never allows."""
    if not server_installed():
        pytest.skip(MISSING)
    yield from serve(tmp_path_factory.mktemp("real-model"))


@pytest.fixture(autouse=True)
def _keys_forgotten() -> Iterator[None]:
    # the keys a test uses are in use for that test only: any 8 characters of one are masked, and a key such as
    # "sk-test-usual-variable-0000" would mask the word "variable" in every later test of the same process
    state = keys_in_use()
    yield
    forget_keys_since(state)


@pytest.fixture(autouse=True)
def _litellms_callbacks_restored() -> Iterator[None]:
    # litellm keeps its callbacks in module globals, and importing its Vertex context caching (a Gemini test) adds a
    # "cache" entry to them for good; a test leaves them as it found them, so no test's outcome depends on which
    # tests ran before it in the same worker
    lit = sys.modules.get("litellm")
    names = ("success_callback", "_async_success_callback", "input_callback", "failure_callback", "_async_failure_callback")
    before = {n: list(getattr(lit, n)) for n in names} if lit is not None else None
    yield
    lit = sys.modules.get("litellm")
    if lit is None:
        return
    for n in names:
        if before is not None:
            setattr(lit, n, before[n])
        elif lit.cache is None:
            setattr(lit, n, [c for c in getattr(lit, n) if c != "cache"])


# ----------------------------------------------------------------- the fuzz seed of this run
# The short fuzz tests run in every CI run with a new seed, so each run explores new inputs; the seed is printed in
# the header and again after a failure. Replay a run with FUZZ_SEED=<seed>.
FUZZ_SEED = int(os.environ.get("FUZZ_SEED") or random.SystemRandom().randrange(2**32))


def pytest_report_header() -> str:
    return f"fuzz seed: {FUZZ_SEED} (replay: FUZZ_SEED={FUZZ_SEED})"


# Under pytest-xdist each worker is a process of its own that imports this file again: it takes the seed the
# controller printed, so the run's one seed replays every worker's tests.
@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput["fuzz_seed"] = FUZZ_SEED


def pytest_configure(config: pytest.Config) -> None:
    global FUZZ_SEED
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "fuzz_seed" in workerinput:
        FUZZ_SEED = workerinput["fuzz_seed"]


# ----------------------------------------------------------------- the slow tests first
# On a worker per core (scripts/test.sh) the run ends when its last test does: a minute-long test handed out last
# keeps one worker busy while the other has nothing left. The tests marked slow start first; the rest keep their order.
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# ----------------------------------------------------------------- no silent skips in CI
# Under CI=true a skipped test fails the run unless its reason is here: a skip in CI means a check did not run.
ALLOWED_SKIP_REASONS = {
    "FIFOs are POSIX",  # Windows has no named pipes of this kind
    "changing a file's owner needs root",  # CI may run unprivileged
}
_SKIPPED: list[tuple[str, str]] = []


def skip_reason(report: pytest.TestReport) -> str:
    """The reason a skipped test gave (pytest keeps it as 'Skipped: <reason>' in the report's location tuple)."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = skip_reason(report)
        if reason not in ALLOWED_SKIP_REASONS:
            _SKIPPED.append((report.nodeid, reason))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("CI") == "true" and _SKIPPED and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int) -> None:
    if os.environ.get("CI") == "true" and _SKIPPED:
        terminalreporter.section("skipped in CI (not on the allow-list in tests/conftest.py)")
        for nodeid, reason in _SKIPPED:
            terminalreporter.write_line(f"{nodeid}: {reason}")
    if exitstatus != 0:
        terminalreporter.write_line(f"fuzz seed of this run: FUZZ_SEED={FUZZ_SEED}")
