"""No fragment of a key in use leaves the process: not its random part without the `sk-proj-` prefix, not the key
split over two lines, with a zero-width character inside, spaced out, JSON-escaped or base64-encoded, not the
tail a message template cut from it. Any 8 characters of a key in use in a row are masked, after rendering,
in `run`'s text and `--json`, the trace, eval's results file and summary.

The key is a realistic OpenAI project key set in the environment; it reaches a real server on 127.0.0.1 (so
it is really in use) which echoes every variant back the way a misbehaving proxy or a coaxed model would.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

from contractstudio.cli import main
from contractstudio.safe_text import redact, redact_text, register_secret

QA = Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml"
RANDOM = "Q7vX2mN9pL4kR8tW1zY6bH3cJ5dF0g"  # the 30 random characters of the key
KEY = "sk-proj-" + RANDOM
ALSO = "ck-other-8Hj3Kl5Zx7Cv9Bn2Mq4Wr6"  # a second key in use, of no known shape


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def variants(key: str) -> dict[str, str]:
    """The ways a reply can carry a key past a matcher that knows only its whole shape."""
    return {
        "without its prefix": key[8:],
        "its tail": key[3:],
        "a middle piece": key[9:19],
        "split over two lines": key[:17] + "\n" + key[17:],
        "split and indented": key[:12] + "\r\n        " + key[12:],
        "with a zero-width space": key[:10] + "\u200b" + key[10:],
        "with a word joiner and a soft hyphen": key[:6] + "\u2060" + key[6:20] + "\u00ad" + key[20:],
        "spaced out": " ".join(key),
        "base64": _b64(key.encode()),
        "base64 after one byte": _b64(b"x" + key.encode()),
        "base64 after two bytes": _b64(b"xy" + key.encode()),
        "base64 of its random part": _b64(b"Bearer:" + key[8:].encode()),
        "url-safe base64 after one byte": base64.urlsafe_b64encode(b"?" + key.encode()).decode(),
        "base64 wrapped at 16 columns": "\n".join(re.findall(".{1,16}", _b64(b"k=" + key.encode()))),
    }


_INVISIBLE = re.compile(r"\s|[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]|\\(?:[nrt]|u[0-9a-fA-F]{4})")


def pieces_shown(text: str, key: str = KEY, size: int = 8) -> list[str]:
    """The runs of `size` characters of the key, or of its base64 at any of the three byte offsets, that a reader
    can find in the text once line breaks, spaces, invisible characters and JSON escapes are taken out."""
    flat = _INVISIBLE.sub("", text).replace("-", "+").replace("_", "/")
    flat_key = key.replace("-", "+").replace("_", "/")
    forms = [flat_key] + [_b64(b"\0" * pad + key.encode())[(4 if pad else 0):-4] for pad in range(3)]
    return [form[i:i + size] for form in forms for i in range(len(form) - size + 1) if form[i:i + size] in flat]


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def test_every_variant_of_a_key_in_use_is_masked_and_the_text_around_it_kept() -> None:
    register_secret(KEY)
    register_secret(ALSO)
    for key in (KEY, ALSO):
        for how, variant in variants(key).items():
            text = f"before {variant} after"
            shown = redact_text(text)
            assert not pieces_shown(shown, key), f"{how}: {shown!r}"
            assert shown.startswith("before ") and shown.endswith(" after") and "***" in shown, f"{how}: {shown!r}"
    # in a value, a key and a JSON text made of them
    value = {"answer": list(variants(KEY).values()), "note": "nothing secret here"}
    assert not pieces_shown(json.dumps(redact(value)))
    assert not pieces_shown(redact_text(json.dumps(value)))  # \n and \u200b written as JSON escapes
    assert not pieces_shown(redact_text(json.dumps(value, ensure_ascii=False, indent=2)))
    assert redact(value)["note"] == "nothing secret here"


def test_seven_characters_of_a_key_are_left_and_eight_are_masked() -> None:
    register_secret(KEY)
    assert redact_text(f"a {RANDOM[3:10]} b") == f"a {RANDOM[3:10]} b"  # 7: any text may hold that by chance
    assert redact_text(f"a {RANDOM[3:11]} b") == "a *** b"


def _reply_with_variants() -> str:
    """A valid answer whose text holds every variant of the key (a model coaxed into repeating it)."""
    answer = " | ".join(f"{how}: {v}" for how, v in variants(KEY).items())
    return json.dumps({"answer": answer, "evidence": [{"doc_id": "A1", "snippet": KEY[8:]}], "coverage_score": 0.9})


@pytest.mark.parametrize("as_json", [False, True])
def test_run_shows_and_traces_no_fragment_of_the_environment_key(server: OpenAIServer, tmp_path: Path, as_json: bool,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    errors = " ".join(variants(KEY).values())
    server.script(Reply(f"Incorrect API key provided: {errors}", status=500), _reply_with_variants())
    inp = tmp_path / "in.yaml"
    inp.write_text("query: Why vectors?\ndocuments:\n  - {id: A1, content: Vector databases store embeddings.}\n")
    trace = tmp_path / "t.jsonl"
    code = main(["run", str(QA), "--input", str(inp), "--model", "openai/test-model", "--api-base", server.base_url,
                 "--no-wait", "--trace", str(trace)] + (["--json"] if as_json else []))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key was really used
    assert "without its prefix: ***" in (json.loads(out)["output"]["answer"] if as_json else out)
    assert not pieces_shown(out + err)
    assert not pieces_shown(trace.read_text())


def test_eval_results_and_summary_hold_no_fragment_a_message_template_cuts_from_the_key(
        server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    contract = tmp_path / "tail.contract.yaml"
    contract.write_text(QA.read_text().replace('"Coverage score {output.coverage_score:.2f} is below the minimum 0.55."',
                                               '"low coverage for {output.answer[3:]}"'))
    low = json.dumps({"answer": KEY, "evidence": [], "coverage_score": 0.1})
    server.script(low, _reply_with_variants(), low)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "r1", "input": {"query": "q", "documents": [{"id": "A1", "content": "t"}]}}) + "\n")
    out_file, traces = tmp_path / "r.jsonl", tmp_path / "traces"
    for as_json in ([], ["--json"]):
        code = main(["eval", str(contract), "--data", str(rows), "--model", "openai/test-model", "--api-base", server.base_url,
                     "--no-wait", "--no-cache", "--out", str(out_file), "--traces", str(traces), "--overwrite", *as_json])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert server.requests[-1].headers["authorization"] == f"Bearer {KEY}"
        assert "low coverage for ***" in out
        assert not pieces_shown(out + err)
        assert not pieces_shown(out_file.read_text())
        assert not pieces_shown("".join(p.read_text() for p in traces.iterdir()))
        server.script(low, _reply_with_variants(), low)


def test_the_password_of_a_url_is_masked_and_the_rest_of_the_url_kept() -> None:
    assert redact_text("DATABASE_URL=postgres://app:hunter2-Zq9@db.internal:5432/prod") == \
        "DATABASE_URL=postgres://app:***@db.internal:5432/prod"
    assert redact_text("redis://:s3cr3t-pass@cache:6379/0 and amqp://guest:guest@mq/") == \
        "redis://:***@cache:6379/0 and amqp://guest:***@mq/"
    assert redact_text("mysql://root:p@ss:w0rd@localhost/db") == "mysql://root:***@localhost/db"
    assert redact_text("see https://example.com/a:b@c and git@github.com:x/y") == "see https://example.com/a:b@c and git@github.com:x/y"
    assert redact_text("https://user@example.com/") == "https://user@example.com/"


def test_check_quotes_no_password_of_a_database_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a line `check` quotes in an excerpt (an unknown key) holding a database URL, as /proc/self/environ would
    path = tmp_path / "db.contract.yaml"
    path.write_text(QA.read_text().replace("llm:\n", "databse_url: postgresql://app:Hunter2-Very-Secret@db:5432/prod\nllm:\n"))
    assert main(["check", str(path)]) == 0  # a warning, SCH102, with the line quoted
    out, err = capsys.readouterr()
    assert "SCH102" in out and "databse_url: postgresql://app:***@db:5432/prod" in out
    assert "Hunter2" not in out + err and "Very-Secret" not in out + err


# Characters a terminal shows as nothing: every control character (Cc: NUL, ESC, DEL, C1) and format character (Cf:
# bidi marks, Unicode tags, the interlinear annotation marks...), and the variation selectors. A key interleaved with
# any of them was left whole (adversarial pass over issue 32.3: only a listed few zero-width characters were known).
UNSEEN = ["\x00", "\x07", "\x1b", "\x7f", "\x9b", "\u0605", "\u2066", "\u206f", "\ufe0f", "\ufff9", "\U0001d173",
          "\U000e0020", "\U000e0101"]


@pytest.mark.parametrize("unseen", UNSEEN, ids=[f"U+{ord(c):04X}" for c in UNSEEN])
def test_a_key_interleaved_with_characters_a_terminal_shows_as_nothing_is_masked(unseen: str) -> None:
    register_secret(KEY)
    text = f"before {unseen.join(RANDOM)} after"
    assert redact_text(text) == "before *** after"
    escaped = redact_text(json.dumps(text))  # a results file or --json: the character written as an escape
    assert "***" in escaped
    assert not pieces_shown(re.sub(r"\\u[0-9a-f]{4}", "", escaped))
    assert escaped.startswith('"before ') and escaped.endswith(' after"')


def test_every_control_and_format_character_is_one_the_key_matcher_reads_through() -> None:
    import unicodedata

    from contractstudio.key_pieces import _BLANK_RE

    unseen = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in ("Cc", "Cf")
              or 0xFE00 <= c <= 0xFE0F or 0xE0100 <= c <= 0xE01EF]
    assert [f"U+{ord(c):04X}" for c in unseen if not _BLANK_RE.fullmatch(c)] == []
