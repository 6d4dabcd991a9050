"""ruamel.yaml as the tests' second reader: does it read, from a text `check` calls clean, what the analyzer read?

YML008 (reading/portability.py, reading/builder.py) is where the analyzer says which values other YAML tools read
differently. Export trusts it and writes the text unchanged (issue 21.15: a second reading of every exported file by
ruamel's pure-Python loader cost 18x `check` on 5 MB). These tests hold YML008 to ruamel itself instead.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import warnings
from typing import Any

from contractstudio.reading.portability import describe, same_value
from contractstudio.reading.source import read_source


def ruamel_disagrees(text: str) -> str | None:
    """Where ruamel.yaml cannot read the text or reads other data than the analyzer's reader; None when they agree."""
    from ruamel.yaml import YAML

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = list(YAML(typ="rt").load_all(text))
    except Exception as err:  # noqa: BLE001 - any failure of the second reader is the answer
        return f"ruamel.yaml cannot read it: {err}"
    ours = read_source(text, "<oracle>").documents
    if len(theirs) != len(ours):
        return f"ruamel.yaml reads {len(theirs)} document(s), the analyzer {len(ours)}"
    for doc, data in zip(ours, theirs, strict=True):
        where = _first_difference(doc.data, data, ())
        if where is not None:
            return f"ruamel.yaml reads {'.'.join(map(str, where)) or 'the document'} differently: {describe(data)}"
    return None


def _first_difference(ours: Any, theirs: Any, where: tuple[Any, ...]) -> tuple[Any, ...] | None:
    if isinstance(ours, dict):
        if not isinstance(theirs, dict) or list(map(_key, ours)) != list(map(_key, theirs)):
            return where
        for (k, v), tv in zip(ours.items(), theirs.values(), strict=True):
            if (found := _first_difference(v, tv, (*where, k))) is not None:
                return found
        return None
    if isinstance(ours, list):
        if not isinstance(theirs, list) or len(ours) != len(theirs):
            return where
        for i, (v, tv) in enumerate(zip(ours, theirs, strict=True)):
            if (found := _first_difference(v, tv, (*where, i))) is not None:
                return found
        return None
    return None if _same_scalar(ours, theirs) else where


def _key(value: Any) -> Any:
    return (type(value) is bool, value) if not isinstance(value, str) else value


def _same_scalar(ours: Any, theirs: Any) -> bool:
    from ruamel.yaml.comments import TaggedScalar

    if isinstance(theirs, TaggedScalar):  # an explicit !!str (or `=`), kept as its text
        theirs = theirs.value
    if isinstance(theirs, (datetime.date, datetime.datetime)):
        return isinstance(ours, str)  # a timestamp is text to the analyzer, and the exported text is the same
    if isinstance(theirs, bytes):
        try:
            return isinstance(ours, str) and base64.b64decode("".join(ours.split()), validate=True) == theirs
        except (binascii.Error, ValueError):
            return False
    return same_value(ours, theirs)
