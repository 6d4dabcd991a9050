"""Text that is safe to show: secrets redacted first, then cut, then terminal controls escaped.

Everything the tool shows or keeps that came from a file, a model or a server passes here:
traces, logs, `run` and `test` output, diagnostics, crash reports, the studio's views.

- One table of credential names and token shapes serves both detection (YML007 in
  `analysis/rules/secrets.py`) and redaction, so what the analyzer calls a credential is what is masked.
- `shorten()` is the one way text is cut: it redacts the whole text before cutting, so a
  cut can never leave most of a key that redaction would have recognised whole.
- `printable()` is the one way text reaches a terminal or an annotation: control characters
  (ESC, C1, CR, ...) and bidirectional overrides are shown as escapes, never sent raw.

Imports nothing of ours but its key matcher (key_pieces): every layer may use it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from contractstudio.key_pieces import _PARTIAL_MIN, RUN, KeysInUse, flat_positions, flatten

REDACTED = "***"

# ----------------------------------------------------------------- what a credential looks like

# A mapping key names a credential when, lowercased with '-', '.' and ' ' read as '_', it ends in one of
# these words: `api_key`, `X-Api-Key`, `openai_api_key`, `x_auth_token`, `client_secret`, `password`, ...
# (`api_key_env` names a variable, not a key; `max_tokens` is a count.)
_NAME_WORDS = (
    r"api_?key|apikey|api_?token|auth_?token|access_?token|refresh_?token|id_?token|session_?token|bearer_?token"
    r"|token|secret|secret_?key|client_?secret|password|passwd|passphrase|authorization|credentials?"
    r"|private_?key|bearer"
)
_SECRET_NAME = re.compile(rf"(?:^|_)(?:{_NAME_WORDS})$")
_NAME_SEPARATORS = str.maketrans({"-": "_", ".": "_", " ": "_"})

# Shapes of real tokens: a value of one of these shapes is a credential wherever it is written.
TOKEN_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-(?:ant-|proj-|live-|test-|or-v1-)?[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic, OpenRouter, ...
    r"|sk_(?:live|test)_[A-Za-z0-9]{16,}|rk_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|xox[abposre]-[A-Za-z0-9-]{10,}"  # Slack
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_-]{30,}"  # Google
    r"|hf_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{20,}|r8_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{50,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"  # a JSON Web Token
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r")"
)

# Values under a credential name that are not a literal credential: references and placeholders.
_NOT_LITERAL = re.compile(
    r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|os\.environ/[A-Za-z_][A-Za-z0-9_]*|env:[A-Za-z_][A-Za-z0-9_]*"
    r"|\*+|x+|\.\.\.|<[^<>]*>|\{\{[^{}]*\}\}|none|null|changeme|placeholder|not-needed|no-key|your[-_ ].*)$",
    re.I,
)


def secret_name(name: object) -> bool:
    """Whether a mapping key names a credential (`Authorization`, `X-Api-Key`, `client_secret`, `openai_api_key`, ...)."""
    return isinstance(name, str) and bool(_SECRET_NAME.search(name.strip().lower().translate(_NAME_SEPARATORS)))


def token_in(text: str) -> re.Match[str] | None:
    """The first token of a well-known shape in a text (ghp_..., xoxb-..., AKIA..., sk-..., a JWT), or None."""
    return TOKEN_SHAPES.search(text)


def literal_credential(value: str) -> bool:
    """Whether a value written under a credential name is a literal (not `${VAR}`, `os.environ/VAR`, `***`, `<your key>`)."""
    text = value.strip()
    if text.lower().startswith(("bearer ", "basic ", "token ")):
        text = text.split(None, 1)[1].strip() if len(text.split(None, 1)) > 1 else ""
    return bool(text) and not _NOT_LITERAL.match(text)


# ----------------------------------------------------------------- redaction

_TEXT_NAME = rf"[A-Za-z0-9_-]*(?:{_NAME_WORDS.replace('_?', '[_-]?')})"
_SECRET_TEXT = re.compile(
    rf"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{{4,}}"
    rf"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{{6,}}"
    rf"|((?<![A-Za-z0-9_-]){_TEXT_NAME}[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+|basic\s+|token\s+)?[^\s\"',}}]+"
    rf"|(\b[a-z][a-z0-9+.-]*://[^\s/?#@:]*:)[^\s/?#]*(?=@)"  # the password of a URL: scheme://user:PASSWORD@host
)
_PLACEHOLDERS = {"not-needed", "sk-no-key", "no-key-needed", "placeholder", "anything", "changeme"}


# What some redaction pattern needs to find, lowercased: a credential's name before `:` or `=`, a token's prefix. A text
# with none of them (and no start of a key in use) is returned as it is without running the patterns, which
# is most text a trace holds (prompts, replies, names) and most of what redaction cost.
_HINTS = re.compile(
    r"(?:key|token|secret|passw(?:or)?d|passphrase|authorization|credentials?|bearer)[\"']?\s*[:=]"  # name: value
    r"|bearer\s|[spr]k[-_]|gh[pousr]_|github_pat_|xox|glpat-|akia|asia|aiza|hf_|r8_|npm_|pypi-|eyj|-----begin"
    r"|://[^\s/?#@:]*:[^\s/?#@]*@"  # a password in a URL (user and password each end at one character: linear)
)
# The characters re's IGNORECASE matches to ASCII letters that lower() leaves alone (or makes two characters of)
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


_in_use = KeysInUse(())
_generation = 0  # how many keys are in use: what redaction decided before a new one is not reused


def register_secret(value: str | None) -> None:
    """Remember a secret value (an API key in use) so that no RUN characters of it in a row are shown anywhere."""
    global _in_use, _generation
    # Short values ("none", "no-key") are placeholders, and replacing them everywhere would garble traces.
    if value and len(value) >= RUN and value.strip().lower() not in _PLACEHOLDERS and value not in _in_use.keys:
        _in_use = KeysInUse((*_in_use.keys, value))
        _generation += 1


def register_environment(environ: Mapping[str, str] | None = None) -> None:
    """Register the keys this process can use: the values of the environment's credential variables (`*_API_KEY`,
    `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, ...; litellm and the providers' clients pick some up by themselves)."""
    for name, value in (os.environ if environ is None else environ).items():
        if (name.endswith(("_API_KEY", "_TOKEN")) or secret_name(name)) and not value.startswith(("/", "~", "./")):
            register_secret(value)


def keys_in_use() -> tuple[tuple[str, ...], int]:
    """What is registered now, for `forget_keys_since` (a test forgets the keys it used)."""
    return _in_use.keys, _generation


def forget_keys_since(state: tuple[tuple[str, ...], int]) -> None:
    """Back to the keys in use of `keys_in_use()`'s `state`."""
    global _in_use, _generation
    if _in_use.keys != state[0]:
        _in_use = KeysInUse(state[0])
        _generation += 1


# A cheaper first sieve: every match of _HINTS holds one of these (substring searches are faster than the regex)
_STEMS = ("key", "token", "secret", "passw", "passphrase", "authorization", "credential", "bearer", "k-", "k_", "gh", "github_pat_",
          "xox", "glpat-", "akia", "asia", "aiza", "hf_", "r8_", "npm_", "pypi-", "eyj", "-----begin", "://")


def _may_hold_secret(text: str) -> bool:
    """Whether redaction could change the text: a hint of a pattern, or a piece of a key in use, is in it."""
    keys = _in_use
    for start in keys.starts:
        if start in text:
            return True
    lowered = text.lower() if text.isascii() else text.lower().translate(_FOLD)
    for stem in _STEMS:
        if stem in lowered:
            if _HINTS.search(lowered) is not None:
                return True
            break
    return bool(keys.keys) and keys.may_be_in(text)


def register_secrets_in(value: Any) -> None:
    """Register the values held under credential names (headers such as Authorization) anywhere in `value`."""
    if isinstance(value, dict):
        for k, v in value.items():
            if secret_name(k) and isinstance(v, str):
                register_secret(v)
                register_secret(re.sub(r"(?i)^\s*(bearer|basic|token)\s+", "", v))
            else:
                register_secrets_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            register_secrets_in(v)


def mask_secrets_in_use(text: str) -> str:
    """The text with every run of RUN characters of a key in use masked (however spaced, broken or encoded), and the
    start of one that the text ends with."""
    keys = _in_use  # one set of keys: another thread (the studio's worker) may register a key meanwhile
    if not keys.keys:
        return text
    flat = flatten(text)
    spans = keys.spans(flat)
    if spans:
        positions = range(len(text)) if len(flat) == len(text) else flat_positions(text)
        parts, at = [], 0
        for start, end in spans:
            parts += [text[at:positions[start]], REDACTED]
            at = positions[end - 1] + 1
        text = "".join(parts) + text[at:]
    # a text cut by someone else (a server's first bytes, an old trace) may end inside a key
    for secret in keys.keys:
        if len(text) < _PARTIAL_MIN or text[-_PARTIAL_MIN:] not in secret:
            continue
        for k in range(min(len(secret) - 1, len(text)), _PARTIAL_MIN - 1, -1):
            if text.endswith(secret[:k]):
                text = text[: len(text) - k] + REDACTED
                break
    return text


def redact_text(text: str) -> str:
    """A text with keys in use, credential-shaped tokens and `name: value` credentials replaced by ***."""
    if len(text) > _MEMO_CHARS:
        return _redact_patterns(text) if _may_hold_secret(text) else text
    found = _memo.get(text)
    if found is not None and found[0] == _generation:
        return found[1]
    clean = _redact_patterns(text) if _may_hold_secret(text) else text
    if len(_memo) >= _MEMO_SIZE:
        _memo.clear()
    _memo[text] = (_generation, clean)
    return clean


# Texts repeat (stage names, roles, model names, condition messages, the system prompt): each is redacted once per set of
# keys in use (`_generation` counts them; an entry from before a key was registered is not used).
_MEMO_CHARS = 4096
_MEMO_SIZE = 2048
_memo: dict[str, tuple[int, str]] = {}


def _redact_patterns(text: str) -> str:
    """redact_text without the quick check: every pattern run over the text."""
    text = mask_secrets_in_use(text)

    def sub(m: re.Match[str]) -> str:
        if m.group(1):
            return m.group(1) + REDACTED
        if m.group(2):
            return m.group(2) + REDACTED
        if m.group(3):
            return m.group(3) + REDACTED
        return REDACTED

    return TOKEN_SHAPES.sub(REDACTED, _SECRET_TEXT.sub(sub, text))


@lru_cache(maxsize=4096)
def _key(name: str, _secrets: int = 0) -> tuple[str, bool]:
    return redact_text(name), secret_name(name)


def redacted_key(name: str) -> tuple[str, bool]:
    """A mapping key redacted, and whether it names a credential (its value is then masked whole).

    Keys repeat: each is decided once per set of keys in use."""
    return _key(name, _generation)


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with every credential replaced by ***: under credential names, in any text, in keys too."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key, named = redacted_key(k) if isinstance(k, str) else (k, False)
            if named and v not in (None, "") and not isinstance(v, (dict, list, tuple)):
                out[key] = REDACTED
            else:
                out[key] = redact(v)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value


# ----------------------------------------------------------------- cutting and showing


def shorten(text: str, limit: int, marker: str = "...") -> str:
    """The text redacted, then cut to `limit` characters followed by `marker` when it is longer (the one way text is cut)."""
    text = redact_text(text)
    return text if len(text) <= limit else text[: max(limit, 0)] + marker


_C0_C1 = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
# Bidirectional overrides and isolates ("Trojan Source") and the Unicode line separators.
_INVISIBLE = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029]


def _escape(cp: int) -> str:
    named = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
    return named.get(cp) or (f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}")


_ONE_LINE = {cp: _escape(cp) for cp in (*_C0_C1, *_INVISIBLE)}
_LINES = {cp: e for cp, e in _ONE_LINE.items() if cp not in (0x09, 0x0A)}
_JSON_LINES = {cp: f"\\u{cp:04x}" for cp in _LINES}  # inside JSON text: escapes JSON itself reads back


def printable(text: str, *, lines: bool = False, json: bool = False) -> str:
    """Text for a terminal or an annotation: ESC, other controls and bidi overrides as visible escapes (`\\x1b`).

    With `lines`, newlines and tabs stay (a block of output); without, they are escaped too, so a name
    from a file can never start a line of its own. With `json` (JSON text printed for people), the
    escapes are JSON's own (`\\u001b`), so the text stays valid JSON.
    """
    if json:
        return text.translate(_JSON_LINES)
    return text.translate(_LINES if lines else _ONE_LINE)


def shown(value: Any, limit: int | None = None) -> str:
    """A value from a file, a model or a server as one safe line: redacted, cut at `limit`, escaped."""
    text = value if isinstance(value, str) else str(value)
    return printable(shorten(text, limit) if limit is not None else redact_text(text))


def shown_lines(lines: Iterable[str]) -> str:
    """Lines a report wrote, made one text: each one `shown`, so a name it holds (a step id, a dataset's row id, a
    contract's name, a message) that holds a line feed is shown as `\\n` inside its line and never starts a line of
    its own (`::error file=...::` would be a command to GitHub Actions); the line breaks are the report's own."""
    return "\n".join(map(shown, lines))
