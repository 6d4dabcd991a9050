"""CON110: an `llm:` block that sends a key where only the file says (it runs only in a trusted folder).

Where a key goes is treated as code (contractstudio.trust): a key read from a variable other than the
provider's usual one, or requests sent to an `api_base` that is neither loopback nor a server the user
named in their own config. Reported where the folder is not trusted, as TOL103 is for hooks.
"""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.check import Context, Loaded
from contractstudio.documents.models import Contract
from contractstudio.findings.diagnostics import Diagnostic
from contractstudio.trust import untrusted_key_routes


def key_routes(loaded: Loaded, ctx: Context, doc: Contract) -> Iterator[Diagnostic]:
    """CON110 at each `llm:` value that makes a live call need a trusted folder."""
    if ctx.trusted:
        return
    llm = doc.llm
    for key, why in untrusted_key_routes(llm.model, llm.api_base, llm.api_key_env):
        yield loaded.diag("CON110", f"llm {why}: a live call runs only in a trusted folder", llm, key,
                          hint="trust the folder (--trust), or give the server yourself (--api-base, trusted_api_bases "
                               "in config.yaml) and read the key from the provider's usual variable")
