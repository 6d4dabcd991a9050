"""`contractstudio lsp`: a Language Server Protocol server over stdio (pygls), a face of the editing layer.

Diagnostics are published after each change (debounced, analyzed in a worker
thread, stale results dropped); every other answer comes from
`contractstudio.editing`. Files that are not ours (no top-level `kind:` of
ours) get no diagnostics and empty answers. Hooks (`python:`) are imported only
in folders the user trusts always (contractstudio/trust.py); elsewhere TOL103 says so.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from contractstudio.lsp import convert, framing
from contractstudio.lsp.analyses import Analyses, Entry, python_file

log = logging.getLogger("contractstudio.lsp")
VERSION = "0.1.0"
TRIGGERS = [".", ":", " ", "[", "{", "-", ",", "'", '"']


class RenameRefused(JsonRpcException):
    """A rename the editing layer refused; the client shows the message."""

    CODE = -32803  # RequestFailed


_IGNORED = object()


class _Protocol(LanguageServerProtocol):
    """pygls' protocol, answering a request whose params do not parse with an error instead of silence."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as err:
            if "id" in data and "method" in data:
                self._send_response(data["id"], error=err.to_response_error())
            log.warning("ignored %s %r: its params do not match the protocol", "request" if "id" in data else "notification",
                        data.get("method"))
            return _IGNORED

    def handle_message(self, message: Any) -> None:
        if message is not _IGNORED:
            super().handle_message(message)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        # pygls files each notification's future under a made-up id and never removes it (only answered requests
        # are removed): every didOpen/didClose kept its future forever. Remove it once it is done.
        before = set(self._request_futures)
        super()._handle_notification(method_name, params)
        for key in set(self._request_futures) - before:
            self._request_futures[key].add_done_callback(functools.partial(self._forget, key))

    def _forget(self, key: Any, _done: Any) -> None:
        self._request_futures.pop(key, None)


class ContractStudioServer(LanguageServer):
    """The language server: open documents, their analyses, and the feature handlers."""

    def __init__(self, *, debounce_s: float = 0.15, dialect: str | None = None) -> None:
        super().__init__("contractstudio", VERSION, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=_Protocol)
        self.analyses: Analyses | None = None
        self.base_findings: dict[str, set[str]] = {}  # a file's URI -> the base URIs it published findings on
        self.debounce_s = debounce_s
        self.dialect = dialect

    @property
    def docs(self) -> Analyses:
        if self.analyses is None:  # made on first use: inside the event loop, after initialize
            self.analyses = Analyses(self.publish, debounce_s=self.debounce_s, dialect=self.dialect)
        return self.analyses

    def publish(self, entry: Entry) -> None:
        report = entry.report
        if report is None:
            return
        doc = self.workspace.get_text_document(entry.uri)
        by_file: dict[str, list[Any]] = {}
        for d in report.diagnostics:
            by_file.setdefault(d.file, []).append(d)
        pos = convert.Positions(doc, report.text)
        diagnostics = [convert.diagnostic(d, pos, entry.uri, entry.path) for d in by_file.pop(entry.path, [])]
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(entry.uri, diagnostics, version=entry.analyzed_version))
        # a base's findings (read along through extends:) go on the base's own URI, at the base's own positions
        published: set[str] = set()
        for file, found in by_file.items():
            uri = Path(file).resolve().as_uri()
            if uri in self.docs.entries:
                continue  # open in the editor: its own analysis speaks for it
            base = convert.Positions(doc, report.texts.get(file, ""))
            shown = [convert.diagnostic(d, base, uri, file) for d in found]
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, shown))
            published.add(uri)
        self.clear_bases(entry.uri, keep=published)

    def clear_bases(self, uri: str, keep: set[str] | frozenset[str] = frozenset()) -> None:
        """Withdraw the base findings a file published that it no longer has (all of them when it is closed)."""
        before = self.base_findings.pop(uri, set())
        for gone in before - keep:
            if gone not in self.docs.entries:
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(gone, []))
        if keep:
            self.base_findings[uri] = set(keep)

    def location(self, entry: Entry, report: Any, loc: Any) -> lsp.Location:
        """An editing Location as the client's: the file's own URI, or a base's URI with the base's own lines."""
        doc = self.workspace.get_text_document(entry.uri)
        if loc.file == entry.path:
            return lsp.Location(entry.uri, convert.Positions(doc, report.text).range(loc.span))
        return lsp.Location(Path(loc.file).resolve().as_uri(), convert.Positions(doc, report.texts.get(loc.file, "")).range(loc.span))

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve over stdio with our bounded framing (lsp/framing.py) instead of pygls' loop, which trusts the header."""
        from pygls.io_ import StdoutWriter

        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = framing.StdinPieces(stdin or sys.stdin.buffer, self.thread_pool)
        dispatch = framing.dispatcher(self.protocol, logging.getLogger("pygls.io_"), self.report_server_error)
        try:
            asyncio.run(framing.serve_frames(self._stop_event, reader, dispatch, log))
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls has logged it already (one line, see _OneLine); the client is not told, the server stays up.
        log.debug("server error: %s: %s", type(error).__name__, error)


class _Editing:
    """The editing layer, imported on first use (after `initialize` is answered; warmed up in a thread)."""

    def __getattr__(self, name: str) -> Any:
        import contractstudio.editing as module

        return getattr(module, name)


editing = _Editing()


def _warm_up() -> None:
    import contractstudio.editing
    import contractstudio.editing.cursor  # noqa: F401


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


def build(debounce_s: float = 0.15, dialect: str | None = None) -> ContractStudioServer:
    """The server with every feature registered."""
    server = ContractStudioServer(debounce_s=debounce_s, dialect=dialect)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: ContractStudioServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounce_ms"), (int, float)):
            ls.debounce_s = max(0.0, float(options["debounce_ms"]) / 1000)
            if ls.analyses is not None:
                ls.analyses.debounce_s = ls.debounce_s

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: ContractStudioServer, params: lsp.InitializedParams) -> None:
        threading.Thread(target=_warm_up, name="contractstudio-warm-up", daemon=True).start()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ContractStudioServer, params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.docs.open(item.uri, _path(item.uri), item.version, ls.workspace.get_text_document(item.uri).source)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ContractStudioServer, params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.docs.change(uri, params.text_document.version, ls.workspace.get_text_document(uri).source)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ContractStudioServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.docs.close(params.text_document.uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(params.text_document.uri, []))
        ls.clear_bases(params.text_document.uri)

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: ContractStudioServer, params: Any) -> None:
        if ls.analyses is not None:
            ls.analyses.shutdown()

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=TRIGGERS))
    def completion(ls: ContractStudioServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        entry = ls.docs.entries.get(params.text_document.uri)
        doc = ls.workspace.get_text_document(params.text_document.uri)
        if entry is None or python_file(entry.path):  # completion writes YAML: a .py file gets its findings only
            return lsp.CompletionList(False, [])
        pos = convert.Positions(doc)
        line, column = pos.to_ours(params.position)
        text = doc.source
        facts = entry.facts_at(text, line - 1)
        if facts is None:
            return lsp.CompletionList(False, [])
        items = editing.complete(facts, line, column, text)
        return lsp.CompletionList(False, [convert.completion(i, pos, (line, column)) for i in items])

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: ContractStudioServer, params: lsp.HoverParams) -> lsp.Hover | None:
        got = await ls.docs.current(params.text_document.uri, names=True)
        if got is None:
            return None
        entry, report = got
        pos = convert.Positions(ls.workspace.get_text_document(entry.uri), report.text)
        h = editing.hover(report, *pos.to_ours(params.position))
        return convert.hover(h, pos) if h is not None else None

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: ContractStudioServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
        got = await ls.docs.current(params.text_document.uri, names=True)
        if got is None:
            return []
        entry, report = got
        pos = convert.Positions(ls.workspace.get_text_document(entry.uri), report.text)
        return [ls.location(entry, report, loc) for loc in editing.definition(report, *pos.to_ours(params.position))]

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: ContractStudioServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        got = await ls.docs.current(params.text_document.uri, names=True)
        if got is None:
            return []
        entry, report = got
        pos = convert.Positions(ls.workspace.get_text_document(entry.uri), report.text)
        found = editing.references(report, *pos.to_ours(params.position), include_declaration=params.context.include_declaration)
        return [ls.location(entry, report, loc) for loc in found]

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare_rename(ls: ContractStudioServer, params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder | None:
        got = await ls.docs.current(params.text_document.uri, names=True)
        if got is None:
            return None
        entry, report = got
        pos = convert.Positions(ls.workspace.get_text_document(entry.uri), report.text)
        occ = editing.prepare_rename(report, *pos.to_ours(params.position))
        return lsp.PrepareRenamePlaceholder(pos.range(occ.span), occ.name) if occ is not None else None

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    async def rename(ls: ContractStudioServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        got = await ls.docs.current(params.text_document.uri, names=True)
        if got is None:
            return None
        entry, report = got
        pos = convert.Positions(ls.workspace.get_text_document(entry.uri), report.text)
        result = editing.rename(report, *pos.to_ours(params.position), params.new_name)
        if result.refused is not None:
            raise RenameRefused(result.refused)
        return lsp.WorkspaceEdit(changes={entry.uri: convert.edits(result.edits, pos)})

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    async def code_action(ls: ContractStudioServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        got = await ls.docs.current(params.text_document.uri)
        if got is None:
            return []
        entry, report = got
        pos = convert.Positions(ls.workspace.get_text_document(entry.uri), report.text)
        span = pos.span(params.range)
        return [convert.code_action(a, pos, entry.uri, entry.path) for a in editing.code_actions(report, span=span)]

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def symbols(ls: ContractStudioServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        got = await ls.docs.current(params.text_document.uri)
        if got is None:
            return []
        entry, report = got
        pos = convert.Positions(ls.workspace.get_text_document(entry.uri), report.text)
        return [convert.symbol(s, pos) for s in editing.document_symbols(report)]

    @server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    async def folding(ls: ContractStudioServer, params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
        got = await ls.docs.current(params.text_document.uri)
        if got is None:
            return []
        return [convert.folding(r) for r in editing.folding_ranges(got[1])]

    return server


class _OneLine(logging.Filter):
    """pygls logs a message it cannot parse with a traceback; the log gets one line that says what was wrong."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Unable to deserialize message"):
            return False  # the traceback of a request with bad params: our own warning says it in one line
        if record.exc_info and record.exc_info[1] is not None:
            err = record.exc_info[1]
            what = record.getMessage()
            if what == "Unable to handle message":
                what = "ignored a message that is not valid JSON-RPC (the server goes on)"
            record.msg = f"{what}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
            record.args = None
            record.exc_info = None
        return True


def serve(debounce_ms: float = 150, log_file: str | None = None, dialect: str | None = None) -> None:
    """Run the server on stdin/stdout until the client says exit."""
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler()
    handler.setFormatter(logging.Formatter("contractstudio lsp: %(levelname)s %(message)s"))
    handler.addFilter(_OneLine())
    for name in ("pygls", "contractstudio.lsp"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False
    build(debounce_ms / 1000, dialect).start_io()
