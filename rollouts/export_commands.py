"""CLI of the datasets export: ``clarisql export SUITE_OR_RUN --format hf --out OUT``.

A thin shell over :func:`clarisql.rollouts.export.export_hf`; errors the user can fix (unknown
suite, missing run, non-empty ``--out``, ``datasets`` not installed) print one line and exit 2.

    clarisql export builtin --format hf --out exports/builtin
    clarisql export runs/oracle --format hf --out exports/oracle-episodes
"""

from __future__ import annotations

import argparse
from typing import Any

from clarisql.rollouts.commands import _guard, _suite_kwargs


def _export(args: argparse.Namespace) -> int:
    try:
        import datasets
    except ImportError:
        raise ValueError(
            "the hf format needs the datasets package (pip install 'clarisql[train]')"
        ) from None
    from clarisql.rollouts.export import export_hf

    datasets.disable_progress_bars()  # one summary line instead

    res = export_hf(
        args.source,
        args.out,
        parquet=not args.no_parquet,
        include_system=not args.no_system,
        suite_kwargs=_suite_kwargs(args),
    )
    extra = f", {res.parquet}" if res.parquet else ""
    unit = "task" if res.kind == "suite" else "episode"
    print(f"wrote {res.n_rows} {unit} row(s) to {res.out_dir} (Arrow{extra}, card {res.card})")
    return 0


def add_commands(subparsers: Any) -> None:
    """Register ``export``."""
    p = subparsers.add_parser(
        "export",
        help="write a suite (one row per task) or a run (one row per episode) as a dataset",
        description="Write a suite or a run as a Hugging Face dataset (Arrow, Parquet, card).",
        epilog="examples:\n"
        "  clarisql export builtin --format hf --out exports/builtin\n"
        "  clarisql export runs/oracle --format hf --out exports/oracle-episodes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "source",
        metavar="SUITE_OR_RUN",
        help="suite (builtin, dysql, odutqa, a .jsonl task file) or run folder",
    )
    p.add_argument("--format", choices=["hf"], default="hf", help="hf: Hugging Face datasets")
    p.add_argument("--out", required=True, metavar="DIR", help="new folder for the dataset")
    p.add_argument("--no-parquet", action="store_true", help="only the Arrow files")
    p.add_argument(
        "--no-system",
        action="store_true",
        help="runs: leave out the system prompt (when the run's suite is not available here)",
    )
    p.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="suite data folder (dysql: the DySQL-Bench folder; odutqa: the records)",
    )
    p.add_argument(
        "--db", default=None, metavar="NAME", help="suite database name (dysql: one database)"
    )
    p.add_argument("--tasks-file", default=None, metavar="FILE", help="suite task file (dysql)")
    p.set_defaults(func=_guard("export", _export))
