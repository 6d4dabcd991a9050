"""`contractstudio spans EXPORT`: production calls read back from an OTLP JSON or Phoenix span export.

Lists each contracted call found (contract, outcome, where in the file); `--traces DIR` writes each one's trace
(replayable offline, opened by the studio's debugger), `--dataset OUT` writes them as eval rows with their replies
scripted, `--check CONTRACT` judges the GenAI calls of other applications with a contract: every failing condition
of each, exit 1 when one was refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, files_refused, usage_error
from contractstudio.safe_text import printable, redact_text


def add_parser(sub: Any) -> None:
    s = sub.add_parser("spans", help="contracted calls (and other GenAI calls) read from an OTLP JSON or Phoenix export")
    s.add_argument("export", metavar="EXPORT", help="an OTLP JSON export (one request, or JSON Lines of them) or "
                   "Phoenix's span export ({\"data\": [...]})")
    s.add_argument("--traces", metavar="DIR", help="write each contracted call's trace to DIR (replay it, open it in the studio)")
    s.add_argument("--dataset", metavar="OUT", help="write the contracted calls as eval rows: input and scripted replies")
    s.add_argument("--check", metavar="CONTRACT", help="check other applications' GenAI calls against this contract")
    s.add_argument("--name", metavar="NAME", help="with --check: the contract's name in a file of several")
    s.add_argument("--trust", action="store_true", help="with --check: trust the contract's folder (python: hooks)")
    s.add_argument("--json", action="store_true", help="print what was found as JSON")


def run(args: argparse.Namespace) -> int:
    from contractstudio.runtime.span_import import ExportError, contracted_calls, foreign_calls, read_export
    from contractstudio.storage.atomic import target_problem
    from contractstudio.storage.paths import folder_problem

    if (refused := files_refused([args.export, args.check])) is not None:
        return refused
    if args.traces and (problem := folder_problem(args.traces)):
        return usage_error(f"cannot write the traces: {problem}")
    if args.dataset and (problem := target_problem(args.dataset)):
        return usage_error(f"cannot write the dataset: {problem}")
    try:
        spans = read_export(Path(args.export))
    except ExportError as err:
        return usage_error(redact_text(str(err)))
    calls = contracted_calls(spans)
    written = write_traces(calls, Path(args.traces)) if args.traces else {}
    if args.dataset:
        write_dataset(calls, Path(args.dataset))
    verdicts: list[Any] | None = None
    if args.check:
        checked = check_calls(args, foreign_calls(spans))
        if isinstance(checked, int):
            return checked
        verdicts = checked
    report(args, calls, written, verdicts)
    return EXIT_PROBLEM if verdicts and any(not v.accepted for v in verdicts) else EXIT_OK


def write_traces(calls: list[Any], folder: Path) -> dict[int, Path]:
    """Each call that has its trace, as DIR/CONTRACT.OUTCOME.SPAN.trace.jsonl; {call index: path}."""
    from contractstudio.storage.atomic import write_named
    from contractstudio.storage.paths import make_folder

    written: dict[int, Path] = {}
    for n, call in enumerate(calls):
        if call.trace is None:
            continue
        make_folder(folder)
        write_named(folder, call.file_name(), call.trace.to_jsonl())
        written[n] = folder / call.file_name()
    return written


def write_dataset(calls: list[Any], out: Path) -> int:
    from contractstudio.runtime.span_import import dataset_row
    from contractstudio.storage.atomic import write_atomic

    rows = [row for call in calls if (row := dataset_row(call)) is not None]
    write_atomic(out, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    return len(rows)


def check_calls(args: argparse.Namespace, foreign: list[Any]) -> list[Any] | int:
    from contractstudio.runtime.api import load_contract
    from contractstudio.runtime.choosing import ChoiceError
    from contractstudio.runtime.errors import ContractError
    from contractstudio.runtime.span_checks import check
    from contractstudio.trust import Trust

    path = Path(args.check)
    try:
        contract = load_contract(path, name=args.name, trust=Trust.for_command([path], args.trust).allows(path))
    except ChoiceError as err:
        return usage_error(str(err))
    except ContractError as err:
        print(printable(f"contractstudio: {err}", lines=True), file=sys.stderr)
        return EXIT_PROBLEM
    return [check(contract, call) for call in foreign]


def report(args: argparse.Namespace, calls: list[Any], written: dict[int, Path], verdicts: list[Any] | None) -> None:
    if args.json:
        doc: dict[str, Any] = {"calls": [{"contract": c.contract, "outcome": c.outcome, "span": c.span.where,
                                          "trace": str(written[n]) if n in written else None, "problem": c.problem}
                                         for n, c in enumerate(calls)]}
        if verdicts is not None:
            doc["checked"] = [{"span": v.call.span.where, "model": v.call.model, "accepted": v.accepted,
                               "failures": v.failures} for v in verdicts]
        print(printable(redact_text(json.dumps(doc, indent=2, ensure_ascii=False)), json=True))
        return
    for n, call in enumerate(calls):
        where = f" -> {written[n]}" if n in written else (f" ({call.problem})" if call.problem else "")
        print(printable(redact_text(f"{call.span.where}: {call.contract}: {call.outcome}{where}")))
    if not calls and verdicts is None:
        print("no contracted call in the export")
    if args.dataset:
        print(printable(f"dataset written to {args.dataset}"))
    for verdict in verdicts or ():
        head = f"{verdict.call.span.where}: {verdict.call.model or 'model'}: "
        print(printable(redact_text(head + ("accepted" if verdict.accepted else f"refused, {len(verdict.failures)} "
                                            f"failing condition(s)"))))
        for failure in verdict.failures:
            print(printable(redact_text(f"  {failure}")))
    if verdicts is not None and not verdicts:
        print("no GenAI call of another application in the export")
