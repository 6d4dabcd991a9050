"""What one pipeline action needs, guarantees, and how it branches: the entries of every action catalog."""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import Any

from contractstudio.documents.models import ActionContract, Step

SETTINGS = "settings."  # a requires_step entry 'settings.<key>' names a key of the pipeline's settings


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """What one action needs before it runs, guarantees after it ran, and which step keys are its edges."""

    name: str
    requires_state: tuple[str, ...] = ()
    requires_any_state: tuple[tuple[str, ...], ...] = ()  # one field of each group must be set
    # Keys the step itself must carry; 'a|b|settings.c' means one of them ('settings.c': a pipeline setting).
    requires_step: tuple[str, ...] = ()
    ensures_state: tuple[str, ...] = ()
    why: str = ""  # the reason for the contract, shown in docs/actions.md
    builtin: bool = True
    # How the step picks one of its on_<route> targets: 'prefix' (the first `<route>_prefix` the
    # model's reply starts with), 'decision' (the `decision` value of the JSON reply), '' (its handler).
    routing: str = ""
    route_state: tuple[str, ...] = ()  # (field set to the route taken, field set to the payload) by a router
    branches: tuple[str, ...] = ()  # step keys, besides next and on_*, whose value is a step the action jumps to
    returns_to: str = ""  # an action whose steps this one jumps back to (a merge back to its fork)
    ensures_from: tuple[str, ...] = ()  # (list key, item key): the state fields a step's configuration says it sets
    # (key, item key): state fields a step's configuration says it reads, tolerating them empty (call_model's
    # user_parts.<part>.source); a name nothing can set is then a typo that renders as empty text (PIP205)
    reads_from: tuple[str, ...] = ()
    derived_sources: tuple[str, ...] = ()  # names such a source may also give: values the engine computes on reading
    # (key, value) the runtime fills in when the pipeline leaves a key out ('settings.c' as in requires_step):
    # a key with a default is never missing (PIP203)
    defaults: tuple[tuple[str, object], ...] = ()
    # A counter per step that bounds a loop: (setting, its default, route while under it, route once reached),
    # e.g. LocalAI-RAG's loop_guard: on_allow while its count < settings.max_turn_loops (4), then on_deny
    bound: tuple[str, int, str, str] | None = None
    # What the runtime does instead when the state requirements are unmet, when it goes on (LocalAI-RAG's
    # expand_dependency_tree without seed nodes records 'no_seeds' and expands nothing): the requirements are then
    # soft: `check` warns (PIP201/202), the runner and `simulate` skip the step's work, say so, and go on.
    # '': they are hard (the run stops there with PipelineAssertionError).
    skips: str = ""
    # The runtime checks the router step itself on every run, whatever the reply (LocalAI-RAG's routers): an empty
    # route prefix or a missing on_other raises every time, so both are errors (RTE305, RTE307).
    strict_router: bool = False

    def default_of(self, key: str) -> object | None:
        """The runtime's default for a step key or 'settings.<key>', or None when it has none."""
        return next((value for name, value in self.defaults if name == key), None)

    def unmet_step_keys(self, keys: Container[str], settings: Mapping[str, Any]) -> list[str]:
        """The `requires_step` entries neither the step (`keys`), the pipeline's settings nor the runtime's
        defaults give: the one answer for PIP203, the runner's assertion and `simulate`."""
        def given(option: str) -> bool:
            if self.default_of(option) is not None:
                return True
            if option.startswith(SETTINGS):
                return settings.get(option[len(SETTINGS):]) is not None
            return option in keys

        return [need for need in self.requires_step if not any(given(o) for o in need.split("|"))]

    def router_problems(self, prefixes: list[tuple[str, str]], keys: Container[str]) -> list[tuple[str, str]]:
        """(step key, why) for each thing a strict router's runtime refuses on every run; [] for any other action."""
        if not self.strict_router:
            return []
        found = [(f"{route}_prefix", f"route '{route}' has an empty prefix") for route, prefix in prefixes if not prefix.strip()]
        if "on_other" not in keys:
            found.append(("on_other", "it has no on_other (no implicit next for a reply no prefix matches)"))
        return found

    @classmethod
    def declared(cls, name: str, contract: ActionContract) -> ActionSpec:
        """An action contract from a file's `actions:` block."""
        return cls(
            name,
            tuple(contract.requires_state),
            tuple(tuple(g) for g in contract.requires_any_state if g),
            tuple(contract.requires_step),
            tuple(contract.ensures_state),
            contract.description or "",
            builtin=False,
        )

    def requirement_text(self) -> str:
        """A short human summary of the requirements, for messages and docs."""
        parts = list(self.requires_state) + [" or ".join(g) for g in self.requires_any_state]
        return ", ".join(parts) or "nothing"

    def read_by(self, step: Step) -> list[tuple[tuple[str | int, ...], str]]:
        """(path within the step, field) for each state field this step's configuration names as a source to read."""
        if not self.reads_from:
            return []
        key, item_key = self.reads_from
        items: Any = (step.model_extra or {}).get(key)
        entries = items.items() if isinstance(items, dict) else enumerate(items) if isinstance(items, list) else ()
        return [((key, part, item_key), item[item_key]) for part, item in entries
                if isinstance(item, dict) and isinstance(item.get(item_key), str)]

    def ensured_by(self, step: Step) -> list[str]:
        """State fields this step sets because its configuration names them (set_variables' `rules[].set`)."""
        if not self.ensures_from:
            return []
        items: Any = (step.model_extra or {}).get(self.ensures_from[0])
        if not isinstance(items, list):
            return []
        return [i[self.ensures_from[1]] for i in items if isinstance(i, dict) and isinstance(i.get(self.ensures_from[1]), str)]
