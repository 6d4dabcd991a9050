"""`contractstudio lsp` end to end over stdio: a real client process (pytest-lsp) talking JSON-RPC to the server."""

from __future__ import annotations

import sys

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from contractstudio.editing.text import apply_edits
from contractstudio.findings.diagnostics import Span

PIPELINE = """\
kind: pipeline
name: rag
entry_step_id: route
routers:
  router_v1:
    prefixes: ["[BM25:]", "[DIRECT:]"]
steps:
  - id: route
    action: call_model
    prompt: router_v1  # the router prompt
    next: dispatch
  - id: dispatch
    action: prefix_router
    bm25_prefix: "[BM25:]"
    on_bm25: answer
    direct_prefix: "[DIRECT:]"
    on_direct: answer
    on_other: answer
  - id: answer
    action: call_model
    prompt: answer_v1
    end: true
"""
URI = "file:///work/rag.pipeline.yaml"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "contractstudio", "lsp", "--debounce-ms", "50"]))
async def client(lsp_client: LanguageClient):
    result = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri="file:///work"))
    lsp_client.initialize_result = result  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def open_doc(client: LanguageClient, text: str, uri: str = URI) -> list[lsp.Diagnostic]:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, text)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


async def change(client: LanguageClient, text: str, version: int, uri: str = URI) -> list[lsp.Diagnostic]:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version, uri), [lsp.TextDocumentContentChangeWholeDocument(text)]))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def at(text: str, needle: str, offset: int = 0) -> lsp.Position:
    i = text.index(needle) + offset
    return lsp.Position(text.count("\n", 0, i), i - (text.rfind("\n", 0, i) + 1))


def doc(uri: str = URI) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri)


def applied(text: str, edits: list[lsp.TextEdit]) -> str:
    """The text after LSP text edits (ASCII texts: UTF-16 units are characters)."""
    from contractstudio.editing.items import TextEdit

    ours = [TextEdit(Span(e.range.start.line + 1, e.range.start.character + 1, e.range.end.line + 1, e.range.end.character + 1),
                     e.new_text) for e in edits]
    return apply_edits(text, ours)


@pytest.mark.asyncio
async def test_initialize_announces_every_capability(client: LanguageClient) -> None:
    caps = client.initialize_result.capabilities  # type: ignore[attr-defined]
    assert client.initialize_result.server_info.name == "contractstudio"  # type: ignore[attr-defined]
    assert caps.completion_provider is not None and "." in (caps.completion_provider.trigger_characters or [])
    assert caps.hover_provider and caps.definition_provider and caps.references_provider
    assert caps.rename_provider and caps.code_action_provider and caps.document_symbol_provider and caps.folding_range_provider


@pytest.mark.asyncio
async def test_diagnostics_on_open_and_after_a_change_with_code_link_and_related(client: LanguageClient) -> None:
    assert await open_doc(client, PIPELINE) == []
    broken = PIPELINE.replace("next: dispatch", "next: dispach").replace("    on_other: answer\n", "")
    diags = await change(client, broken, 2)
    codes = sorted(d.code for d in diags)
    assert codes == ["PIP102", "PIP104", "PIP104", "RTE305"]  # dispatch and answer are unreachable now
    pip102 = next(d for d in diags if d.code == "PIP102")
    assert pip102.severity == lsp.DiagnosticSeverity.Error
    assert pip102.range == lsp.Range(at(broken, "dispach"), at(broken, "dispach", 7))
    assert pip102.message == "step 'route': next names 'dispach', which is not a step\nhint: did you mean 'dispatch'?"
    assert pip102.code_description is not None and pip102.code_description.href.endswith("rules.md#pip102")
    # related information: a path on which a state field is never set
    unset = PIPELINE.replace("    action: call_model\n    prompt: router_v1", "    action: search_nodes", 1)
    diags = await change(client, unset, 3)
    pip201 = next(d for d in diags if d.code == "PIP201")
    assert pip201.related_information and pip201.related_information[0].location.uri == URI


@pytest.mark.asyncio
async def test_completion_hover_definition_references(client: LanguageClient) -> None:
    await open_doc(client, PIPELINE)
    items = await client.text_document_completion_async(lsp.CompletionParams(doc(), at(PIPELINE, "next: dispatch", 6)))
    assert items is not None
    labels = [i.label for i in (items.items if isinstance(items, lsp.CompletionList) else items)]
    assert labels == ["route", "dispatch", "answer"]
    hover = await client.text_document_hover_async(lsp.HoverParams(doc(), at(PIPELINE, "next: dispatch", 8)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert hover.contents.value.startswith("**step dispatch**: action `prefix_router`")
    found = await client.text_document_definition_async(lsp.DefinitionParams(doc(), at(PIPELINE, "on_bm25: answer", 10)))
    assert isinstance(found, list) and [loc.range.start for loc in found] == [at(PIPELINE, "id: answer", 4)]
    refs = await client.text_document_references_async(lsp.ReferenceParams(
        context=lsp.ReferenceContext(include_declaration=True), text_document=doc(), position=at(PIPELINE, "id: answer", 5)))
    assert refs is not None and len(refs) == 4


@pytest.mark.asyncio
async def test_completion_while_the_buffer_does_not_parse(client: LanguageClient) -> None:
    await open_doc(client, PIPELINE)
    typing = PIPELINE.replace("    end: true\n", "    en\n")  # a key without its colon: YAML syntax error
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(2, URI), [lsp.TextDocumentContentChangeWholeDocument(typing)]))
    items = await client.text_document_completion_async(lsp.CompletionParams(doc(), at(typing, "    en\n", 6)))
    assert items is not None
    got = items.items if isinstance(items, lsp.CompletionList) else items
    assert [i.label for i in got] == ["end"]
    assert got[0].text_edit is not None and got[0].text_edit.new_text == "end: "


@pytest.mark.asyncio
async def test_rename_and_a_refused_rename(client: LanguageClient) -> None:
    await open_doc(client, PIPELINE)
    edit = await client.text_document_rename_async(lsp.RenameParams(doc(), at(PIPELINE, "id: dispatch", 5), "route_reply"))
    assert edit is not None and edit.changes is not None
    renamed = applied(PIPELINE, edit.changes[URI])
    assert "next: route_reply" in renamed and "id: route_reply" in renamed and "dispatch" not in renamed
    assert "# the router prompt" in renamed
    with pytest.raises(Exception, match="step id 'answer' already exists"):
        await client.text_document_rename_async(lsp.RenameParams(doc(), at(PIPELINE, "id: dispatch", 5), "answer"))


@pytest.mark.asyncio
async def test_a_code_action_applied_leaves_the_file_clean(client: LanguageClient) -> None:
    broken = PIPELINE.replace("    on_other: answer\n", "")
    diags = await open_doc(client, broken)
    [rte305] = [d for d in diags if d.code == "RTE305"]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc(), range=rte305.range, context=lsp.CodeActionContext(diagnostics=[rte305])))
    assert actions is not None
    titles = [a.title for a in actions if isinstance(a, lsp.CodeAction)]
    assert titles == ["Add 'on_other: answer'", "Suppress RTE305 here"]
    fix = next(a for a in actions if isinstance(a, lsp.CodeAction) and a.title == "Add 'on_other: answer'")
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.edit is not None and fix.edit.changes is not None
    fixed = applied(broken, fix.edit.changes[URI])
    assert fixed == broken.replace('    on_direct: answer\n', '    on_direct: answer\n    on_other: answer\n')
    assert await change(client, fixed, 2) == []


@pytest.mark.asyncio
async def test_outline_and_folding(client: LanguageClient) -> None:
    await open_doc(client, PIPELINE)
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc()))
    assert symbols is not None
    [root] = symbols
    assert isinstance(root, lsp.DocumentSymbol) and root.name == "pipeline rag"
    steps = next(s for s in root.children or [] if s.name == "steps")
    assert [s.name for s in steps.children or []] == ["route", "dispatch", "answer"]
    ranges = await client.text_document_folding_range_async(lsp.FoldingRangeParams(doc()))
    assert ranges is not None and any(r.start_line == 6 and r.end_line == 21 for r in ranges)


@pytest.mark.asyncio
async def test_files_that_are_not_ours_and_multi_document_files(client: LanguageClient) -> None:
    k8s = "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n"
    assert await open_doc(client, k8s, "file:///work/service.yaml") == []
    items = await client.text_document_completion_async(lsp.CompletionParams(doc("file:///work/service.yaml"), lsp.Position(3, 0)))
    assert items is None or list(items.items if isinstance(items, lsp.CompletionList) else items) == []
    two = PIPELINE + "---\n" + PIPELINE.replace("next: dispatch", "next: dispach")
    diags = await open_doc(client, two, "file:///work/two.yaml")
    # only the second document has findings, at its own lines
    assert [d.code for d in diags] == ["PIP102", "PIP104", "PIP104"]
    assert diags[0].range.start.line == PIPELINE.count("\n") + 1 + 10


@pytest.mark.asyncio
async def test_an_unsaved_buffer_is_analyzed(client: LanguageClient) -> None:
    diags = await open_doc(client, PIPELINE.replace("next: dispatch", "next: nowhere"), "untitled:Untitled-1")
    assert [d.code for d in diags] == ["PIP102", "PIP104", "PIP104"]


def test_the_rule_link_is_the_checkout_docs_or_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a checkout a finding links to its heading in docs/rules.md; installed, where no docs are on disk, it links
    nowhere rather than to an address that does not resolve."""
    import re
    from pathlib import Path

    import contractstudio.reading.source  # noqa: F401 - declares the YML codes
    from contractstudio.findings.diagnostics import make
    from contractstudio.lsp import convert

    finding = make("YML001", "the text is not valid YAML", "p.yaml", Span(1, 1, 1, 2))
    from pygls.workspace import TextDocument

    pos = convert.Positions(TextDocument("file:///p.yaml", "x: 1\n"))
    linked = convert.diagnostic(finding, pos, "file:///p.yaml", "p.yaml")
    assert linked.code_description is not None
    target, anchor = linked.code_description.href.split("#")
    docs = Path(target.removeprefix("file://")).read_text()
    assert anchor == "yml001" and re.search(r"^## YML001$", docs, re.M)
    monkeypatch.setattr(convert, "RULE_DOCS", None)  # an installed wheel: no docs/rules.md beside the package
    assert convert.diagnostic(finding, pos, "file:///p.yaml", "p.yaml").code_description is None


def test_a_finding_sends_its_fix_payload_as_lsp_data() -> None:
    """Issue 23.1: what a fix needs of a finding (here the suggested name) reaches the client as `Diagnostic.data`."""
    from pygls.workspace import TextDocument

    from contractstudio.analysis.check import check_text
    from contractstudio.lsp import convert

    text = "kind: contract\nname: c\ndescripton: x\n"
    [finding] = [d for d in check_text(text, "p.yaml").diagnostics if d.code == "SCH102"]
    sent = convert.diagnostic(finding, convert.Positions(TextDocument("file:///p.yaml", text)), "file:///p.yaml", "p.yaml")
    assert sent.data["payload"] == {"suggestion": "description"}


@pytest.mark.asyncio
async def test_hover_on_an_output_field_says_who_enforces_its_clauses(client: LanguageClient) -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "samples" / "review_extraction.contract.yaml").read_text(encoding="utf-8")
    uri = "file:///work/review_extraction.contract.yaml"
    diags = await open_doc(client, text, uri)
    assert [d.code for d in diags] == ["CON132"]
    hover = await client.text_document_hover_async(lsp.HoverParams(doc(uri), at(text, "      rating:", 8)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "**structured output** with `openai/gpt-4o-mini` (json_object)" in hover.contents.value
    assert "- checked after the reply: type integer, le 5, ge 1, required" in hover.contents.value
