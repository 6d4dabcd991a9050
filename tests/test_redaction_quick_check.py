"""Redaction's quick check skips only texts that no pattern would change, and a trace's lines are what they were.

`redact_text` runs its patterns only over a text that holds a hint of one (a credential's name before `:` or `=`,
a token's prefix, the start of a key in use); the trace writer redacts the events' values in one walk. Both must
give exactly what running every pattern over every value gives.
"""

from __future__ import annotations

import base64

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from contractstudio.runtime.events import ModelRequest, PlainEvent, StageStart
from contractstudio.runtime.trace import Trace, jsonable
from contractstudio.safe_text import _redact_patterns, redact, redact_text, register_secret

IN_USE = "zq-inuse-4Rt7Yu1Io9Pa"  # a key of no known shape: only its registration finds it
register_secret(IN_USE)

_PIECES = st.sampled_from([
    "key", "KEY", "Key", "\u212aey", "api_key", "api-key", "x-auth-token", "token", "\u017fecret", "secret", "PassWord",
    "passwd", "passphrase", "Authorization", "credentials", "bearer", "Bearer ", "sk-", "pk-", "rk_", "sk_live_",
    "ghp_", "github_pat_", "xoxb-", "glpat-", "AKIA", "ASIA", "AIza", "hf_", "gsk_", "r8_", "npm_", "pypi-", "eyJ",
    "-----BEGIN RSA PRIVATE KEY-----", ".eyJ", ":", "=", " ", "\"", "'", "\n", "_", "-", "0123456789abcdef",
    "ABCDEFGHIJKLMNOPQRST", "keys", "no other keys", IN_USE, IN_USE[:7], IN_USE[:12], "\u0130", "\u0131",
    # pieces of the key in use as a reply may carry them: cut, broken, spaced, escaped, base64 (tests/test_key_fragments.py)
    IN_USE[3:11], IN_USE[5:9], IN_USE[9:], "\u200b", "\u00ad", "\\n", "\\u200b", "+", "/", "é",
    base64.b64encode(IN_USE.encode()).decode()[2:14], base64.b64encode(b"x" + IN_USE.encode()).decode(),
    "postgres://", "u:p@", "://:pw@h",
])
_TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXTS)
@example(text="no other keys: abcdefgh")
@example(text="\u017fecret=abcdefghij")
@example(text=f"cut at {IN_USE[:9]}")
@example(text=f"broken {IN_USE[:4]}\n {IN_USE[4:10]} and spaced {' '.join(IN_USE[6:14])}")
@example(text=f"db: redis://:pw@cache:6379 and {base64.b64encode(b'xy' + IN_USE.encode()).decode()}")
def test_the_quick_check_skips_only_texts_every_pattern_leaves_alone(text: str) -> None:
    assert redact_text(text) == _redact_patterns(text)


_KEYS = st.one_of(_PIECES, st.text(max_size=8))
_VALUES = st.one_of(_TEXTS, st.integers(), st.floats(), st.none(), st.booleans())
_TREES = st.recursive(_VALUES, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner)
                      | st.dictionaries(_KEYS, inner, max_size=3), max_leaves=20)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=st.dictionaries(_KEYS, _TREES, max_size=4), value=_TREES, content=_TEXTS)
def test_a_trace_line_is_every_value_made_json_and_redacted(payload: dict, value: object, content: str) -> None:
    events = [PlainEvent(1, 0.5, "step", kind="step_end", payload=payload),
              StageStart(seq=2, t=0.25, stage="input", contract="c", model="m", value=value),
              ModelRequest(seq=3, t=0.125, stage="generate", messages=[{"role": "user", "content": content}],
                           params={"model": "m", "api_key": content, "extra_headers": {"Authorization": content}})]
    expected = [{"seq": e.seq, "t": round(e.t, 6), "stage": e.stage, "type": e.type, **redact(jsonable(e.data))} for e in events]
    assert Trace(events).to_dicts() == expected
