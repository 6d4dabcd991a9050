"""A reply cache keyed by the exact request (model, messages, parameters), so a re-run pays only for new calls.

The key is a SHA-256 of the canonical JSON of the request as the trace records
it, with every secret-looking parameter redacted first and `timeout_s` left out
(a transport setting, not part of what is asked): no API key is ever part of a
key, and none is stored (the reply text is stored redacted). Entries live in one
SQLite file (`replies.sqlite3`) in the cache folder, which is created private
(0700). Only live replies are cached; a transport fault never is.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from contractstudio.runtime.models import LLMReply, LLMRequest
from contractstudio.runtime.trace import redact
from contractstudio.storage.atomic import named_file

CACHE_ENV = "CONTRACTSTUDIO_CACHE"
CACHE_FILE = "replies.sqlite3"
_FILES = (CACHE_FILE, *(CACHE_FILE + side for side in ("-wal", "-shm", "-journal")))  # the names SQLite gives its files
_NOT_KEYED = {"timeout_s"}
_USERINFO = re.compile(r"(?<=://)[^/@\s]*@")


def default_cache_dir() -> Path:
    """$CONTRACTSTUDIO_CACHE, else $XDG_CACHE_HOME/contractstudio, else ~/.cache/contractstudio."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "contractstudio"


def request_key(messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """The cache key of a request: its model, messages and parameters, with no secret in it."""
    keyed = {k: v for k, v in params.items() if k not in _NOT_KEYED}
    if isinstance(keyed.get("api_base"), str):
        keyed["api_base"] = _USERINFO.sub("", keyed["api_base"])  # https://user:password@host
    text = json.dumps({"params": redact(keyed), "messages": messages}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Store(Protocol):
    """Where cached replies are kept: a folder here, or a Ray actor in front of one on a cluster."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, entry: dict[str, Any]) -> None: ...


class ReplyCache:
    """Cached replies in one SQLite file; safe for the threads of one process and for several processes."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = self.folder / CACHE_FILE
        for name in _FILES:  # SQLite would follow a link planted at any of its names: refused first (storage/atomic.py)
            named_file(self.folder, name)
        fresh = not self.path.exists()
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False, isolation_level=None)
        if fresh:
            os.chmod(self.path, 0o600)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, entry TEXT NOT NULL, created REAL)")

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry stored under `key`, or None."""
        with self._lock:
            row = self._db.execute("SELECT entry FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            entry = json.loads(row[0])
        except json.JSONDecodeError:
            return None
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store (or replace) an entry."""
        text = json.dumps(redact(entry), ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO replies (key, entry, created) VALUES (?, ?, ?)", (key, text, time.time()))

    def put_many(self, entries: list[tuple[str, dict[str, Any]]], *, redacted: bool = False) -> None:
        """Store several entries in one transaction (one write to the disk): all of them, or none if killed."""
        rows = [(key, json.dumps(entry if redacted else redact(entry), ensure_ascii=False), time.time())
                for key, entry in entries]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR REPLACE INTO replies (key, entry, created) VALUES (?, ?, ?)", rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class PendingReplies:
    """A reply cache whose new entries are written together, in one transaction, when the run commits them: before
    it writes the records of the rows that made them (evaluate.py), so a row in the results file has its replies in
    the cache, as with workers (worker_process.py). One transaction per row was most of the cache's cost of a row.
    Safe for the loop's thread (gets, puts) and the writer's (commit) being two."""

    def __init__(self, cache: ReplyCache) -> None:
        self.cache = cache
        self._pending: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            entry = self._pending.get(key)
        return entry if entry is not None else self.cache.get(key)

    def put(self, key: str, entry: dict[str, Any]) -> None:
        entry = redact(entry)  # as the file keeps it: a later row that asks the same gets what a re-run would
        with self._lock:
            self._pending[key] = entry

    def commit(self) -> None:
        """Write the entries stored since the last commit; a full disk or a cache locked past its timeout loses them
        (the rows go on, uncached), as a worker's do."""
        with self._lock:
            if not self._pending:
                return
            entries, self._pending = list(self._pending.items()), {}
        try:
            self.cache.put_many(entries, redacted=True)
        except (sqlite3.Error, OSError):
            pass

    def close(self) -> None:
        self.commit()
        self.cache.close()


class CachedModel:
    """A live model behind the cache: a hit answers offline; a miss asks the model and stores the reply.

    One per row: it counts that row's hits and misses and what the hits would have cost. The same request
    made again within a row (a remedy that repeats an identical repair) is a new sample, not a hit: the key
    carries how many times the row made it before, so a re-run replays the same sequence of replies.
    """

    def __init__(self, inner: Any, store: Store) -> None:
        self.inner = inner
        self.store = store
        self.seen: dict[str, int] = {}
        self.hits = 0
        self.misses = 0
        self.saved_usd = 0.0

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def prepare(self) -> None:
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:
            prepare()

    def request_params(self) -> dict[str, Any]:
        return dict(self.inner.request_params())

    def complete(self, request: LLMRequest) -> LLMReply:
        key, hit = self._look_up(request)
        if hit is not None:
            return hit
        reply: LLMReply = self.inner.complete(request)
        self._keep(key, request, reply)
        return reply

    async def acomplete(self, request: LLMRequest) -> LLMReply:
        """`complete` on an event loop: the inner model's reply is awaited (the cache itself is a local file)."""
        key, hit = self._look_up(request)
        if hit is not None:
            return hit
        asking = getattr(self.inner, "acomplete", None)
        reply: LLMReply = await asking(request) if asking is not None else self.inner.complete(request)
        self._keep(key, request, reply)
        return reply

    @property
    def streams(self) -> bool:
        return bool(getattr(self.inner, "streams", False))

    def stream(self, request: LLMRequest, sink: Any) -> LLMReply:
        """`complete`, streamed: a hit is given to `sink` whole (its watch decides as on the chunks); a reply cut
        early is not stored (a later request would read the part as the whole)."""
        key, hit = self._look_up(request)
        if hit is not None:
            return _fed(hit, sink)
        reply: LLMReply = self.inner.stream(request, sink)
        if sink.stopped is None:
            self._keep(key, request, reply)
        return reply

    async def astream(self, request: LLMRequest, sink: Any) -> LLMReply:
        """`stream` on an event loop."""
        key, hit = self._look_up(request)
        if hit is not None:
            return _fed(hit, sink)
        streaming = getattr(self.inner, "astream", None)
        reply: LLMReply = await streaming(request, sink) if streaming is not None else self.inner.stream(request, sink)
        if sink.stopped is None:
            self._keep(key, request, reply)
        return reply

    def _look_up(self, request: LLMRequest) -> tuple[str, LLMReply | None]:
        """The request's key (counting repeats within the row) and the cached reply, or None (a miss)."""
        key = request_key(request.messages, request.params)
        repeat = self.seen.get(key, 0)
        self.seen[key] = repeat + 1
        if repeat:
            key = f"{key}#{repeat}"
        entry = self.store.get(key)
        if entry is not None and isinstance(entry.get("text"), str):
            self.hits += 1
            cost = float(entry.get("cost_usd") or 0.0)
            self.saved_usd += cost
            return key, LLMReply(text=entry["text"], prompt_tokens=int(entry.get("prompt_tokens") or 0),
                                 completion_tokens=int(entry.get("completion_tokens") or 0), cost_usd=cost)
        self.misses += 1
        return key, None

    def _keep(self, key: str, request: LLMRequest, reply: LLMReply) -> None:
        self.store.put(key, {"text": reply.text, "prompt_tokens": reply.prompt_tokens,
                             "completion_tokens": reply.completion_tokens, "cost_usd": reply.cost_usd,
                             "model": str(request.params.get("model", self.name))})


def _fed(hit: LLMReply, sink: Any) -> LLMReply:
    """A cached reply given to a stream in one chunk: cut there (the reply so far is the whole) when its watch says so."""
    sink.begin()
    if not sink.take(hit.text) or not hit.text:
        return LLMReply(text=hit.text, prompt_tokens=hit.prompt_tokens, completion_tokens=hit.completion_tokens,
                        cost_usd=hit.cost_usd)
    return hit
