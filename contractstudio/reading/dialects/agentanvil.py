"""AgentAnvil contracts (the bare `AgentContract` mapping of agentanvil.core.contracts) read as `kind: agent`.

AgentAnvil's schema: name, version, policies (id, description, severity, check),
tasks (id, description, inputs, success_criteria, oracle) and constraints
(max_latency_ms, max_cost_per_interaction_usd, max_tool_calls, allowed_tools,
forbidden_patterns). It has no place for judges, annotators, a model or prices:
the document says so in `unsupported`, and the agent rules report those checks
as "not checkable" instead of failing every file. docs/dialects.md has the
mapping key by key.
"""

from __future__ import annotations

import re

from contractstudio.findings.diagnostics import Diagnostic, Payload, did_you_mean, make
from contractstudio.reading.dialect_registry import BaseDialect, YamlFile, register
from contractstudio.reading.dialects.synth import data_of, entry, mapping, scalar, sequence
from contractstudio.reading.nodes import MapNode, Node, ScalarNode, SeqNode, SourceDocument

NAME = "agentanvil"
TOP_KEYS = ("name", "version", "policies", "tasks", "constraints")
POLICY_KEYS = ("id", "description", "severity", "check")
TASK_KEYS = ("id", "description", "inputs", "success_criteria", "oracle")
CONSTRAINT_KEYS = ("max_latency_ms", "max_cost_per_interaction_usd", "max_tool_calls", "allowed_tools", "forbidden_patterns")
ORACLES = {"rule": "functional", "llm": "llm_judge", "human": "human", "hybrid": "hybrid"}

# What AgentAnvil's schema cannot say, and why (the hint of every "not checkable" finding).
UNSUPPORTED = {
    "annotators": "AgentAnvil contracts have no place to declare human annotators",
    "judges": "AgentAnvil contracts have no place to declare LLM judges",
    "backend": "AgentAnvil contracts name no model, latency or price, so the budget cannot be estimated",
    "code_criteria": "AgentAnvil success_criteria are free text; none can be a code-level assert",
}


_NAME = re.compile(r"^name[ \t]*:", re.M)
_LISTS = re.compile(r"^(?:(?:policies|tasks)[ \t]*:[ \t]*(?:\[|(?:#.*)?\n(?:[ \t]*(?:#.*)?\n)*[ \t]*- )"
                    r"|constraints[ \t]*:[ \t]*(?:\{|(?:#.*)?\n[ \t]+(?:max_|allowed_tools|forbidden_patterns)))", re.M)


# Those keys left empty (`policies:` with nothing after it) and every top-level key one of AgentAnvil's.
_EMPTY = re.compile(r"^(?:policies|tasks|constraints)[ \t]*:[ \t]*(?:(?:null|~)[ \t]*)?(?:#.*)?$", re.M)
_TOP = re.compile(r"^([^\s#:'\"-][^:\n]*?)[ \t]*:(?:[ \t]|$)", re.M)


class AgentAnvil(BaseDialect):
    """The dialect: a bare AgentContract mapping reads as `kind: agent`."""

    name = NAME
    kinds: tuple[str, ...] = ("agent",)
    described = "AgentAnvil contracts (name with policies, tasks or constraints)"

    def sniff(self, text: str) -> str | None:
        """`agent` for a text with a top-level name and AgentAnvil's lists (or those keys left empty, with no other
        top-level key: a contract being written)."""
        if not _NAME.search(text):
            return None
        if _LISTS.search(text):
            return "agent"
        return "agent" if _EMPTY.search(text) and set(_TOP.findall(text)) <= set(TOP_KEYS) else None

    def shaped(self, root: Node | None) -> bool:
        """AgentAnvil's shape (`is_agentanvil`)."""
        return is_agentanvil(root)

    def reader(self, file: YamlFile) -> AgentAnvilReader:
        """One reader for the file's AgentAnvil documents."""
        return AgentAnvilReader(file.source.path)


def is_agentanvil(root: Node | None) -> bool:
    """A mapping without `kind:` with a name and AgentAnvil's lists (policies / tasks as lists, constraints as a mapping)."""
    if not isinstance(root, MapNode) or root.get("kind") is not None or root.get("name") is None:
        return False
    shapes = {"policies": SeqNode, "tasks": SeqNode, "constraints": MapNode}
    present = [k for k in shapes if root.get(k) is not None]
    if not present:
        return False
    if all(isinstance(root.get(k), shapes[k]) for k in present):
        return True
    # Left empty (null): AgentAnvil's when nothing else says otherwise (no key it does not have); its own
    # model refuses None there, and so does the reading (SCH103), as with --dialect agentanvil.
    keys = [k.value for k, _ in root.pairs if isinstance(k, ScalarNode)]
    return (all(isinstance(root.get(k), shapes[k]) or _null(root.get(k)) for k in present)
            and all(k in TOP_KEYS for k in keys))


def _null(node: Node | None) -> bool:
    return isinstance(node, ScalarNode) and node.value is None


class AgentAnvilReader:
    """One AgentAnvil document -> one native agent document, with AgentAnvil's own shape errors."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.diagnostics: list[Diagnostic] = []

    def report(self, code: str, message: str, at: Node, hint: str | None = None, payload: Payload | None = None) -> None:
        self.diagnostics.append(make(code, message, self.path, at.span, hint=hint, payload=payload))

    def read(self, doc: SourceDocument) -> list[SourceDocument]:
        root = doc.root
        if not isinstance(root, MapNode):
            if root is not None:
                self.report("YML003", "an AgentAnvil contract is a mapping (name, version, policies, tasks, constraints)", root)
            return []
        native = self.native(root)
        return [SourceDocument(doc.index, native, data_of(native), doc.line, dialect=NAME, unsupported=dict(UNSUPPORTED))]

    def _known(self, node: MapNode, known: tuple[str, ...], where: str) -> None:
        """AgentAnvil ignores unknown keys silently; a typo there is worth a warning."""
        for key, _ in node.pairs:
            if isinstance(key, ScalarNode) and key.value not in known:
                self.report("SCH102", f"unknown key '{key.value}' in {where} (AgentAnvil ignores it)", key,
                            hint=did_you_mean(str(key.value), known) or f"known keys: {', '.join(known)}")

    def native(self, root: MapNode) -> MapNode:
        self._known(root, TOP_KEYS, "the contract")
        pairs = [entry("kind", scalar("agent", root), root)]
        for key in ("name", "version"):
            if root.get(key) is not None:
                pairs.append((root.key_node(key), root.get(key)))  # type: ignore[arg-type]
        constraints = root.get("constraints")
        forbids: list[Node] = []
        if isinstance(constraints, MapNode):
            native_constraints, forbids = self._constraints(constraints)
            pairs.append((root.key_node("constraints"), native_constraints))  # type: ignore[arg-type]
        elif constraints is not None:
            pairs.append((root.key_node("constraints"), constraints))  # type: ignore[arg-type]  # SCH103 from the model
        policies = root.get("policies")
        items = [self._policy(p) for p in policies.items] if isinstance(policies, SeqNode) else []
        items += forbids
        if items or isinstance(policies, SeqNode):
            at = policies if policies is not None else constraints
            pairs.append(entry("policies", sequence(items, at), root.key_node("policies") or at))  # type: ignore[arg-type]
        elif policies is not None:
            pairs.append((root.key_node("policies"), policies))  # type: ignore[arg-type]
        tasks = root.get("tasks")
        if isinstance(tasks, SeqNode):
            pairs.append((root.key_node("tasks"), sequence((self._task(t) for t in tasks.items), tasks)))  # type: ignore[arg-type]
        elif tasks is not None:
            pairs.append((root.key_node("tasks"), tasks))  # type: ignore[arg-type]
        return mapping(pairs, root)

    def _policy(self, node: Node) -> Node:
        if not isinstance(node, MapNode):
            return node
        self._known(node, POLICY_KEYS, "a policy")
        pairs: list[tuple[Node, Node]] = [(k, v) for k, v in node.pairs if isinstance(k, ScalarNode) and k.value in POLICY_KEYS]
        self._required(node, ("id", "description"), "a policy")
        if node.get("check") is None:  # AgentAnvil's default: an LLM checks the policy
            pairs.append(entry("check", scalar("llm", node.key_node("id") or node), node.key_node("id") or node))
        return mapping(pairs, node)

    def _task(self, node: Node) -> Node:
        if not isinstance(node, MapNode):
            return node
        self._known(node, TASK_KEYS, "a task")
        self._required(node, ("id", "description"), "a task")
        pairs: list[tuple[Node, Node]] = []
        for key, value in node.pairs:
            name = key.value if isinstance(key, ScalarNode) else None
            if name == "oracle":
                pairs.append((key, self._oracle(value)))
            elif name == "success_criteria" and isinstance(value, SeqNode):
                strings = [c for c in value.items if isinstance(c, ScalarNode) and isinstance(c.value, str)]
                for c in value.items:
                    if c not in strings:
                        self.report("SCH103", "an AgentAnvil success criterion must be a string", c)
                pairs.append((key, sequence(strings, value)))
            elif name in TASK_KEYS:
                pairs.append((key, value))
        if node.get("oracle") is None:  # AgentAnvil's default oracle
            at = node.key_node("id") or node
            pairs.append(entry("oracle", scalar("hybrid", at), at))
        return mapping(pairs, node)

    def _oracle(self, value: Node) -> Node:
        oracle = value.value if isinstance(value, ScalarNode) else None
        if isinstance(oracle, str) and oracle in ORACLES:
            return scalar(ORACLES[oracle], value, text=oracle)  # messages quote what the user wrote
        self.report("SCH104", f"oracle must be one of: {', '.join(ORACLES)} (got {oracle!r})", value,
                    hint=did_you_mean(str(oracle), ORACLES))
        return scalar("hybrid", value)  # analysis goes on with AgentAnvil's default

    def _required(self, node: MapNode, keys: tuple[str, ...], what: str) -> None:
        for key in keys:
            if node.get(key) is None:
                self.report("SCH101", f"missing required key '{key}' in {what}", node.pairs[0][0] if node.pairs else node,
                            payload=Payload(key=key))

    def _constraints(self, node: MapNode) -> tuple[MapNode, list[Node]]:
        """Native constraints, and the forbidden patterns as forbid policies on every task."""
        self._known(node, CONSTRAINT_KEYS, "constraints")
        pairs: list[tuple[Node, Node]] = []
        forbids: list[Node] = []
        for key, value in node.pairs:
            name = key.value if isinstance(key, ScalarNode) else None
            if name in ("max_latency_ms", "max_tool_calls"):
                pairs.append((key, value))
            elif name == "max_cost_per_interaction_usd":
                pairs.append(entry("max_cost_usd", value, key))
            elif name in ("allowed_tools", "forbidden_patterns"):
                if name == "allowed_tools":
                    pairs.append((key, value))  # the model checks its shape
                    continue
                if not isinstance(value, SeqNode):
                    self.report("SCH103", f"constraints.{name} must be a list of strings", value)
                    continue
                for i, item in enumerate(value.items):
                    if not (isinstance(item, ScalarNode) and isinstance(item.value, str)):
                        self.report("SCH103", f"constraints.{name} must be a list of strings", item)
                    else:
                        rule = mapping([entry("tool_pattern", item)], item)
                        forbids.append(mapping([entry("id", scalar(f"forbidden_patterns[{i}]", item)),
                                                entry("description", scalar("from constraints.forbidden_patterns", item)),
                                                entry("forbid", rule)], item))
        return mapping(pairs, node), forbids


register(AgentAnvil())
