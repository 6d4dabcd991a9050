"""Debug mode with the LIVE model against a local OpenAI-compatible server on 127.0.0.1.

The contract's `llm.api_base` (honoured by the runtime's live model) points the debugger's
"live" choice at the test server; the debugger computes transport and remedy waits without
sleeping them, so every fault below ends within a second or two. No real key: a fake one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply
from textual.widgets import OptionList, Select

from .conftest import settle
from .test_debug import body, press_and_wait, status
from .test_graph import plain

CONTRACT = "multidoc_qa.contract.yaml"
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
KEY = "sk-test-SECRET-1234567890abcdef"


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def point_at(workspace: Path, server: OpenAIServer, extra: str = "") -> None:
    """The workspace copy's contract sends its live requests to the local server, with a short timeout."""
    path = workspace / CONTRACT
    text = path.read_text()
    text = text.replace("  # api_base: http://127.0.0.1:8000/v1   # any OpenAI-compatible server\n",
                        f"  api_base: {server.base_url}\n{extra}")
    text = text.replace("  timeout_s: 30\n", "  timeout_s: 2\n")
    assert f"api_base: {server.base_url}" in text and server.base_url.startswith("http://127.0.0.1:")
    path.write_text(text)


async def open_live(app, pilot) -> None:
    await settle(pilot)
    await pilot.press("f4")
    await settle(pilot)  # the workspace's contracts are analyzed in a worker
    app.screen.query_one("#model-select", Select).value = "live"
    await pilot.pause()
    await app.workers.wait_for_complete()  # choosing the live model loads its client in the background
    app.screen.query_one("#timeline").focus()


async def show(app, pilot, event) -> str:
    """Highlight one event in the timeline; the text of the event view a user reads."""
    app.screen.query_one("#timeline", OptionList).highlighted = app.screen.events.index(event)
    await pilot.pause()
    return body(app)


def timeline_text(app) -> str:
    timeline = app.screen.query_one("#timeline", OptionList)
    return "\n".join(plain(timeline.get_option_at_index(i).prompt) for i in range(timeline.option_count))


def no_error_modal(app) -> None:
    assert app.screen.id == "debug-screen", type(app.screen).__name__


@pytest.mark.timeout(60)
async def test_a_500_then_a_valid_reply_completes_and_the_transport_error_is_shown(make_app, workspace, server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    point_at(workspace, server)
    server.script(Reply(status=500, content="upstream exploded"), GOOD)
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_live(app, pilot)
        await press_and_wait(pilot, "g")
        no_error_modal(app)
        assert "success" in status(app) and "1 LLM call(s), 0 remedy attempt(s)" in status(app)
        assert len(server.requests) == 2
        [error] = [e for e in app.screen.events if e.type == "transport_error"]
        assert error["status"] == 500 and error["retryable"] and not error["gave_up"]
        assert "500" in timeline_text(app)  # the timeline row: ⚡ <exception> 500
        shown = await show(app, pilot, error)
        assert "transport_error" in shown and "500" in shown
        assert "upstream exploded" in shown  # the server's own words reach the user
        assert "transport retries 1" in plain(app.screen.query_one("#perf").content)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("reply", [Reply(status=429, content="slow down"), Reply(body=b"<html>not json</html>")],
                         ids=["always-429", "non-json-200"])
async def test_a_server_that_never_answers_well_ends_the_call_and_the_app_stays_usable(make_app, workspace, server, monkeypatch,
                                                                                      reply) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    point_at(workspace, server)
    server.script(reply)
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_live(app, pilot)
        await press_and_wait(pilot, "g")
        no_error_modal(app)
        assert app.screen.session.done
        assert "failed" in status(app)
        result = next(e for e in app.screen.events if e.type == "result")
        assert not result["successful"]
        shown = await show(app, pilot, result)
        assert "I am not confident enough" in shown  # the fallback output is what the call returned
        errors = [e for e in app.screen.events if e.type == "transport_error"]
        assert errors and errors[-1]["gave_up"]
        last = await show(app, pilot, errors[-1])
        assert "gave_up" in last and ("429" in last if reply.status == 429 else "200" in last)
        # the app stays usable: restart, then a good reply succeeds
        server.script(GOOD)
        await press_and_wait(pilot, "R")
        assert app.screen.session is not None and not app.screen.events and "ready" in status(app)
        await press_and_wait(pilot, "g")
        no_error_modal(app)
        assert "success" in status(app)


@pytest.mark.timeout(60)
async def test_a_json_array_reply_shows_the_validation_error_and_the_remedy(make_app, workspace, server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    point_at(workspace, server)
    server.script('[{"answer": "x"}]', GOOD)
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_live(app, pilot)
        await press_and_wait(pilot, "g")
        no_error_modal(app)
        assert "success" in status(app) and "2 LLM call(s), 1 remedy attempt(s)" in status(app)
        events = app.screen.events
        [rejected] = [e for e in events if e.type == "validation_error"]
        expected = 'output = [{"answer": "x"}]: expected a JSON object (AnswerWithEvidence), got a JSON array'
        assert rejected["errors"] == [expected]
        assert "type errors: 1" in timeline_text(app)
        assert expected in await show(app, pilot, rejected)
        remedy = next(e for e in events if e.type == "llm_request" and e["purpose"] == "remedy_post")
        shown = await show(app, pilot, remedy)
        assert "remedy_post" in shown and expected in shown
        assert expected in server.requests[1].body["messages"][-1]["content"]


async def assert_nothing_shows(app, pilot) -> None:
    """Every event view, the timeline, perf, status and toasts: no trace of the key."""
    for event in app.screen.events:
        text = await show(app, pilot, event)
        assert KEY not in text and "1234567890abcdef" not in text, text
    for text in (timeline_text(app), plain(app.screen.query_one("#perf").content), status(app),
                 *(str(n.message) for n in app._notifications)):
        assert KEY not in text and "1234567890abcdef" not in text, text


async def assert_svg_is_clean(app, pilot, event, marker: str) -> None:
    await show(app, pilot, event)
    svg = app.export_screenshot()
    assert marker in svg  # the event view really is in the export
    assert KEY not in svg and "1234567890abcdef" not in svg


@pytest.mark.timeout(60)
@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "CS_TEST_LLM_KEY"])
async def test_the_api_key_sent_to_the_server_is_never_rendered_saved_or_exported(make_app, workspace, server, monkeypatch,
                                                                                 variable) -> None:
    monkeypatch.setenv(variable, KEY)
    point_at(workspace, server, extra=f"  api_key_env: {variable}\n" if variable != "OPENAI_API_KEY" else "")
    # a 5xx whose message quotes the key (retried), a wrong shape (a remedy), then a good reply
    server.script(Reply(status=500, content=f"upstream rejected key {KEY}"), "[1]", GOOD)
    app = make_app(CONTRACT, trusted=variable != "OPENAI_API_KEY")  # an unusual variable: only a trusted folder reads it
    target = workspace / "live.trace.jsonl"
    async with app.run_test(size=(120, 40)) as pilot:
        await open_live(app, pilot)
        await press_and_wait(pilot, "g")
        no_error_modal(app)
        assert "success" in status(app) and len(server.requests) == 3
        assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)  # the key really was sent
        events = app.screen.events
        assert {"llm_request", "transport_error", "validation_error"} <= {e.type for e in events}
        await assert_nothing_shows(app, pilot)
        quoted = await show(app, pilot, next(e for e in events if e.type == "transport_error"))
        assert "upstream rejected key" in quoted  # the server's message is shown, with the key masked
        # the save-trace action, through its path prompt
        await pilot.press("w")
        await pilot.pause()
        app.screen.query_one("Input").value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        no_error_modal(app)
        saved = target.read_text()
        assert '"llm_request"' in saved and '"transport_error"' in saved
        assert KEY not in saved and "1234567890abcdef" not in saved
        request = next(e for e in events if e.type == "llm_request")
        await assert_svg_is_clean(app, pilot, request, "llm_request")
        # a refused key whose error message quotes it: not retried, the call fails, still nothing shows
        server.script(Reply(status=401, content=f"Incorrect API key provided: {KEY}"))
        await press_and_wait(pilot, "R")
        await press_and_wait(pilot, "g")
        no_error_modal(app)
        assert "failed" in status(app) and len(server.requests) == 1
        [refused] = [e for e in app.screen.events if e.type == "transport_error"]
        assert refused["kind"] == "authentication" and not refused["retryable"]
        await assert_nothing_shows(app, pilot)
        await assert_svg_is_clean(app, pilot, refused, "authentication")
