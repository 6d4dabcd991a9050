"""YML007 finds credentials by name and by shape anywhere in a document; redaction masks the same
things in every trace field, in keys as well as values. One table (contractstudio.safe_text) serves both."""

from __future__ import annotations

from pathlib import Path

import pytest

from contractstudio.analysis.check import check_text
from contractstudio.cli import main
from contractstudio.runtime.trace import Trace

QA = Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml"

# Fake tokens of well-known shapes, built at run time so that this file holds none literally.
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
XOX = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
AKIA = "AKIA" + "IOSFODNN7EXAMPLE"
SK = "sk-" + "proj-Zq8Xw7Cv6Bn5Mm4Ll3Kk2Jj1"
PLAIN = "h7Gk2Lp9Qx4Rt8Wz"  # no shape at all: only its name gives it away


def codes(text: str) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.column) for d in check_text(text, "t.contract.yaml").diagnostics if d.code == "YML007"]


def with_llm(extra: str) -> str:
    return QA.read_text().replace("llm:\n  model: openai/test-model\n", "llm:\n  model: openai/test-model\n" + extra)


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("extra, needle", [
    (f"  extra_headers: {{X-Api-Key: {PLAIN}}}\n", "X-Api-Key"),
    (f"  extra_headers:\n    X-Auth-Token: {PLAIN}\n", "X-Auth-Token"),
    (f"  extra_headers:\n    Authorization: Token {PLAIN}\n", "Authorization"),
    (f"  extra_body:\n    client_secret: {PLAIN}\n", "client_secret"),
])
def test_credentials_in_extra_headers_and_extra_body_are_found(extra: str, needle: str) -> None:
    text = with_llm(extra)
    found = codes(text)
    assert [(c, line) for c, line, _ in found] == [("YML007", line_of(text, needle))]


@pytest.mark.parametrize("name", ["api_token", "openai_api_key", "password", "X-Auth-Token", "client_secret"])
def test_credential_names_are_found_anywhere(name: str) -> None:
    text = QA.read_text().replace("input: {query: q, documents: [{id: A1, content: text}]}",
                                  f"input: {{query: q, documents: [{{id: A1, content: text}}], {name}: {PLAIN}}}", 1)
    assert [c for c, _, _ in codes(text)] == ["YML007"]


@pytest.mark.parametrize("token", [GHP, PAT, XOX, AKIA, SK])
def test_tokens_of_well_known_shapes_are_found_anywhere(token: str) -> None:
    for where in ("prompt: Answer the question from the documents.", "      id: {type: str, description: Id.}"):
        text = QA.read_text().replace(where, where.replace(".", f" {token}", 1), 1)
        assert [(c, line) for c, line, _ in codes(text)] == [("YML007", line_of(text, token))]


def test_a_token_used_as_a_mapping_key_is_found() -> None:
    text = QA.read_text().replace("input: {query: q, documents: [{id: A1, content: text}]}",
                                  f"input: {{query: q, documents: [{{id: A1, content: text}}], {GHP}: 1}}", 1)
    [(code, line, column)] = codes(text)
    assert line == line_of(text, GHP) and text.splitlines()[line - 1][column - 1:].startswith(GHP)


@pytest.mark.parametrize("extra", [
    "  api_key_env: OPENAI_API_KEY\n",
    "  max_tokens: 800\n",
    "  extra_headers: {Authorization: '${GATEWAY_TOKEN}', X-Request-Source: contractstudio}\n",
    "  extra_headers: {X-Api-Key: os.environ/GATEWAY_KEY}\n",
])
def test_references_and_counts_are_not_credentials(extra: str) -> None:
    assert codes(with_llm(extra)) == []


def test_every_trace_field_is_redacted_keys_included(tmp_path: Path) -> None:
    params = {"model": "m", "extra_headers": {"X-Auth-Token": PLAIN, "X-Api-Key": PLAIN + "2"},
              "extra_body": {"client_secret": PLAIN + "3", "openai_api_key": PLAIN + "4", GHP: "as a key"},
              "api_token": PLAIN + "5", "password": PLAIN + "6"}
    trace = Trace.from_dicts([{"seq": 1, "t": 0.0, "stage": "generate", "type": "llm_request", "params": params,
                               "note": f"{XOX} and {AKIA}"},
                              {"seq": 2, "t": 0.1, "stage": "generate", "type": "custom_event",
                               "anything": {"nested": [f"token={PLAIN}7", PAT]}}])
    path = tmp_path / "t.jsonl"
    trace.write(path)
    written = path.read_text()
    for secret in (PLAIN, GHP, PAT, XOX, AKIA):
        assert secret not in written
    back = Trace.read(path)
    assert back[0]["params"]["extra_headers"] == {"X-Auth-Token": "***", "X-Api-Key": "***"}
    assert back[0]["params"]["extra_body"]["client_secret"] == "***" and back[0]["params"]["model"] == "m"


def test_export_refuses_a_file_with_a_header_credential(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.contract.yaml"
    path.write_text(with_llm(f"  extra_headers: {{X-Auth-Token: {PLAIN}}}\n"))
    assert main(["export", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "YML007" in err and PLAIN not in err


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "sarif", "github"])
def test_check_never_prints_a_credential_its_messages_quote(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    # an unknown key (SCH102 quotes it) that is a token, and a credential where a number belongs (SCH103 quotes it)
    path = tmp_path / "quoted.contract.yaml"
    path.write_text(QA.read_text().replace("remedy:\n", f"{GHP}: 1\nremedy:\n")
                    .replace("max_snippets: {type: \"int | None\", default: 3,", f"max_snippets: {{type: \"int | None\", default: {SK},"))
    assert main(["check", str(path), "--format", fmt]) == 1
    out = capsys.readouterr().out
    assert "SCH102" in out and "YML007" in out
    for secret in (GHP, SK):
        assert secret not in out and secret[4:16] not in out


# ----------------------------------------------------------------- the flat scan is the tree walk

import dataclasses  # noqa: E402

import yaml  # noqa: E402
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from contractstudio.analysis.loaded import Loaded  # noqa: E402
from contractstudio.analysis.rules.secrets import literal_secret  # noqa: E402
from contractstudio.reading.source import read_source  # noqa: E402

_KEYS = st.one_of(st.sampled_from(["name", "api_key", "X-Auth-Token", "Authorization", "client_secret", "password", "assign",
                                   "fallback", "max_tokens", "api_key_env", "description", GHP, f"id {AKIA}"]), st.text(max_size=12))
_VALUES = st.one_of(st.sampled_from([PLAIN, "${GATEWAY_TOKEN}", f"Bearer {PLAIN}", "x" * 20, f"see {SK} here", AKIA, XOX, "", "no",
                                     "input.password", f"{GHP}\n{PAT}"]),
                    st.integers(), st.none(), st.booleans(), st.text(max_size=40))
_TREES = st.recursive(_VALUES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=30)


def _yml007(doc: object) -> list[tuple[int, int, int, int]]:
    return sorted((d.line, d.column, d.end_line, d.end_column) for d in literal_secret(Loaded("t.yaml", "", doc, None)))  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=_TREES, flow=st.booleans(), width=st.sampled_from([20, 80, 10**6]), piece=st.sampled_from([1, 7, 40, 1 << 18]))
@example(tree={"assign": {"password": PLAIN}, "x": [{"fallback": {"api_key": PLAIN, "k": {"password": PLAIN}}}]}, flow=False,
         width=80, piece=1 << 18)
def test_the_flat_scan_of_every_scalar_finds_what_the_tree_walk_finds(tree: object, flow: bool, width: int, piece: int) -> None:
    # YML007 scans the reader's flat lists of scalars and mappings (long values searched together, a piece of
    # about `piece` characters at a time); it must find exactly what visiting every node of the tree finds, in every
    # style YAML writes, wherever the pieces are cut.
    from contractstudio.analysis.rules import secrets

    text = yaml.safe_dump({"kind": "contract", "llm": tree}, default_flow_style=flow, width=width, allow_unicode=True)
    [doc] = read_source(text, "t.yaml").documents
    assert doc.scalars is not None and doc.mappings is not None
    whole, secrets._PIECE = secrets._PIECE, piece
    try:
        assert _yml007(doc) == _yml007(dataclasses.replace(doc, scalars=None, mappings=None))
    finally:
        secrets._PIECE = whole


def test_aliases_and_dropped_pairs_take_the_tree_walk() -> None:
    # a node under two keys (an alias), or pairs the reader leaves out: the flat lists are not the tree
    for text in (f"kind: contract\na: &k {PLAIN}\napi_key: *k\n", f"kind: contract\n<<: {{api_key: {PLAIN}}}\n",
                 f"kind: contract\n? [a, b]\n: {GHP}\n"):
        [doc] = read_source(text, "t.yaml").documents
        assert doc.scalars is None and doc.mappings is None
    [doc] = read_source(f"kind: contract\na: &k {PLAIN}\napi_key: *k\n", "t.yaml").documents
    assert len(_yml007(doc)) == 1  # found once, through the key that names it
