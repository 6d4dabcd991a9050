"""The server process itself: it survives a client that sends garbage, and never imports textual or litellm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def responses(out: bytes) -> list[dict[str, Any]]:
    found = []
    while out:
        head, _, rest = out.partition(b"\r\n\r\n")
        headers = dict(line.split(b":", 1) for line in head.split(b"\r\n"))
        length = int(headers[b"Content-Length"])
        found.append(json.loads(rest[:length]))
        out = rest[length:]
    return found


def run_server(messages: list[bytes], *flags: str, answers: int = 0, env: dict[str, str] | None = None,
               ) -> tuple[list[dict[str, Any]], str, int]:
    """Send the messages, wait for `answers` responses (a client waits before it shuts down), then shutdown and exit."""
    proc = subprocess.Popen([sys.executable, *flags, "-m", "contractstudio", "lsp", "--debounce-ms", "0"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(messages))
    proc.stdin.flush()
    got: list[dict[str, Any]] = []
    while sum(1 for a in got if "id" in a) < answers:
        got.append(_read(proc.stdout))
    out, err = proc.communicate(b"".join(END), timeout=60)
    return got + responses(out), err.decode(errors="replace"), proc.returncode


def _read(stream: Any) -> dict[str, Any]:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": None, "rootUri": None}}
END = [frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}), frame({"jsonrpc": "2.0", "method": "exit"})]


def test_garbage_gets_one_clear_log_line_and_the_server_stays_up() -> None:
    messages = [
        b"Content-Length: 9\r\n\r\n{not json",
        frame({"jsonrpc": "2.0", "id": 7, "method": "no/suchMethod", "params": {}}),
        frame(INIT),
        frame({"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover", "params": {"textDocument": {"uri": 3}}}),
        frame({"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover",
               "params": {"textDocument": {"uri": "file:///never/opened.yaml"}, "position": {"line": 0, "character": 0}}}),
    ]
    answers, log, code = run_server(messages, answers=4)
    by_id = {a.get("id"): a for a in answers if "id" in a}
    assert by_id[7]["error"]["code"] == -32601  # method not found
    assert "capabilities" in by_id[1]["result"]
    assert "error" in by_id[8]  # invalid params: an error answer, not a crash
    assert by_id[9]["result"] is None
    assert by_id[99]["result"] is None and code == 0
    lines = [ln for ln in log.splitlines() if "not valid JSON-RPC" in ln]
    assert lines == ["contractstudio lsp: ERROR ignored a message that is not valid JSON-RPC (the server goes on): JSONDecodeError: "
                     "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"]
    assert "Traceback" not in log


def test_a_hostile_frame_is_one_log_line_and_the_server_still_answers() -> None:
    messages = [
        b"Content-Length: 1000000000000\r\n\r\n{}",  # MemoryError killed the server
        b"Content-Length: 1" + b"0" * 30 + b"\r\n\r\n{}",  # OverflowError
        b'Content-Length: abc\r\n\r\n{"jsonrpc": "2.0"}',  # left it deaf, without a word
        frame(INIT),
    ]
    answers, log, code = run_server(messages, answers=1)
    assert "capabilities" in {a.get("id"): a for a in answers}[1]["result"] and code == 0
    warnings = [ln for ln in log.splitlines() if ln.startswith("contractstudio lsp: WARNING")]
    assert len(warnings) == 3 and "1,000,000,000,000 bytes, over the 67,108,864-byte limit" in warnings[0]
    assert "Traceback" not in log


def test_the_server_never_imports_textual_or_litellm() -> None:
    messages = [frame(INIT), frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})]
    for i, path in enumerate(sorted(SAMPLES.glob("*.yaml"))):
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8")
        messages.append(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                               "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}))
        where = {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 4}}
        for n, method in enumerate(("textDocument/hover", "textDocument/completion", "textDocument/definition")):
            messages.append(frame({"jsonrpc": "2.0", "id": 100 + 10 * i + n, "method": method, "params": where}))
        messages.append(frame({"jsonrpc": "2.0", "id": 500 + i, "method": "textDocument/codeAction", "params": {
            "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 200, "character": 0}},
            "context": {"diagnostics": []}}}))
    expected = 1 + 4 * len(list(SAMPLES.glob("*.yaml")))
    answers, log, code = run_server(messages, "-X", "importtime", answers=expected)
    assert code == 0
    assert len([a for a in answers if "id" in a and "result" in a]) == expected + 1  # and shutdown
    imported = {ln.split("|")[-1].strip() for ln in log.splitlines() if ln.startswith("import time:")}
    assert "contractstudio.editing.completion" in imported and "pygls.lsp.server" in imported
    assert not {m for m in imported if m.split(".")[0] in ("textual", "litellm")}


def test_the_server_asks_the_analyzers_question_is_this_file_ours() -> None:
    from contractstudio.lsp.analyses import ours
    from contractstudio.reading.files import ownership

    for text in ("kind: contract\nname: a\n", "apiVersion: v1\nkind: Service\n", "kind: contrct\n", "title: x\n", ""):
        assert ours(text) == ownership(text).ours


HOOKED = """\
kind: tools
name: notes
tools:
  - name: create_note
    params:
      title: {type: str, description: Title.}
    handler: "notes_hooks_lsp:create_note"
"""
HOOK_MODULE = """\
from pathlib import Path
Path(__file__).with_name("imported.marker").write_text("imported")
def create_note(title):
    return title
"""


def _diagnostics_of(folder: Path, env: dict[str, str]) -> tuple[list[str], bool]:
    (folder / "notes.tools.yaml").write_text(HOOKED, encoding="utf-8")
    (folder / "notes_hooks_lsp.py").write_text(HOOK_MODULE, encoding="utf-8")
    uri = (folder / "notes.tools.yaml").as_uri()
    messages = [frame(INIT), frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                                    "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": HOOKED}}}),
                frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
                       "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}})]
    answers, _, code = run_server(messages, answers=2, env=env)
    assert code == 0
    published = [a["params"] for a in answers if a.get("method") == "textDocument/publishDiagnostics"]
    return [d["code"] for d in published[-1]["diagnostics"]], (folder / "imported.marker").exists()


def test_hooks_are_imported_only_in_a_folder_the_user_trusts(tmp_path: Path) -> None:
    config = tmp_path / "config"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    untrusted, trusted = tmp_path / "untrusted", tmp_path / "trusted"
    untrusted.mkdir()
    trusted.mkdir()
    (config / "contractstudio").mkdir(parents=True)
    (config / "contractstudio" / "trusted-folders.txt").write_text(f"{trusted.resolve()}\n", encoding="utf-8")

    codes, imported = _diagnostics_of(untrusted, env)
    assert codes == ["TOL103"] and not imported
    codes, imported = _diagnostics_of(trusted, env)
    assert codes == [] and imported
