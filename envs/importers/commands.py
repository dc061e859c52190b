"""``clarisql import FORMAT SRC --out OUT``: a thin CLI over :mod:`clarisql.envs.importers`.

Imports nothing heavy at import time (the CLI lists it on every start).
"""

from __future__ import annotations

import argparse
import json


def _import(args: argparse.Namespace) -> int:
    from clarisql.envs.importers import import_dataset

    kw: dict[str, object] = {"files": args.file or None, "limit": args.limit, "link": args.link}
    if args.db_dir:
        kw["db_dir"] = args.db_dir
    if args.format == "bird":
        kw["evidence"] = args.evidence
    if args.format == "cosql":
        kw["clarifications_only"] = args.clarifications_only
    if args.format == "ehrsql":
        if args.db:
            kw["db"] = args.db
        if args.now:
            kw["now"] = args.now
    elif args.db or args.now:
        raise ValueError("--db and --now are for the ehrsql format only")
    report = import_dataset(args.format, args.src, args.out, **kw)
    print(report.summary())
    reasons = report.to_dict()["drop_reasons"]
    if reasons:
        print("dropped: " + json.dumps(reasons) + f" (details in {args.out}/import_report.json)")
    print(f"use it: clarisql eval --suite {args.out}/tasks.jsonl ...")
    return 0


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Register ``import`` on the ``clarisql`` CLI."""
    from clarisql.envs.importers import FORMATS

    p = subparsers.add_parser(
        "import",
        help="convert a Spider, BIRD, CoSQL or EHRSQL folder into a suite (tasks.jsonl + databases)",
        description="Convert a Spider, BIRD, CoSQL or EHRSQL folder into a clarisql suite.",
        epilog=(
            "Writes OUT/tasks.jsonl, OUT/databases/ and OUT/import_report.json. Gold SQL is made\n"
            "sandbox-safe and checked on the data; every dropped record is counted with its reason.\n\n"
            "examples:\n"
            "  clarisql import spider data/spider --out suites/spider --file dev.json\n"
            "  clarisql import ehrsql data/ehrsql --out suites/ehrsql --db-file mimic_iii.sqlite\n"
            "  clarisql eval --suite suites/spider/tasks.jsonl --policy oracle --out runs/spider"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "format", choices=FORMATS, metavar="FORMAT", help="the input format: " + ", ".join(FORMATS)
    )
    p.add_argument(
        "src", metavar="SRC", help="the dataset folder (JSON files and database/ folder)"
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output suite folder (must not hold a tasks.jsonl)",
    )
    p.add_argument(
        "--file",
        action="append",
        metavar="FILE",
        help="a JSON file in SRC to import (repeatable; default: every file of the format)",
    )
    p.add_argument(
        "--db-dir",
        metavar="DIR",
        help="folder holding <db_id>/<db_id>.sqlite (default: SRC/database)",
    )
    p.add_argument("--limit", type=int, metavar="N", help="import at most N records per file")
    p.add_argument(
        "--link",
        action="store_true",
        help="link the databases into OUT/databases instead of copying them (large datasets)",
    )
    p.add_argument(
        "--evidence",
        choices=("utterance", "metadata"),
        default="utterance",
        help="bird: put the evidence hint in the utterance (default) or in metadata only",
    )
    p.add_argument(
        "--clarifications-only",
        action="store_true",
        help="cosql: keep only the clarification (underspecified) tasks",
    )
    p.add_argument(
        "--db-file",
        dest="db",
        metavar="FILE",
        help="ehrsql: the one SQLite database every question runs on",
    )
    p.add_argument(
        "--now", metavar="TIME", help="ehrsql: the fixed 'current time' gold queries are pinned to"
    )
    p.set_defaults(func=_import)


__all__ = ["add_commands"]
