"""A LocalAI-RAG pipeline that `extends:` a base, in the language server (issue 18 point 12): findings of the base and
definitions of inherited steps are on the base's URI at the base's positions, and renaming an inherited step is
refused with a message (it answered -32603 with a traceback)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

BASE = Path(__file__).resolve().parents[1] / "fixtures" / "dialects" / "localai-rag" / "pipelines" / "base" / "code_help_base.yaml"
CHILD = """\
YAMLpipeline:
  name: child
  extends: base/code_help_base.yaml
  steps:
    - {id: fit, action: manage_context_budget, on_ok: judge, on_over: shrink}
"""


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "contractstudio", "lsp", "--debounce-ms", "0"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def child(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the project: the base is inside it
    (tmp_path / "base").mkdir()
    shutil.copy(BASE, tmp_path / "base" / BASE.name)
    path = tmp_path / "child.yaml"
    path.write_text(CHILD)
    return path


@pytest.mark.asyncio
async def test_findings_and_definitions_in_the_base_are_on_the_bases_uri(client: LanguageClient, child: Path) -> None:
    uri, base_uri = child.as_uri(), (child.parent / "base" / BASE.name).as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, CHILD)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    child_lines = len(CHILD.splitlines())
    assert all(d.range.start.line < child_lines for d in client.diagnostics.get(uri, []))  # none past the child's end
    on_shrink = lsp.Position(4, CHILD.splitlines()[4].index("shrink") + 1)
    found = await client.text_document_definition_async(lsp.DefinitionParams(lsp.TextDocumentIdentifier(uri), on_shrink))
    assert isinstance(found, list) and [loc.uri for loc in found] == [base_uri]
    base_line = BASE.read_text().splitlines()[found[0].range.start.line]
    assert "id: shrink" in base_line
    base_lines = BASE.read_text().splitlines()
    unreachable = [d for d in client.diagnostics.get(base_uri, []) if d.code == "PIP104"]
    assert unreachable and all("id: retry_guard" in base_lines[d.range.start.line] for d in unreachable)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), on_shrink))  # a round trip
    assert base_uri in client.diagnostics and not client.diagnostics[base_uri]  # withdrawn with the file that brought them


@pytest.mark.asyncio
async def test_renaming_an_inherited_step_is_refused_with_a_message(client: LanguageClient, child: Path) -> None:
    uri = child.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, CHILD)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    on_shrink = lsp.Position(4, CHILD.splitlines()[4].index("shrink") + 1)
    # before: -32603 'IndexError: list index out of range' (the edit looked for the base's line in the child)
    with pytest.raises(Exception, match=r"'shrink' is declared in base/code_help_base.yaml \(line 39\), which this file extends: "
                                        r"rename it there"):
        await client.text_document_rename_async(lsp.RenameParams(lsp.TextDocumentIdentifier(uri), on_shrink, "squeeze"))
