"""Pieces of keys in use, however written: the matcher `safe_text` masks them with (issue 32.3).

Imports nothing of ours: `safe_text` (which every layer may use) builds on it.
"""

from __future__ import annotations

import base64
import re
import sys

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
_PARTIAL_MIN = 6  # a cut-off start of a key in use, this long or longer, at the end of a text is masked too
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


def flatten(text: str) -> bytes:
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


def flat_positions(text: str) -> list[int]:
    """For each byte of `flatten(text)`, the position of its character in the text."""
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


class KeysInUse:
    """The keys in use, and what finds any RUN characters of one: immutable, swapped whole when a key is added."""

    __slots__ = ("forms", "grams", "keys", "starts")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.starts = tuple(key[:_PARTIAL_MIN] for key in keys)  # the first characters of each key
        forms: list[bytes] = []
        for key in keys:
            forms.extend(f for f in (flatten(key), *_base64_forms(key)) if len(f) >= RUN)
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
        flat = flatten(text)
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
