"""The analysis of each open document: debounced, in a worker thread, stale results dropped.

Each open document is an `editing.live.LiveDocument` (the studio's edit screen drives the same class): every
change makes a new version; the analysis of a version is published only if no newer version arrived meanwhile.
This module is only the server's scheduler for it (an asyncio task, a thread pool). Requests that need positions
to match (hover, definition, rename ...) wait for the analysis of the current text; completion answers at once
from the last analysis that parsed, reading the cursor's place from the live text. The editing help's symbols
(editing/symbols.py) are collected in the worker after the findings are published, and a request that names things
(hover, definition, references, rename) waits for them: none is collected on the event loop, where the first
collection of a 5 MB file (or one after an edit analyzed whole) takes a second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contractstudio.editing.live import DEBOUNCE_S, LiveDocument

if TYPE_CHECKING:  # the analyzer is imported after `initialize` is answered (start-up time), in the worker
    from contractstudio.analysis.check import FileReport

MAX_TEXT = 20_000_000  # characters: a buffer larger than this is not analyzed (it is not a contract someone types)


def ours(text: str, folder: Path | None = None, dialect: str | None = None, path: str | None = None) -> bool:
    """`reading.files.ownership`, the answer discovery and `check` give: a Kubernetes file is not ours, nor a Python
    file without a contracted class."""
    if len(text) > MAX_TEXT:
        return False
    from contractstudio.reading.files import ownership  # in the worker, not at start-up

    return ownership(text, path=path, dialect=dialect, folder=folder).ours


def python_file(path: str) -> bool:
    """A file of a file dialect (a `.py` file): served only when it is ours, and then with findings only (no editing
    help: it writes YAML)."""
    from contractstudio.reading.dialect_registry import for_file

    return for_file(path) is not None


class Entry(LiveDocument):
    """What the server knows about one open document: the live document, its URI and its pending analysis task."""

    def __init__(self, uri: str, path: str, version: int = 0, text: str = "") -> None:
        super().__init__(path, text, version)
        self.uri = uri
        self.pending: asyncio.Task[Any] | None = None


class Analyses:
    """Open documents and their analyses; `publish` is called with each fresh report."""

    def __init__(self, publish: Callable[[Entry], None], *, debounce_s: float = DEBOUNCE_S, trusted: Callable[[str], bool] | None = None,
                 workers: int = 1, dialect: str | None = None) -> None:
        self.entries: dict[str, Entry] = {}
        self.dialect = dialect  # --dialect: every document read as this format; None: by folder setting and shape
        self.publish = publish
        self.debounce_s = debounce_s
        self.trusted = trusted or folder_trusted
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="contractstudio-analysis")

    def open(self, uri: str, path: str, version: int, text: str) -> Entry:
        entry = self.entries[uri] = Entry(uri, path, version, text)
        self._schedule(entry, delay=0.0)
        return entry

    def change(self, uri: str, version: int, text: str) -> Entry | None:
        entry = self.entries.get(uri)
        if entry is None:
            return None
        entry.edit(text, version)
        self._schedule(entry, delay=self.debounce_s)
        return entry

    def close(self, uri: str) -> None:
        entry = self.entries.pop(uri, None)
        if entry is not None and entry.pending is not None:
            entry.pending.cancel()

    def _schedule(self, entry: Entry, delay: float) -> None:
        if entry.pending is not None and not entry.pending.done():
            entry.pending.cancel()
        entry.pending = asyncio.get_running_loop().create_task(self._run(entry, delay))

    async def _run(self, entry: Entry, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        await self._analyze(entry)

    async def _analyze(self, entry: Entry) -> FileReport:
        version, text = entry.version, entry.text
        report = await asyncio.get_running_loop().run_in_executor(self.pool, self.analyze, entry.path, text)
        old = entry.report
        if self.entries.get(entry.uri) is not entry or not entry.accept(version, report):
            return report  # a newer text arrived meanwhile (or the file closed): this result is stale, never published
        self.publish(entry)
        self.pool.submit(_drop, old)  # freeing a big report's objects takes a while: not on the event loop
        await self._symbols(entry, report)
        return report

    async def _symbols(self, entry: Entry, report: FileReport) -> None:
        """Collect the symbols of `report` in the worker (after an edit within one entry, that entry's only)."""
        if entry.named is not report:
            await asyncio.get_running_loop().run_in_executor(self.pool, LiveDocument.collect_symbols, report)
            entry.symbols_done(report)

    def analyze(self, path: str, text: str) -> FileReport:
        """One analysis (in the worker) with the open file's own analyzer; a text that is not ours gives an empty report."""
        from contractstudio.analysis.check import Context, FileReport
        from contractstudio.reading.project import project_for
        from contractstudio.trust import HookFolder, hook_folder

        on_disk = Path(path).is_absolute()  # an unsaved buffer has no folder: nothing is imported for it
        hooks = hook_folder(path, self.trusted(path)) if on_disk else HookFolder()
        if not ours(text, hooks.folder, self.dialect, path):
            return FileReport(path, text, None, [], [])
        settings = project_for(path).settings_of(Path(path).parent) if on_disk else None  # read here, not by the analysis
        context = Context(hooks=hooks, dialect=self.dialect, api_bases=self.api_bases, settings=settings)
        live = next((e for e in list(self.entries.values()) if e.path == path), None) or LiveDocument(path)
        return live.analyze(text, context, path, symbols=False)  # the symbols come after the findings (`_symbols`)

    @cached_property
    def api_bases(self) -> tuple[str, ...]:
        """The servers the user's config lets keys go to, read once per server (at its first analysis), never per key."""
        from contractstudio.trust import user_api_bases

        return user_api_bases()

    async def current(self, uri: str, names: bool = False) -> tuple[Entry, FileReport] | None:
        """The document's analysis of its current text (analyzed now when the last one is older); `names`: with its
        symbols collected (in the worker), for a request that looks names up."""
        entry = self.entries.get(uri)
        if entry is None or python_file(entry.path):  # a .py file gets its findings only: the editing help writes YAML
            return None
        report = entry.current
        if report is None:
            if entry.pending is not None and not entry.pending.done():
                entry.pending.cancel()
            report = await self._analyze(entry)
        if names and entry.named is not report:
            await self._symbols(entry, report)  # a lookup in the report's symbols, collected already or now
        return entry, report

    def shutdown(self) -> None:
        """Stop pending analyses and the worker."""
        for entry in self.entries.values():
            if entry.pending is not None:
                entry.pending.cancel()
        self.pool.shutdown(wait=False, cancel_futures=True)


def folder_trusted(path: str) -> bool:
    """The per-folder trust every face asks (contractstudio/trust.py): folders the user chose to trust always.

    Read on every analysis, so a folder trusted in the studio meanwhile counts at once. An
    unsaved buffer has no folder: never trusted. The server has no --trust of its own.
    """
    from contractstudio.trust import Trust

    return Path(path).is_absolute() and Trust().allows(path)


def _drop(report: object) -> None:
    """Runs in the worker: the last reference to an old report goes away here."""
    del report
