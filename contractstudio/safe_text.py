"""Text that is safe to show: secrets redacted first, then cut, then terminal controls escaped.

Everything the tool shows or keeps that came from a file, a model or a server passes here:
traces, logs, `run` and `test` output, diagnostics, crash reports, the studio's views.

- One table of credential names and token shapes serves both detection (YML007 in
  `analysis/rules/secrets.py`) and redaction, so what the analyzer calls a credential is what is masked.
- `shorten()` is the one way text is cut: it redacts the whole text before cutting, so a
  cut can never leave most of a key that redaction would have recognised whole.
- `printable()` is the one way text reaches a terminal or an annotation: control characters
  (ESC, C1, CR, ...) and bidirectional overrides are shown as escapes, never sent raw.

Imports nothing of ours: every layer may use it.
"""

from __future__ import annotations

import base64
import os
import re
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

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
_PARTIAL_MIN = 6  # a cut-off start of a key in use, this long or longer, at the end of a text is masked too


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


# ----------------------------------------------------------------- keys in use: any 8 characters of one, however written
#
# A key in use is masked wherever any RUN characters of it in a row appear: its random part without the `sk-proj-`
# prefix, a tail a message template cut off, the key split over lines, spaced out, with invisible characters inside,
# JSON-escaped, or base64-encoded (at each of the three byte offsets, standard or URL-safe alphabet; the base64 of a
# piece of the key is a piece of one of these three). The text is first flattened: whitespace, invisible characters
# and the escapes that write them (`\n`, `\u200b`) taken out, `+` `/` read as `-` `_`. Then one set lookup per 4
# characters of the flattened text: every run of RUN (8) characters of a key holds a 4-character piece starting at a
# multiple of 4, so a text none of whose 4-character pieces is a piece of a key holds no run of one. Only then (rare)
# is each hit extended, in both directions, as far as the text and the key agree.
RUN = 8
_GRAM = RUN // 2
# What a terminal shows as nothing: every control character (Cc), every format character (Cf: bidi marks, Unicode
# tags, ...; the list is Unicode 14's, tests/test_key_fragments.py checks it against unicodedata), the variation
# selectors, and the blank-looking letters (Hangul fillers, U+034F, U+17B4/5). A class of ranges.
_INVISIBLE_CHARS = ("\x00-\x1f\x7f-\x9f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
                    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
                    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                    "\U000e0000-\U000e007f\U000e0100-\U000e01ef")
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE_CHARS}]+")
_BLANK_RE = re.compile(rf"[\s{_INVISIBLE_CHARS}]+")  # what str.split() and _INVISIBLE_RE take out, together
# the escapes of a whitespace or invisible character in JSON, Python and printable() text (a character past U+FFFF
# in JSON is a surrogate pair: U+E0000-U+E01EF is \udb40 then \udc00-\uddef)
_ESCAPED = (r"\\(?:[nrtfvb]|x(?:[01][0-9a-f]|7f|[89][0-9a-f]|20|a0|ad)"
            r"|u(?:00(?:[01][0-9a-f]|7f|[89][0-9a-f]|20|a0|ad)|034f|060[0-5]|061c|06dd|070f|089[01]|08e2|115f|1160"
            r"|17b[45]|180[b-f]|200[0-9a-f]|202[89a-f]|205f|206[0-9a-f]|3000|3164|fe0[0-9a-f]|feff|ffa0|fff[9ab]|1680"
            r"|db40\\ud[cd][0-9a-f]{2}|d804\\udc[bc]d|d80d\\udc3[0-9a-f]|d82f\\udca[0-3]|d834\\udd7[3-9a])"
            r"|U000(?:e0[01][0-9a-f]{2}|110bd|110cd|1343[0-9a-f]|1bca[0-3]|1d17[3-9a]))")
_ESCAPED_BLANK = re.compile(_ESCAPED, re.I)
_ESCAPED_BLANK_BYTES = re.compile(_ESCAPED.encode(), re.I)
# what str.split(), re's \s and _INVISIBLE_RE take out of ASCII: whitespace and every control character
_ASCII_BLANKS = bytes(c for c in range(128) if chr(c).isspace() or c < 0x20 or c == 0x7f)
_ALPHABET = bytes.maketrans(b"+/", b"-_")  # base64's two alphabets read as one


def _flat(text: str) -> bytes:
    """The text as the matcher of keys reads it (see above), one byte a character ('?' for a non-ASCII one);
    each byte's position in the text: `_flat_positions`."""
    if text.isascii():
        flat = text.encode("ascii").translate(_ALPHABET, _ASCII_BLANKS)
    else:
        flat = "".join(_INVISIBLE_RE.sub("", text).split()).encode("ascii", "replace").translate(_ALPHABET)
    if b"\\" in flat:
        flat = _ESCAPED_BLANK_BYTES.sub(b"", flat)
    return flat


def _kept(text: str, removed: re.Pattern[str]) -> list[int]:
    """The positions in `text` of the characters `removed` leaves."""
    kept: list[int] = []
    at = 0
    for m in removed.finditer(text):
        kept.extend(range(at, m.start()))
        at = m.end()
    kept.extend(range(at, len(text)))
    return kept


def _flat_positions(text: str) -> list[int]:
    """For each byte of `_flat(text)`, the position of its character in the text."""
    positions = _kept(text, _BLANK_RE)
    once = "".join(text[i] for i in positions)
    if "\\" in once:
        positions = [positions[i] for i in _kept(once, _ESCAPED_BLANK)]
    return positions


def _base64_forms(key: str) -> list[bytes]:
    """The characters of the key's base64 that depend on the key alone, at each of the three byte offsets."""
    data = key.encode("utf-8", "surrogatepass")
    forms = []
    for pad in range(3):
        encoded = base64.urlsafe_b64encode(bytes(pad) + data)
        forms.append(encoded[-(-8 * pad // 6):(8 * (pad + len(data))) // 6])  # whole 6-bit groups of the key's bits
    return forms


class _KeysInUse:
    """The keys in use, and what finds any RUN characters of one: immutable, swapped whole when a key is added."""

    __slots__ = ("forms", "grams", "keys", "starts")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.starts = tuple(key[:_PARTIAL_MIN] for key in keys)  # the first characters of each key
        forms: list[bytes] = []
        for key in keys:
            forms.extend(f for f in (_flat(key), *_base64_forms(key)) if len(f) >= RUN)
        self.forms = tuple(dict.fromkeys(forms))
        # each 4-byte piece of a form (as the 32-bit number it is), and where it is in which form
        self.grams: dict[int, list[tuple[bytes, int]]] = {}
        for form in self.forms:
            for at in range(len(form) - _GRAM + 1):
                self.grams.setdefault(int.from_bytes(form[at:at + _GRAM], sys.byteorder), []).append((form, at))

    @staticmethod
    def pieces(flat: bytes) -> memoryview:
        """The flattened text's whole 4-byte pieces at multiples of 4, as 32-bit numbers (a run of RUN bytes holds
        a whole one, so the last few bytes need no piece of their own)."""
        return memoryview(flat)[: len(flat) - len(flat) % _GRAM].cast("I")

    def may_be_in(self, text: str) -> bool:
        """Whether the text may hold RUN characters of a key in use (never False when it does)."""
        if len(text) < RUN:
            return False
        flat = _flat(text)
        return len(flat) >= RUN and not self.grams.keys().isdisjoint(self.pieces(flat))

    def spans(self, flat: bytes) -> list[tuple[int, int]]:
        """The stretches of the flattened text that are RUN or more characters of a key in use, merged."""
        found: list[tuple[int, int]] = []
        pieces = self.pieces(flat) if len(flat) >= RUN else ()
        if not pieces or self.grams.keys().isdisjoint(pieces):
            return found
        grams = self.grams
        for index in [i for i, piece in enumerate(pieces) if piece in grams]:
            for form, at in grams[pieces[index]]:
                start = index * _GRAM
                left = 0
                while left < at and left < start and flat[start - left - 1] == form[at - left - 1]:
                    left += 1
                end, right = start + _GRAM, at + _GRAM
                while right < len(form) and end < len(flat) and flat[end] == form[right]:
                    end += 1
                    right += 1
                if end - (start - left) >= RUN:
                    found.append((start - left, end))
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged


_in_use = _KeysInUse(())
_generation = 0  # how many keys are in use: what redaction decided before a new one is not reused


def register_secret(value: str | None) -> None:
    """Remember a secret value (an API key in use) so that no RUN characters of it in a row are shown anywhere."""
    global _in_use, _generation
    # Short values ("none", "no-key") are placeholders, and replacing them everywhere would garble traces.
    if value and len(value) >= RUN and value.strip().lower() not in _PLACEHOLDERS and value not in _in_use.keys:
        _in_use = _KeysInUse((*_in_use.keys, value))
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
        _in_use = _KeysInUse(state[0])
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
    flat = _flat(text)
    spans = keys.spans(flat)
    if spans:
        positions = range(len(text)) if len(flat) == len(text) else _flat_positions(text)
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
