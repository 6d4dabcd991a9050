"""A contract's `llm:` block (CON110): where the key goes is treated as code, so it needs a trusted folder.

A key read from a variable other than the provider's usual one, or requests sent
to an `api_base` that is neither loopback nor a server the user named in their
own config (contractstudio.trust; the face reads it once and hands it over in the analysis context,
`Context.api_bases`: the rule never reads the user's disk). Reported where the folder is not trusted, as
TOL103 is for hooks.
"""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.findings.diagnostics import Diagnostic
from contractstudio.trust import untrusted_key_routes

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}


@rule("CON110", "untrusted-key-route", "warning", kinds=("contract",))
def untrusted_key_route(doc: LoadedContract) -> Iterator[Diagnostic]:
    """An `llm:` block sends its key to a non-loopback api_base or reads it from an unusual variable: a live call needs trust."""
    if doc.ctx.trusted:
        return
    llm = doc.contract.llm
    for key, why in untrusted_key_routes(llm.model, llm.api_base, llm.api_key_env, given=doc.ctx.api_bases):
        yield doc.diag("CON110", f"llm {why}: a live call runs only in a trusted folder", llm, key,
                       hint="trust the folder (--trust), or give the server yourself (--api-base, trusted_api_bases "
                            "in config.yaml) and read the key from the provider's usual variable")
