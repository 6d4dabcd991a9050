"""`contractstudio eval TARGET --data FILE`: a contract run (or a pipeline simulated) over a dataset.

Progress goes to stderr (rich's live bar on a terminal, a plain line every tenth of the
run otherwise); the summary (text or --json) to stdout. Exit 0 when the run
completed, 1 when the file has errors, when no row ran or every row that ran failed
on transport (one line on stderr says which), or the success rate is under --fail-under,
2 for bad usage, 130 when interrupted (finished rows are in --out: --resume).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, usage_error
from contractstudio.safe_text import printable
from contractstudio.storage.atomic import target_problem
from contractstudio.storage.paths import folder_problem, input_problem
from contractstudio.trust import Trust

if TYPE_CHECKING:
    from rich.progress import Progress

MAX_BAD_ROWS_PRINTED = 20
BAR_WIDTH = 24


def add_parser(sub: Any) -> None:
    """The `eval` subcommand's options (called by cli.build_parser): EvalConfig's, made from its fields, and the CLI's own."""
    v = sub.add_parser("eval", help="run a contract (or simulate a pipeline) over a dataset: rates, failures, cost")
    v.add_argument("target", metavar="FILE", help="a contract or pipeline file")
    add_config_options(v)
    gate = v.add_mutually_exclusive_group()
    gate.add_argument("--fail-under", type=float, metavar="RATE",
                      help="exit 1 unless the success rate is surely at least RATE (0-1): its 95%% interval's lower bound")
    gate.add_argument("--fail-under-point", type=float, metavar="RATE",
                      help="exit 1 when the success rate itself (no interval) is below RATE (0-1)")
    v.add_argument("--stop-when-decided", action="store_true",
                   help="stop as soon as a sequential test (SPRT) decides the --fail-under gate either way; "
                        "says how many rows and how much money that saved")
    v.add_argument("--sweep", metavar="CONDITION",
                   help="with --judge: move CONDITION's numeric threshold over the labelled rows; a table of false fails "
                        "against false passes and the threshold --objective chooses")
    v.add_argument("--objective", default="balanced", metavar="OBJ",
                   help="what --sweep minimises: balanced (false fails + false passes, the default), fewest-false-passes, "
                        "fewest-false-fails, or cost:R (a false pass costs R false fails)")
    v.add_argument("--write-threshold", action="store_true",
                   help="with --sweep: write the chosen threshold into the file (the editor's quick fix)")
    v.add_argument("--otlp", metavar="URL", help="send each row's OpenTelemetry spans to this OTLP/HTTP endpoint "
                   "(as OTEL_EXPORTER_OTLP_ENDPOINT does; needs the otel extra)")
    v.add_argument("--json", action="store_true", help="print the summary as JSON")
    v.add_argument("--quiet", action="store_true", help="no progress output")
    v.add_argument("--trust", action="store_true", help="trust the file's folder: python: hooks, keys where it says")


class _Implies(argparse.Action):
    """An option's value, and the value of another field it implies (--replay RESULTS: the replay mode)."""

    def __init__(self, *args: Any, implies: tuple[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.implies = implies

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, *self.implies)


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """A flag per EvalConfig field that has one (evaluation/options.py): the field's name, type and default, the flag's
    option, help and choices; the flags of one group exclude each other."""
    from contractstudio.evaluation.options import EvalConfig, flags_of

    hints = typing.get_type_hints(EvalConfig)
    groups: dict[str, Any] = {}
    for f in dataclasses.fields(EvalConfig):
        for flag in flags_of(f):
            if flag.group is not None and flag.group not in groups:
                groups[flag.group] = parser.add_mutually_exclusive_group()
            where: Any = parser if flag.group is None else groups[flag.group]
            default = None if f.default is dataclasses.MISSING else f.default
            if flag.switch:
                where.add_argument(flag.name, dest=f.name, action="store_const", const=flag.const, default=default,
                                   help=flag.help)
                continue
            kind = next(t for t in (typing.get_args(hints[f.name]) or (hints[f.name],)) if t is not type(None))
            shown = f" (default {default})" if default is not None else ""
            more: dict[str, Any] = {"action": _Implies, "implies": flag.implies} if flag.implies else {}
            where.add_argument(flag.name, dest=f.name, type=kind, metavar=flag.metavar, choices=flag.choices,
                               default=default, required=f.default is dataclasses.MISSING, help=flag.help + shown, **more)


def config_values(args: argparse.Namespace) -> dict[str, Any]:
    """The EvalConfig fields the CLI's flags gave (each flag's dest is its field)."""
    from contractstudio.evaluation.options import EvalConfig, flags_of

    return {f.name: getattr(args, f.name) for f in dataclasses.fields(EvalConfig) if flags_of(f)}


class ProgressView:
    """rich's live bar on a terminal (redrawn at most 10 times a second), plain lines every tenth of the run otherwise."""

    def __init__(self, stream: Any, *, quiet: bool) -> None:
        self.stream = stream
        self.quiet = quiet
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.drawn = 0.0
        self.next_line = 0.1
        self.bad_printed = 0
        self.bar: Progress | None = None  # started on the first row, on a terminal only

    def __call__(self, kind: str, payload: Any, progress: Any) -> None:
        from contractstudio.runtime.trace import redact

        if kind == "bad_row":
            if self.bad_printed < MAX_BAD_ROWS_PRINTED:
                self._print(printable(redact(f"contractstudio: {payload} (skipped)")))
            elif self.bad_printed == MAX_BAD_ROWS_PRINTED:
                self._print("contractstudio: more bad rows skipped (the summary counts them)")
            self.bad_printed += 1
            return
        if self.quiet:
            return
        if self.tty:
            now = time.monotonic()
            if kind == "tick" or now - self.drawn >= 0.1 or progress.done == progress.planned:
                self.drawn = now
                self._draw(progress)
        elif kind == "record" and progress.planned and progress.done >= self.next_line * progress.planned:
            while self.next_line * progress.planned <= progress.done:
                self.next_line += 0.1
            print("eval: " + self.line(progress), file=self.stream, flush=True)

    @staticmethod
    def line(p: Any) -> str:
        """Rows done, rate, ETA, running success rate and spend."""
        share = p.done / p.planned if p.planned else 1.0
        eta = p.eta
        parts = [f"{p.done}/{p.planned} rows ({100 * share:.0f}%)", f"{p.rate:.1f} rows/s",
                 f"ETA {eta:.0f} s" if eta is not None else "ETA -",
                 f"ok {100 * p.successful / p.done:.1f}%" if p.done else "ok -", f"${p.cost:.4f}"]
        return "  ".join(parts)

    def _draw(self, p: Any) -> None:
        if self.bar is None:
            from rich.console import Console  # loaded when a terminal shows a run, not by every command
            from rich.progress import BarColumn, Progress, TextColumn

            # refreshed by this view, not rich's thread: redraws follow the rows; stdout (the summary) is left alone
            console = Console(file=self.stream, force_terminal=True, highlight=False)
            self.bar = Progress(BarColumn(bar_width=BAR_WIDTH), TextColumn("{task.fields[line]}", markup=False),
                                console=console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False)
            self.task = self.bar.add_task("eval", total=p.planned or None, line="")
            self.bar.start()
        self.bar.update(self.task, completed=p.done, total=max(p.planned, p.done) or None, line=self.line(p))
        self.bar.refresh()

    def _print(self, text: str) -> None:
        """A line of its own: above the live bar while it is drawn."""
        if self.bar is not None:
            self.bar.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.stream)

    def finish(self) -> None:
        """Leave the last frame of the bar on the terminal."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _config(args: argparse.Namespace) -> Any:
    from contractstudio.evaluation.evaluate import EvalConfig
    from contractstudio.runtime.python_classes import python_target

    target = python_target(args.target)  # path/module.py:ClassName: a contracted Python class
    path = target[0] if target is not None else Path(args.target)
    return EvalConfig(  # the fields without a flag of their own (options.py says how the CLI sets each)
        target=path, name=target[1] if target is not None else None,
        trust=Trust.for_command([path], args.trust).allows(path),  # the file's own folder decides
        stop_when_decided=_gate(args) if args.stop_when_decided else None, **config_values(args))


def _gate(args: argparse.Namespace) -> float | None:
    """The rate the run must reach (--fail-under or --fail-under-point), or None."""
    return args.fail_under if args.fail_under is not None else args.fail_under_point


def _usage(args: argparse.Namespace) -> str | None:
    """What is wrong with the options, before anything runs."""
    from contractstudio.runtime.python_classes import python_target

    target = python_target(args.target)  # path/module.py:ClassName names the file before the colon
    resumed = args.out if args.resume and args.out and os.path.lexists(args.out) else None  # read before it is appended to
    read = [target[0] if target is not None else args.target, args.data, args.replay, args.baseline, resumed]
    if (problem := next((p for f in read if f and (p := input_problem(f))), None)) is not None:
        return problem  # one rule for every file argument (storage/paths.py): a FIFO or a folder is never opened
    if args.concurrency < 1:
        return "--concurrency must be at least 1"
    from contractstudio.evaluation.limits import limit_problem

    problem = limit_problem("rpm", args.rpm) or limit_problem("tpm", args.tpm)
    if problem:
        return problem
    for name in ("limit", "sample"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            return f"--{name} must be positive"
    for name in ("fail_under", "fail_under_point"):
        if getattr(args, name) is not None and not 0 <= getattr(args, name) <= 1:
            return f"--{name.replace('_', '-')} is a rate between 0 and 1"
    if (args.sweep or args.write_threshold) and args.mode != "judge":
        return "--sweep and --write-threshold measure a condition against labelled outputs: give --judge"
    if args.write_threshold and not args.sweep:
        return "--write-threshold writes the threshold --sweep CONDITION chooses: give --sweep"
    from contractstudio.evaluation.sweep import objective_problem

    if args.sweep and (problem := objective_problem(args.objective)):
        return problem
    if args.stop_when_decided and _gate(args) is None:
        return "--stop-when-decided decides a gate: give it --fail-under RATE (or --fail-under-point RATE)"
    if args.stop_when_decided and not 0 < (_gate(args) or 0) < 1:
        return "--stop-when-decided decides a gate strictly between 0 and 1 (a rate of 1 is decided by the first failure)"
    if args.stop_when_decided and not 0 < args.decide_margin < 0.5:
        return "--decide-margin is a rate between 0 and 0.5 (exclusive)"
    if args.resume and not args.out:
        return "--resume needs --out RESULTS.jsonl (the file to continue)"
    if args.out and (problem := target_problem(args.out)):  # the rule of every output path: no folder is created
        return f"cannot write the results: {problem}"
    if args.trace_dir and (problem := folder_problem(args.trace_dir)):  # checked now, made when the first trace is written
        return f"cannot write the traces: {problem}"
    if args.address and args.engine != "ray":
        return "--address is for --engine ray"
    if args.structured and args.replay:
        return "--structured does not go with --replay: a replay asks in the modes its recording used"
    if args.workers is not None and (args.workers < 1 or args.engine != "local"):
        return "--workers must be at least 1" if args.workers < 1 else "--workers is for the local engine (Ray places its own)"
    return None


def run(args: argparse.Namespace) -> int:
    from contractstudio.evaluation.dataset import DatasetError
    from contractstudio.evaluation.evaluate import evaluate
    from contractstudio.evaluation.ray_engine import RayMissing
    from contractstudio.evaluation.results import ResultsError
    from contractstudio.runtime.errors import ContractError, ModelError
    from contractstudio.runtime.trace import redact

    problem = _usage(args)
    if problem is not None:
        return usage_error(problem)
    view = ProgressView(sys.stderr, quiet=args.quiet)
    try:
        outcome = evaluate(_config(args), on_progress=view)
    except (DatasetError, ResultsError, ModelError) as err:
        return usage_error(redact(str(err)))
    except ContractError as err:
        print(printable(f"contractstudio: {redact(str(err))}", lines=True), file=sys.stderr)
        return EXIT_PROBLEM
    except OSError as err:  # a full disk: the rows written so far stay in the file, whole
        print(printable(f"contractstudio: could not write {err.filename or args.out}: {err.strerror or err}"), file=sys.stderr)
        return EXIT_PROBLEM
    except RayMissing as err:  # only Ray's own absence: another import error is a bug, reported as one
        return usage_error(str(err))
    finally:
        view.finish()
    summary = outcome.summary
    if args.sweep:
        from contractstudio.evaluation.sweep import SweepError, sweep_file

        try:
            summary.sweep = sweep_file(_config(args), args.sweep, args.objective, write=args.write_threshold)
        except SweepError as err:
            return usage_error(str(err))
    if args.json:
        doc: dict[str, Any] = {"summary": summary.as_json()}
        if outcome.comparison is not None:
            doc["baseline"] = outcome.comparison.as_json()
        doc["bad_rows"] = [{"row": b.number, "message": b.message} for b in outcome.bad_rows]
        if outcome.out is not None:
            doc["results"] = str(outcome.out)
        print(printable(redact(json.dumps(doc, indent=2, ensure_ascii=False, default=str)), json=True))
    else:
        from contractstudio.evaluation.run_summary import summary_text

        print(printable(redact(summary_text(summary)), lines=True))
        if summary.sweep is not None:
            from contractstudio.evaluation.sweep import render as render_sweep

            print(printable(redact(render_sweep(summary.sweep)), lines=True))
        if outcome.comparison is not None:
            from contractstudio.evaluation.compare import render as render_comparison

            print(printable(redact(render_comparison(outcome.comparison)), lines=True))
        if summary.sequential is not None:
            from contractstudio.evaluation.summary import sequential_text

            print(printable(sequential_text(summary.sequential)))
        if outcome.out is not None:
            print(printable(f"results: {outcome.out}"))
    if outcome.interrupted:
        print(printable("interrupted" + (f": finished rows are in {outcome.out}; run again with --resume" if outcome.out else "")),
              file=sys.stderr)
        return 130
    from contractstudio.evaluation.summary import nothing_judged

    empty = nothing_judged(summary)
    if empty is not None:
        print(f"contractstudio: eval failed: {empty}", file=sys.stderr)
        return EXIT_PROBLEM
    from contractstudio.evaluation.summary import gate_failure

    gate = _gate(args)
    failure = gate_failure(summary, gate, point=args.fail_under_point is not None) if gate is not None else None
    if failure is not None:
        print(f"contractstudio: eval failed: {failure}", file=sys.stderr)
        return EXIT_PROBLEM
    return EXIT_OK


# The process may end without the interpreter's teardown (cli.entry, exits.exit_now): `evaluate` has flushed, fsynced
# and closed the results file and the reply cache before `run` returns; the local engine's loop thread has been
# joined and its workers told to stop; the warm process exits when its socket closes with this process; Ray's
# shutdown is an exit handler, which exit_now runs.
QUICK_EXIT = True
