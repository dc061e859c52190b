"""Flaw counts of synthesized suites on databases nobody here designed (issue 23).

    python benchmarks/synth_audit.py DB_OR_CSV_FOLDER... [--tasks 200] [--seed 0]
        [--work DIR] [--json OUT.json] [--sheet N]

For each source: ``clarisql synth`` into ``--work/<name>`` (a temporary folder by default), then
:func:`clarisql.envs.synth.audit.audit_folder` counts the machine-checkable flaws per category
(join path disagreement, aggregate over an identifier/coordinate/time, group by the aggregated
column, unanswerable with a matching column, typo with a unique nearest value, raw column tokens
in the question, listed answers without an identifier, a list column used as a category, write
tasks naming rows by a non-unique column or giving away the "which table?" answer, tasks about a
helper table such as a calendar, swaps between rows that share nothing or of a measure, one
number written over a range of rows, writes that leave a total of other rows wrong, a noun said
twice over ("the total of the total", "the address for the address"), table or query words
("which invoices row", "without repeats"), a noun in the wrong number ("How many inventory"),
answers that list row keys and nothing else, swaps whose group is named by a number or of a
value the group shares, non-English schema words in an English question, listed answers whose
rows repeat, credit-list columns used as categories, unanswerables a declared foreign key
answers, simulated-user replies that name a column by its identifier or speak SQL). Prints one
table per source and the totals; ``--json`` writes them; ``--sheet N`` also writes each suite's
stratified review sheet with each label's reply (``REVIEW.md``). The sources are paths: fetch
public databases (the Spider family, DySQL-Bench)
outside the repository and pass them here; nothing is downloaded.

Exit status 0 when every flaw count is 0, 1 otherwise (2 for bad input).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sources", nargs="+", help="SQLite files or folders of CSV files")
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", default=None, help="keep each suite in WORK/<name>")
    ap.add_argument("--json", default=None, help="write the counts as JSON")
    ap.add_argument("--sheet", type=int, default=0, help="review sheet of N tasks per suite")
    args = ap.parse_args(argv)

    from clarisql.envs.synth.audit import (
        FLAWS,
        AuditReport,
        audit_folder,
        label_replies,
        review_sheet,
    )
    from clarisql.envs.synth.pipeline import SynthConfig, synthesize
    from clarisql.envs.synth.types import SynthError
    from clarisql.envs.synth.verify import Verifier

    try:
        import wordfreq  # noqa: F401
    except ImportError:
        print(
            "note: wordfreq is not installed: non-english-identifier counts nothing",
            file=sys.stderr,
        )
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="synth-audit-"))
    total = AuditReport()
    out: dict[str, dict] = {}
    for src in args.sources:
        path = Path(src)
        name = path.stem if path.is_file() else path.name
        t0 = time.perf_counter()
        try:
            res = synthesize(
                SynthConfig(sources=[path], out=work / name, tasks=args.tasks, seed=args.seed)
            )
        except SynthError as e:
            print(f"{name}: synth failed: {e}", file=sys.stderr)
            out[name] = {"error": str(e)}
            continue
        report, tasks = audit_folder(res.tasks_path.parent)
        secs = time.perf_counter() - t0
        total.merge(report)
        n = sum(report.tasks.values())
        flaws = {f: dict(report.flaws[f]) for f in FLAWS}
        out[name] = {"tasks": n, "seconds": round(secs, 1), "flaws": flaws}
        found = {f: report.total(f) for f in FLAWS if report.total(f)}
        print(f"{name}: {n} tasks, {secs:.1f} s; flaws: {found or 'none'}")
        for f in found:
            for ex in report.examples[f][:2]:
                print(f"    {f}: {ex}")
        if args.sheet:
            v = Verifier(res.db_path)
            (res.tasks_path.parent / "REVIEW.md").write_text(
                review_sheet(tasks, v, args.sheet, args.seed, replies=label_replies),
                encoding="utf-8",
            )
            v.close()
    print()
    print(f"{'flaw':36s} " + " ".join(f"{c[:14]:>14s}" for c in sorted(total.tasks)) + "  total")
    for f in FLAWS:
        cells = " ".join(f"{total.flaws[f][c]:>14d}" for c in sorted(total.tasks))
        print(f"{f:36s} {cells}  {total.total(f)}")
    tasks_line = " ".join(f"{total.tasks[c]:>14d}" for c in sorted(total.tasks))
    print(f"{'tasks read':36s} {tasks_line}  {sum(total.tasks.values())}")
    print(f"suites in {work}")
    if args.json:
        summary = {
            "sources": out,
            "totals": {f: total.total(f) for f in FLAWS},
            "tasks": dict(Counter(total.tasks)),
        }
        Path(args.json).write_text(json.dumps(summary, indent=1, sort_keys=True), "utf-8")
    return 0 if all(total.total(f) == 0 for f in FLAWS) else 1


if __name__ == "__main__":
    raise SystemExit(main())
