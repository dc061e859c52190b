"""How many underspecified values could an agent find without asking? (explorers vs a suite)

For every value label of a read task (``not-exist``, ``Error``, ``Unmatch``, ``Missing``) this
finds a column that holds the gold value (the gold tables first, then any table: a district named
in the ``districts`` table, a city in ``cities``), takes that column's distinct values as the
candidate readings (with first rowid and row count; narrowed to the rows whose other column has
a value the utterance names, e.g. one city's districts) and asks each explorer of
:mod:`clarisql.envs.explorers` for its pick given what the user wrote. A label is *resolved*
when some explorer picks the gold, *ambiguous* when >= 2 readings remain that no explorer
separates from it. Values found in no column (a year that names a table) are counted apart.
A task *needs no question* when every value label is resolved and it has no intent label.

    python benchmarks/explorer_audit.py --builtin 0
    python benchmarks/explorer_audit.py --suite DIR   # a synthesized suite (tasks.jsonl + lake.sqlite)
    python benchmarks/explorer_audit.py --name odutqa

The candidate set is the whole column (not only the readings a generator considered), so this is
an independent check of the generators' own explorer checks.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from clarisql.envs.explorers import EXPLORERS, ambiguous, resolved_by, value_stats
from clarisql.envs.tasks import Task, load_tasks

VALUE_KINDS = ("not-exist", "Error", "Unmatch", "Missing")
MAX_VALUES = 5000


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Columns:
    """Text columns of a database and where a value occurs."""

    def __init__(self, db: Path):
        self.conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        self.cols: list[tuple[str, str]] = []
        for (t,) in self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        ):
            for r in self.conn.execute(f"PRAGMA table_info({_q(t)})"):
                self.cols.append((t, r[1]))

    def rows(self, sql: str) -> list[tuple]:
        return self.conn.execute(sql).fetchall()

    def holder(self, value: str, prefer: Sequence[str]) -> tuple[str, str] | None:
        order = [c for c in self.cols if c[0] in prefer] + [
            c for c in self.cols if c[0] not in prefer
        ]
        for t, c in order:
            try:
                hit = self.rows(
                    f"SELECT 1 FROM {_q(t)} WHERE {_q(c)} = ? LIMIT 1".replace("?", _lit(value))
                )
            except sqlite3.Error:
                continue
            if hit:
                return t, c
        return None

    def narrowing(self, t: str, c: str, text: str) -> str:
        """A condition on another column of ``t`` whose value the utterance names (the longest
        such value: "one of Brookfield's districts" narrows the districts to Brookfield's)."""
        best = ""
        cond = ""
        low = text.casefold()
        for t2, c2 in self.cols:
            if t2 != t or c2 == c:
                continue
            vals = self.rows(f"SELECT DISTINCT {_q(c2)} FROM {_q(t)} LIMIT 201")
            if len(vals) > 200:
                continue
            for (v,) in vals:
                if isinstance(v, str) and len(v) > len(best) and v.casefold() in low:
                    best, cond = v, f"{_q(c2)} = {_lit(v)}"
        return cond

    def values(self, t: str, c: str, where: str = "") -> list:
        w = f" AND {where}" if where else ""
        return [
            r[0]
            for r in self.rows(
                f"SELECT DISTINCT {_q(c)} FROM {_q(t)} WHERE {_q(c)} IS NOT NULL{w} "
                f"ORDER BY 1 LIMIT {MAX_VALUES}"
            )
        ]


def _lit(v: object) -> str:
    return "'" + str(v).replace("'", "''") + "'"


def audit(tasks: Sequence[Task], db: Path) -> dict:
    cols = Columns(db)
    per_kind: dict[str, Counter] = {k: Counter() for k in VALUE_KINDS}
    by_explorer: Counter = Counter()
    no_question = underspecified = 0
    for t in tasks:
        if t.writable or not t.underspecs:
            continue
        underspecified += 1
        all_resolved = not any(u.label.kind == "intent" for u in t.underspecs)
        for u in t.underspecs:
            kind = u.label.kind
            if kind not in per_kind:
                continue
            c = per_kind[kind]
            c["labels"] += 1
            where = cols.holder(u.value, t.metadata.get("tables", []))
            if where is None:
                c["not found"] += 1
                all_resolved = False
                continue
            narrow = cols.narrowing(*where, t.utterance)
            vals = cols.values(*where, narrow)
            if u.value not in vals:
                vals = [u.value, *vals]
            cands = value_stats(cols.rows, _q(where[0]), _q(where[1]), vals, narrow)
            surface = u.label.content or None
            hits = resolved_by(surface, cands, u.value)
            if hits:
                c["resolved"] += 1
                by_explorer.update(hits)
            else:
                all_resolved = False
            if ambiguous(surface, cands, u.value):
                c["ambiguous"] += 1
        no_question += all_resolved
    return {
        "underspecified read tasks": underspecified,
        "need no question": no_question,
        "per kind": {k: dict(v) for k, v in per_kind.items() if v},
        "resolved by explorer": {k: by_explorer[k] for k in EXPLORERS},
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--builtin", type=int, default=None, metavar="SEED")
    ap.add_argument("--suite", default=None, help="a folder with tasks.jsonl and one .sqlite")
    ap.add_argument("--name", default=None, help="a registered suite with one database (odutqa)")
    ap.add_argument("--cache", default=None)
    args = ap.parse_args(argv)
    if args.builtin is not None:
        from clarisql.envs.suites.builtin import builtin_suite

        with tempfile.TemporaryDirectory() as tmp:
            s = builtin_suite(args.builtin, args.cache or tmp)
            res = audit(s.tasks, s.databases["builtin"].path)
    elif args.name:
        from clarisql.envs.suites import load_suite

        s = load_suite(args.name)
        (spec,) = s.databases.values()
        res = audit(s.tasks, spec.path)
    elif args.suite:
        folder = Path(args.suite)
        db = next(folder.glob("*.sqlite"))
        res = audit(load_tasks(folder / "tasks.jsonl"), db)
    else:
        ap.error("give --builtin SEED or --suite DIR")
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
