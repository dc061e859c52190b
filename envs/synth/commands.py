"""``clarisql synth``: a thin shell over :func:`clarisql.envs.synth.synthesize`.

    clarisql synth SOURCE... --out DIR [--seed N] [--tasks N] [--llm openai:MODEL@URL]
                   [--mixture well-specified=0.2,clarify=0.2,write=0.1,unanswerable=0.5]
                   [--workers N] [--describe FILE] [--audit N] [--withhold N]

Exit status 0 on success; 2 with one line on stderr for input the user can fix (missing, empty
or corrupt source, CSV that does not parse, no usable column, bad option).
"""

from __future__ import annotations

import argparse
import os
import sys


def _synth(args: argparse.Namespace) -> int:
    from clarisql.envs.synth.pipeline import DEFAULT_MIXTURE, SynthConfig, parse_mixture, synthesize
    from clarisql.envs.synth.types import SynthError

    try:
        config = SynthConfig(
            sources=args.sources,
            out=args.out,
            tasks=args.tasks,
            seed=args.seed,
            mixture=parse_mixture(args.mixture) if args.mixture else dict(DEFAULT_MIXTURE),
            llm=args.llm,
            workers=args.workers,
            describe=args.describe,
            withhold=args.withhold,
        )
        if args.audit is not None and args.audit < 1:
            raise SynthError(f"--audit must be at least 1, got {args.audit}")
        result = synthesize(config)
    except (SynthError, OSError) as e:
        if os.environ.get("CLARISQL_DEBUG"):
            raise
        msg = (
            e
            if isinstance(e, SynthError)
            else f"{getattr(e, 'filename', '') or 'output'}: {e.strerror or e}"
        )
        print(f"clarisql synth: error: {msg}".rstrip(), file=sys.stderr)
        return 2
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    made = ", ".join(f"{k} {v}" for k, v in result.made.items())
    print(f"{len(result.tasks)} tasks ({made}) -> {result.tasks_path}")
    print(f"database: {result.db_path}; report: {result.card_path}")
    if result.shortfalls:
        print(f"shortfalls: {len(result.shortfalls)} (see {result.card_path.name})")
    if args.audit:
        path = _audit(result, args.audit, args.seed)
        print(f"audit: {path}")
    return 0


def _audit(result: object, n: int, seed: int) -> str:
    """Write ``AUDIT.md``: the flaw counts per category and a stratified review sheet."""
    from clarisql.envs.synth.audit import FLAWS, Auditor, AuditReport, review_sheet
    from clarisql.envs.synth.verify import Verifier

    v = Verifier(result.db_path, max_rows=5000)  # type: ignore[attr-defined]
    try:
        report = AuditReport()
        auditor = Auditor(result.lake, v)  # type: ignore[attr-defined]
        for t in result.tasks:  # type: ignore[attr-defined]
            auditor.audit(t, report)
        cats = sorted(report.tasks)
        lines = [
            "# Audit",
            "",
            "Machine-checked flaws per category (0 is the goal; see docs/synth.md).",
            "",
            "| flaw | " + " | ".join(cats) + " | total |",
            "|---|" + "---|" * (len(cats) + 1),
        ]
        for f in FLAWS:
            cells = " | ".join(str(report.flaws[f][c]) for c in cats)
            lines.append(f"| {f} | {cells} | {report.total(f)} |")
        lines.append(
            "| tasks | " + " | ".join(str(report.tasks[c]) for c in cats) + " | "
            f"{sum(report.tasks.values())} |"
        )
        for f in FLAWS:
            for ex in report.examples[f]:
                lines.append(f"- {f}: {ex}")
        lines += ["", review_sheet(result.tasks, v, n, seed, replies=_replies)]  # type: ignore[attr-defined]
    finally:
        v.close()
    path = result.tasks_path.parent / "AUDIT.md"  # type: ignore[attr-defined]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _replies(task: object) -> list[str]:
    """What the simulator replies to each gold label (the label-exact reply of the Fixed
    simulator, as the suite is played), and the instruction a write task's user follows."""
    from clarisql.envs.synth.audit import label_replies

    out = label_replies(task)  # type: ignore[arg-type]
    if getattr(task, "instruction", None):
        out.append(f"instruction: {task.instruction}")  # type: ignore[attr-defined]
    return out


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "synth",
        help="synthesize a task suite from SQLite files and/or folders of CSV files",
        description="Synthesize a task suite from SQLite files and folders of CSV files.",
        epilog="Every task is checked on the data; DIR gets lake.sqlite, tasks.jsonl\n"
        "and SUITE.md.\n\n"
        "examples:\n"
        "  clarisql synth open-data/ warehouse.sqlite --out suites/mine --tasks 1000 --seed 0\n"
        "  clarisql synth data/ --out suites/mine "
        "--mixture well-specified=0.4,clarify=0.3,write=0.1,unanswerable=0.2\n"
        "  clarisql eval --suite suites/mine/tasks.jsonl --policy oracle --out runs/mine",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "sources", nargs="+", metavar="SOURCE", help="an SQLite file or a folder of CSV files"
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder (lake.sqlite, tasks.jsonl, SUITE.md)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed; the same sources, seed and options give the same tasks (default: 0)",
    )
    p.add_argument(
        "--tasks",
        type=int,
        default=200,
        metavar="N",
        help="number of tasks in the suite (default: %(default)s)",
    )
    p.add_argument(
        "--llm",
        default=None,
        metavar="SPEC",
        help="openai:MODEL@URL: OrQA's coder, and the question writer and reviewer for every "
        "task of every category (default: offline); an endpoint that does not answer is an "
        "error",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="threads running verification queries (default: the cores, at most 4); "
        "the output does not depend on it",
    )
    p.add_argument(
        "--describe",
        default=None,
        metavar="FILE",
        help="data dictionary (CSV: column,description[,table]; or YAML): names columns in "
        "questions and is shown to the agent with the schema",
    )
    p.add_argument(
        "--audit",
        type=int,
        default=None,
        metavar="N",
        help="also write AUDIT.md: flaw counts per category and a stratified review sheet "
        "of N tasks (question, gold SQL, result, replies)",
    )
    p.add_argument(
        "--withhold",
        type=int,
        default=None,
        metavar="N",
        help="columns to drop from the suite's copy of the data (lake.sqlite, never the "
        "sources) for column-related requests to ask (default: one per 25 unanswerable "
        "tasks, at most 12, where the data allows; 0: none)",
    )
    p.add_argument(
        "--mixture",
        default=None,
        metavar="SHARES",
        help="category shares, e.g. well-specified=0.2,clarify=0.2,write=0.1,unanswerable=0.5 "
        "(the default: half unanswerable, as in TrustSQL's test sets)",
    )
    p.set_defaults(func=_synth)
