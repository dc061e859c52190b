"""``clarisql synth``: a thin shell over :func:`clarisql.envs.synth.synthesize`.

    clarisql synth SOURCE... --out DIR [--seed N] [--tasks N] [--llm openai:MODEL@URL]
                   [--mixture well-specified=0.2,clarify=0.2,write=0.1,unanswerable=0.5]
                   [--workers N]

Exit status 0 on success; 2 with one line on stderr for input the user can fix (missing, empty
or corrupt source, CSV that does not parse, no usable column, bad option).
"""

from __future__ import annotations

import argparse
import os
import sys


def _synth(args: argparse.Namespace) -> int:
    from clarisql.envs.synth import SynthError
    from clarisql.envs.synth.pipeline import DEFAULT_MIXTURE, SynthConfig, parse_mixture, synthesize

    try:
        config = SynthConfig(
            sources=args.sources,
            out=args.out,
            tasks=args.tasks,
            seed=args.seed,
            mixture=parse_mixture(args.mixture) if args.mixture else dict(DEFAULT_MIXTURE),
            llm=args.llm,
            workers=args.workers,
        )
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
    return 0


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
        help="openai:MODEL@URL: OrQA's coder / question writer / reviewer loop (default: offline)",
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
        "--mixture",
        default=None,
        metavar="SHARES",
        help="category shares, e.g. well-specified=0.2,clarify=0.2,write=0.1,unanswerable=0.5 "
        "(the default: half unanswerable, as in TrustSQL's test sets)",
    )
    p.set_defaults(func=_synth)
