"""Every rule code, its kebab-case name, default severity and one-line summary (RULES.md).

Codes are stable and never reused. The rule functions live in the family
modules; this table is what `docs/rules.md`, SARIF and the meta-test read.
"""

from contractstudio.findings.diagnostics import declare

# YML: the document
declare("YML003", "unknown-kind", "error", "A document has no `kind:` or one that is not contract, agent, pipeline or tools.")
# SCH: shape
declare("SCH101", "missing-key", "error", "A required key is missing.")
declare("SCH102", "unknown-key", "warning", "A key the format does not know (the hint names the closest known key).")
declare("SCH103", "wrong-type", "error", "A value of the wrong shape or type (a list where a mapping belongs, a string for `tries`, ...).")
declare("SCH104", "out-of-range", "error", "A value outside its allowed set or range (`oracle: robot`, `tries: 0`, `backoff: 0.5`).")
declare("SCH105", "constraint-not-applicable", "error", "A field constraint its type cannot have (`ge` on a str, `pattern` on an int): it would be ignored.")
declare("SCH106", "impossible-constraint", "error", "Field constraints no value satisfies (min_length above max_length, ge above le), or a default outside them.")
declare("SCH107", "type-cannot-be-built", "error", "A declared type pydantic cannot turn into a validator: it could not be enforced, so it is never run.")
# REF: references
declare("REF201", "undeclared-type", "error", "A type name that is not declared (in input, output, intermediate or a field type).")
declare("REF202", "duplicate-name", "error", "A duplicate id or name (types, condition ids, policy ids, task ids, tools).")
# EXP: expressions
declare("EXP101", "expression-syntax", "error", "An expression that does not parse.")
declare("EXP201", "unknown-field", "error", "An attribute that is not a field of its type (the hint suggests the closest field).")
declare("EXP202", "name-not-in-scope", "error", "A name that is not in scope (e.g. `output` in `pre`, `act` with no act).")
declare("EXP301", "type-mismatch", "warning", "A type mismatch an author would not intend (str compared with int, len() of a number).")
declare("EXP401", "forbidden-construct", "error", "A forbidden construct: `_` names, lambda, import, a call outside the allowlist.")
declare("EXP501", "bad-message-template", "error", "A `message` template that does not parse or names unknown fields.")
# CON: contract
declare("CON101", "pre-remedy-without-pre", "error", "`remedy.pre: true` with no `pre` conditions: nothing to remedy against.")
declare("CON102", "retry-cannot-behave", "warning", "Retry parameters that cannot behave as written (delay above max_delay, ...).")
declare("CON103", "invalid-fallback", "error", "A `fallback` that does not produce a valid `output`.")
declare("CON104", "missing-description", "warning", "A field without a description: descriptions are what the LLM is told.")
declare("CON105", "prompt-not-fixed", "warning", "A prompt with `{...}` placeholders: per-call data belongs in the input.")
declare("CON106", "act-intermediate-mismatch", "error", "`act` and `intermediate` disagree (one without the other, or assign misses or invents fields).")
declare("CON107", "no-post-conditions", "info", "No `post` conditions: only the shape of the output is checked, not its substance.")
declare("CON108", "scenario-cannot-hold", "error", "A scenario whose `expect` cannot hold, or whose responses cannot be parsed as needed.")
declare("CON109", "invalid-example", "error", "An `examples:` input that is not a valid `input`: the studio cannot step through it.")
declare("CON110", "untrusted-key-route", "warning", "An `llm:` block that sends a key where only the file says (an api_base away from loopback, a variable not the provider's usual one): a live call needs a trusted folder.")
# AGT: agent
declare("AGT101", "policy-contradiction", "error", "A policy requires a tool another policy forbids on overlapping scope (or a conflicts_with pair).")
declare("AGT102", "forbid-pattern-hits-required-tool", "error", "A forbid `tool_pattern` matches a tool that a policy requires.")
declare("AGT103", "allowed-tool-forbidden", "error", "A policy on every task forbids a tool that `constraints.allowed_tools` allows.")
declare("AGT201", "human-oracle-without-annotators", "error", "`oracle: human` (or hybrid, or a policy's `check: human`) but the corpus has no human annotator.")
declare("AGT202", "functional-oracle-without-code", "error", "`oracle: functional` (or hybrid) but no success criterion is a code-level assert.")
declare("AGT203", "judge-oracle-without-judges", "error", "`oracle: llm_judge` (or hybrid, or a policy's `check: llm`) but the ensemble has no judge.")
declare("AGT301", "budget-exceeded", "error", "A budget that is certainly exceeded (latency, call count or minimum cost).")
declare("AGT302", "budget-near-limit", "warning", "A budget whose typical estimate is at least 80% of its limit.")
declare("AGT303", "budget-not-checked", "info", "A budget the backend cannot estimate (a model with no known price, no tokens or latency per call): not checked.")
declare("AGT401", "dangling-reference", "error", "A trajectory, policy or scope names a tool, field or task that is not declared.")
declare("AGT501", "not-checkable", "info", "A check the document's format gives no way to decide (no judges, annotators or model in it): said, not guessed.")
# TOL: tools
declare("TOL101", "unknown-parameter", "error", "A tool condition names a parameter the tool does not have.")
declare("TOL102", "bad-python-hook", "error", "A `python:` hook that cannot be imported or is not callable (checked in a trusted workspace).")
declare("TOL103", "untrusted-hook", "info", "A `python:` hook that will run only in a trusted workspace (--trust).")
declare("YML007", "literal-secret", "error", "A literal API key or credential in a file: it would end up in exports and version control.")
