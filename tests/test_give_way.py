"""The model client's import gives way to the keys (studio/give_way.py): while a key is handled, each module a worker
thread imports waits, and goes on once the key is drawn. The studio's wiring is in tests/studio/test_big_files.py; an
analysis has no checkpoint (the studio stops a stale one: tests/test_stopped_analysis.py)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from contractstudio.studio import give_way


@pytest.fixture(autouse=True)
def way_open_after() -> Iterator[None]:
    yield
    give_way.keys_done()


def in_background(work: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def waits_for_the_key(work: Callable[[], object]) -> None:
    """`work`, run in a background thread while a key is handled, is not done until the key is."""
    give_way.keys_arrived()
    thread = in_background(work)
    thread.join(0.15)
    assert thread.is_alive(), "the work went on while the key was handled"
    give_way.keys_done()
    thread.join(10)
    assert not thread.is_alive()


def test_a_background_checkpoint_waits_while_a_key_is_handled_and_goes_on_once_it_is_drawn() -> None:
    waits_for_the_key(give_way.give_way)


def test_the_thread_that_handles_keys_never_waits_for_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(give_way, "MAX_WAIT_S", 3600.0)  # a wait would outlast the test: it cannot pass by waiting

    def handles_keys() -> None:
        give_way.keys_arrived()
        give_way.give_way()

    keys = in_background(handles_keys)
    keys.join(30)  # a hang guard, not a measure: the checkpoint either goes on at once or waits an hour
    assert not keys.is_alive()
    assert not give_way.way_open()  # it went on while its own key was still being handled


def test_with_no_key_being_handled_nothing_waits() -> None:
    thread = in_background(give_way.give_way)
    thread.join(1)
    assert not thread.is_alive()


def test_a_wait_ends_after_its_cap_even_if_the_keys_never_say_they_are_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(give_way, "MAX_WAIT_S", 0.05)
    give_way.keys_arrived()
    thread = in_background(give_way.give_way)
    thread.join(2)
    assert not thread.is_alive()


def test_a_module_a_background_thread_imports_while_a_key_is_handled_waits_for_it(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "imported_in_the_background.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with give_way.imports_give_way():
        waits_for_the_key(lambda: __import__("imported_in_the_background"))
    assert sys.modules["imported_in_the_background"].VALUE == 1
    assert not any(type(f).__name__ == "_ImportsGiveWay" for f in sys.meta_path)  # gone once the studio is


def test_an_import_that_waits_for_a_key_never_holds_up_an_import_on_the_keys_thread(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The import system asks each finder under its one global lock: a wait there would hold every other thread's
    first import of a module (the screen's, while it handles the key) until the wait ends."""
    monkeypatch.setattr(give_way, "MAX_WAIT_S", 3600.0)  # the worker waits until the key is done, however long
    for name in ("imported_by_a_worker", "imported_by_the_screen"):
        (tmp_path / f"{name}.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    key_arrived, worker_waits = threading.Event(), threading.Event()
    screen_imported: list[str] = []
    checkpoint = give_way.give_way

    def noted_checkpoint() -> None:  # the finder's wait: the worker is in it from here on
        if not give_way.way_open():
            worker_waits.set()
        checkpoint()

    monkeypatch.setattr(give_way, "give_way", noted_checkpoint)

    def screen() -> None:  # the thread that handles keys: a key comes, and it imports a module while handling it
        give_way.keys_arrived()
        key_arrived.set()
        worker_waits.wait(30)
        screen_imported.append(__import__("imported_by_the_screen").__name__)

    with give_way.imports_give_way():
        keys = in_background(screen)
        key_arrived.wait(30)
        worker = in_background(lambda: __import__("imported_by_a_worker"))
        assert worker_waits.wait(30)  # the worker's import waits for the key (the screen imports only then)
        keys.join(30)  # a hang guard: with the import lock held by the waiting worker, this import waits an hour
        imported_while_the_worker_waited = screen_imported == ["imported_by_the_screen"] and worker.is_alive()
        give_way.keys_done()
        worker.join(30)
        assert imported_while_the_worker_waited
        assert not worker.is_alive() and sys.modules["imported_by_a_worker"].VALUE == 1
