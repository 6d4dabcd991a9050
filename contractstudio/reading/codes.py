"""The findings the YAML reader emits itself (YML001, YML002, YML004-006), declared where they are produced."""

from contractstudio.findings.diagnostics import declare

declare("YML001", "yaml-syntax", "error", "The text is not valid YAML; the position is the parser's.")
declare("YML002", "duplicate-key", "error", "A mapping names the same key twice; YAML keeps only one of them.")
declare("YML004", "unsafe-tag", "error", "A YAML tag that could construct objects (`!!python/...`), an unknown tag or a merge key; never constructed.")
declare("YML005", "yaml11-boolean", "warning", "A plain yes/no/on/off that YAML 1.1 tools read as a boolean; quote it or write true/false.")
declare("YML006", "resource-limit", "error", "A document too deep, whose aliases expand too far (in nodes or characters), or whose regular expressions run too long, to analyze safely.")
