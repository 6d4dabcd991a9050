"""`contractstudio simulate PIPELINE --reply TEXT [--route STEP=ROUTE ...] [--json]`: the path a router reply takes,
and the state at each step; custom routing actions take the route --route names (else their first)."""

from __future__ import annotations

import argparse
import json
import sys

from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, usage_error
from contractstudio.commands.graph import pipelines_of
from contractstudio.reports.graphs import for_terminal
from contractstudio.runtime.route_simulation import Simulation, route_problem, simulate
from contractstudio.safe_text import printable, shown_lines


def render(sim: Simulation) -> str:
    """The simulated path as numbered steps: what is known on arrival, what the step sets, where it goes."""
    lines = [f"pipeline {sim.pipeline}, reply {sim.reply!r}", ""]
    width = max((len(s.step) for s in sim.steps), default=0)
    for i, s in enumerate(sim.steps, 1):
        lines.append(f"{i:>2}. {s.step:<{width}}  [{s.action}]")
        lines.append(f"      known: {', '.join(s.known) or '(nothing)'}")
        if s.missing:
            lines.append(f"      MISSING: {', '.join(s.missing)} (a run fails here)")
        if s.values:
            lines.append("      " + ", ".join(f"{k} = {v!r}" for k, v in s.values.items()))
        elif s.sets and (s.route is not None or sim.outcome != "assertion"):  # a step refused never set anything
            lines.append(f"      sets: {', '.join(s.sets)}")
        if s.note:
            lines.append(f"      {s.note}")
        if s.route is not None:
            lines.append(f"      {s.label} ──▶ {s.target}")
    lines += ["", f"{sim.outcome}: {sim.message}"]
    return shown_lines(lines)


def run(args: argparse.Namespace) -> int:
    """Simulate each pipeline of the file; exit 1 when the reply does not reach an end with all it needs,
    0 when it does or when the path rests on a route a handler chooses at run time (the assumption is printed)."""
    _report, models, stop = pipelines_of(args.pipeline, args.dialect)
    if stop is not None:
        return stop
    routes: dict[str, str] = {}
    for spec in args.route or []:
        step, sep, route = spec.partition("=")
        if not sep or not step.strip() or not route.strip():
            return usage_error(f"--route {spec}: write STEP=ROUTE, e.g. --route triage=urgent")
        routes[step.strip()] = route.strip()
    for step, route in routes.items():
        problem = next((p for m in models if (p := route_problem(m, step, route))), None)
        if problem:
            return usage_error(f"--route {step}={route}: {problem}")
    sims = [simulate(m, args.reply, routes=routes) for m in models]
    if args.json:
        out = [s.to_dict() for s in sims]
        print(printable(json.dumps(out[0] if len(out) == 1 else out, indent=2, ensure_ascii=False), json=True))
    else:
        print(for_terminal("\n\n".join(render(s) for s in sims), sys.stdout.encoding))
    return EXIT_PROBLEM if any(s.fails for s in sims) else EXIT_OK  # an assumed route is printed, not failed
