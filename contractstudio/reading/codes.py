"""The findings the YAML readers emit themselves (YML001-006, YML008), declared where they are produced.

YML003 (no or an unknown kind) is also the shape validator's (analysis/shape.py), which
meets most documents of no kind; a dialect reader reports a document of its format that is not one.
"""

from contractstudio.findings.diagnostics import declare

declare("YML001", "yaml-syntax", "error", "The text is not valid YAML; the position is the parser's.")
declare("YML002", "duplicate-key", "error", "A mapping names the same key twice; YAML keeps only one of them.")
declare("YML003", "unknown-kind", "error", "A document has no `kind:` or one that is not contract, agent, pipeline or tools.")
declare("YML004", "unsafe-tag", "error",
        "A YAML tag that could construct objects (`!!python/...`), an unknown tag or a merge key; never constructed.")
declare("YML005", "yaml11-boolean", "warning", "A plain yes/no/on/off that YAML 1.1 tools read as a boolean; quote it or write true/false.")
declare("YML006", "resource-limit", "error",
        "A document too deep, whose aliases expand too far (in nodes or characters), "
        "or whose regular expressions run too long, to analyze safely; a declared type that nests too deep to run.")
declare("YML008", "reads-differently", "error",
        "A value other YAML tools (ruamel.yaml, for one) read differently or cannot read; export refuses it: "
        "a value that does not fit its tag, an integer of more than 4,300 digits, a tab outside quotes, "
        "a number outside YAML 1.2's forms, a value a `%YAML 1.1` header changes.")
