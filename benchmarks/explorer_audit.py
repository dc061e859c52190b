"""How many underspecified values could an agent find without asking? (explorers vs a suite)

For every value label of a read task (``not-exist``, ``Error``, ``Unmatch``, ``Missing``) this
finds the candidates an agent could find: every value of the expression the gold query compares
with the gold value (``expr = value``, read with sqlglot: a column, a date's year), else, for a
value that names a table of a family (``enterprise_finance_2019``), the family's tables (creation
order, row counts), else a column that holds the gold value (the gold tables first, then any
table), narrowed to the rows whose other column has a value the utterance names (one city's
districts). Each candidate carries its first rowid and row count.

Two measures, both from what an agent sees (:mod:`clarisql.envs.explorers`):

- *resolved*: exploring leaves one reading (below), which is the gold: a task *needs no
  question* when every value label is resolved and it has no intent label. *Picked by an
  explorer* counts labels where a surface explorer (nearest, prefix, trigram) or a named rank
  explorer (first row, most frequent) picks the gold among all candidates: where the gold is
  uniform over >= 2 readings that happens at chance, so it is reported, not a flaw;
- *rank explorers against chance*: the readings are recomputed from the surface and the
  candidates (:func:`~clarisql.envs.explorers.readings`, the literal reading left out: the
  reading ``naive_sql`` names and ``gold_sql`` does not), and those an agent could rule out by
  running them are dropped (an empty or zero answer, the literal reading's answer, the answer
  without the filter: the generators hold the gold to the same test); each rank explorer
  (:func:`~clarisql.envs.explorers.rank_picks`: k-th by value order both ways, by first rowid, by
  frequency, by length, runner-up by edit distance, any but the nearest) picks one, and its hits
  are compared with the chance count (the sum of 1/|readings|), per label kind and per
  kind:slot. Where the readings are run (a filter the gold query compares), an explorer is
  right when its reading's *answer* is the gold's, and chance is 1/|distinct answers|; the
  answer explorers (:func:`~clarisql.envs.explorers.answer_picks`: the commonest answer, the
  median, the largest, the smallest) join them. A part whose open readings all give one answer
  is counted ``one answer``: exploring settles it. ``z`` is (hits - chance) / sd; a group of
  >= 8 parts with ``z >= 3.5`` is listed under ``above chance``: the suite's golds lean on something an agent can see.

    python benchmarks/explorer_audit.py --builtin 0
    python benchmarks/explorer_audit.py --suite DIR   # a synthesized suite (tasks.jsonl + lake.sqlite)
    python benchmarks/explorer_audit.py --name odutqa

The candidate set is the whole column (not only the readings a generator considered), so this is
an independent check of the generators' own rule.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sqlite3
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import sqlglot
from sqlglot import exp

from clarisql.envs.explorers import (
    EXPLORERS,
    Candidate,
    answer_groups,
    answer_picks,
    rank_picks,
    readings,
    resolved_by,
    value_stats,
)
from clarisql.envs.synth.verify import is_trivial, same_answer
from clarisql.envs.tasks import Task, load_tasks

VALUE_KINDS = ("not-exist", "Error", "Unmatch", "Missing")
MAX_VALUES = 5000
#: Readings run per part to rule some out (more: none are ruled out).
MAX_OPEN = 60
#: Groups with fewer parts are reported, never listed as above chance.
MIN_PARTS = 8


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

    def holders(self, value: str, prefer: Sequence[str]) -> list[tuple[str, str]]:
        """The columns that hold ``value``, those of the ``prefer`` tables first."""
        order = [c for c in self.cols if c[0] in prefer] + [
            c for c in self.cols if c[0] not in prefer
        ]
        out = []
        for t, c in order:
            try:
                hit = self.rows(f"SELECT 1 FROM {_q(t)} WHERE {_q(c)} = {_lit(value)} LIMIT 1")
            except sqlite3.Error:
                continue
            if hit:
                out.append((t, c))
        return out

    def place(self, value: str, prefer: Sequence[str], text: str) -> tuple[str, str, str] | None:
        """(table, column, narrowing) for ``value``: the first holder whose rows the utterance
        narrows (a district named beside a city), else the first holder."""
        found = self.holders(value, prefer)
        for t, c in found:
            cond = self.narrowing(t, c, text)
            if cond:
                return t, c, cond
        return (*found[0], "") if found else None

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


#: A group is listed as above chance from this many standard deviations over the chance count.
Z_FLAG = 3.5


def _slug(v: object) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(v).casefold()).strip("_")


def mentions(sql: str, value: object) -> bool:
    """True when ``sql`` names ``value``: as a literal, or as a ``_``-delimited part of a name."""
    if _lit(value) in sql:
        return True
    sl = _slug(value)
    return (
        bool(sl) and re.search(rf"(?<![0-9a-z]){re.escape(sl)}(?![0-9a-z])", _slug(sql)) is not None
    )


def literal_of(task: Task, gold: object, cands: Sequence[object]) -> object | None:
    """The reading ``naive_sql`` names and ``gold_sql`` does not (``None`` unless exactly one)."""
    naive = task.metadata.get("naive_sql") or ""
    gold_sql = task.gold_sql or ""
    hits = [c for c in cands if c != gold and mentions(naive, c) and not mentions(gold_sql, c)]
    return hits[0] if len(hits) == 1 else None


def family_candidates(cols: Columns, value: str, tables: Sequence[str]) -> list[Candidate]:
    """The tables of the family that ``value`` names (``stem_<value>``), as candidates: the
    suffix, the table's creation order and its row count (empty when no gold table fits)."""
    for t in tables:
        if t.endswith(f"_{value}"):
            stem = t[: -len(value)]
            out = []
            for rowid, name in cols.rows(
                "SELECT rowid, name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"
            ):
                if name.startswith(stem) and "_" not in name[len(stem) :]:
                    n = cols.rows(f"SELECT COUNT(*) FROM {_q(name)}")[0][0]
                    out.append(Candidate(name[len(stem) :], rowid, n))
            return out
    return []


class FilterSite:
    """Where the gold's unclear value sits in its query: the ``expr = value`` comparison (read
    with sqlglot), so readings are the query with another value there, and the candidates are
    every value of ``expr`` in its table (a date's year, a column): what an agent can list."""

    def __init__(self, sql: str, gold: object):
        self.tree = sqlglot.parse_one(sql, read="sqlite")
        self.eq: exp.EQ | None = None
        self.lit: exp.Literal | None = None
        self.table = self.alias = self.expr = ""
        for eq in self.tree.find_all(exp.EQ):
            for side, other in ((eq.right, eq.left), (eq.left, eq.right)):
                if (
                    isinstance(side, exp.Literal)
                    and side.this == str(gold)
                    and not isinstance(other, exp.Literal)
                ):
                    col = other.find(exp.Column)
                    sel = eq.find_ancestor(exp.Select)
                    tabs = list(sel.find_all(exp.Table)) if sel is not None else []
                    if col is None or not tabs:
                        continue
                    tab = next(
                        (t for t in tabs if col.table and t.alias_or_name == col.table), tabs[0]
                    )
                    self.eq, self.lit = eq, side
                    self.table, self.alias = tab.name, col.table
                    self.expr = other.sql(dialect="sqlite")
                    return

    def candidates(self, cols: Columns) -> list[Candidate]:
        frm = _q(self.table) + (f" AS {_q(self.alias)}" if self.alias else "")
        try:
            got = cols.rows(
                f"SELECT {self.expr}, MIN(rowid), COUNT(*) FROM {frm} WHERE {self.expr} IS NOT NULL "
                f"GROUP BY 1 LIMIT {MAX_VALUES}"
            )
        except sqlite3.Error:
            return []
        return [Candidate(v, r, n) for v, r, n in got]

    def counts_within(self, cols: Columns) -> dict[object, int]:
        """Each value's row count under the query's other filters (the scope it is read in)."""
        assert self.eq is not None
        eq, true = self.eq, exp.true()
        eq.replace(true)
        tree = self.tree.copy()
        true.replace(eq)
        if not isinstance(tree, exp.Select):
            return {}
        # the rows a name holds, as the generators count them: the presence checks on the
        # column asked for (``price IS NOT NULL``) are no part of the scope
        asked = {c.name for e in tree.expressions for c in e.find_all(exp.Column)}
        where = tree.args.get("where")
        if where is not None:
            conds = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
            keep = [c for c in conds if not {x.name for x in c.find_all(exp.Column)} & asked]
            tree = tree.where(exp.and_(*keep) if keep else exp.true(), append=False)
        q = tree.select(self.expr, "COUNT(*)", append=False).group_by(self.expr)
        try:
            return dict(cols.rows(q.sql(dialect="sqlite")))
        except sqlite3.Error:
            return {}

    def _swap(self, new: exp.Expression, node: exp.Expression) -> str:
        node.replace(new)
        sql = self.tree.sql(dialect="sqlite")
        new.replace(node)
        return sql

    def reading(self, value: object) -> str:
        assert self.lit is not None
        new = (
            exp.Literal.number(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool)
            else exp.Literal.string(str(value))
        )
        return self._swap(new, self.lit)

    def relaxed(self) -> str:
        assert self.eq is not None
        return self._swap(exp.true(), self.eq)


def open_readings(
    cols: Columns, site: FilterSite, naive_sql: str | None, reads: Sequence[object]
) -> tuple[list[object], list[list[tuple]]] | None:
    """The readings an agent could not rule out by running them (as the generators do): a
    non-trivial answer, not the literal reading's answer, not the answer without the filter;
    with their answers. ``None`` when there are too many to run."""
    if len(reads) > MAX_OPEN:
        return None

    def run(sql: str | None) -> list[tuple] | None:
        try:
            return cols.rows(sql) if sql else None
        except sqlite3.Error:
            return None

    bad = [a for a in (run(naive_sql), run(site.relaxed())) if a is not None]
    out, answers = [], []
    for x in reads:
        a = run(site.reading(x))
        if a is not None and not is_trivial(a) and not any(same_answer(a, b) for b in bad):
            out.append(x)
            answers.append(a)
    return out, answers


class RankTally:
    """Hits of each rank explorer and the chance count, per group (a kind, a kind:slot)."""

    def __init__(self) -> None:
        self.hits: dict[str, Counter] = defaultdict(Counter)
        self.parts: Counter = Counter()
        self.chance: Counter = Counter()
        self.var: Counter = Counter()

    def add(self, groups: Sequence[str], hits: dict[str, bool], n_choices: int) -> None:
        """One part: each explorer's hit, and the choices a guess has (the readings, or their
        distinct answers where they were run)."""
        p = 1 / n_choices
        for g in groups:
            self.parts[g] += 1
            self.chance[g] += p
            self.var[g] += p * (1 - p)
            for name, hit in hits.items():
                self.hits[g][name] += bool(hit)

    def report(self) -> tuple[dict, list[str]]:
        out: dict = {}
        flagged = []
        for g in sorted(self.parts):
            sd = math.sqrt(self.var[g]) or 1.0
            rows = {}
            for name, h in sorted(self.hits[g].items()):
                z = (h - self.chance[g]) / sd
                rows[name] = {"hits": h, "z": round(z, 2)}
                if z >= Z_FLAG and self.parts[g] >= MIN_PARTS:
                    flagged.append(f"{g} {name}: {h}/{self.parts[g]} (chance {self.chance[g]:.1f})")
            out[g] = {
                "parts": self.parts[g],
                "chance": round(self.chance[g], 2),
                "chance rate": round(self.chance[g] / self.parts[g], 3),
                "best": max(rows.items(), key=lambda kv: kv[1]["hits"])[0] if rows else None,
                "explorers": rows,
            }
        return out, flagged


def audit(tasks: Sequence[Task], db: Path) -> dict:
    """The report for one suite (``tasks`` over the database ``db``)."""
    return audit_suites([(tasks, db)])


def audit_suites(suites: Sequence[tuple[Sequence[Task], Path]]) -> dict:
    """One report pooled over several suites (each its tasks and database): a bias too small
    to see in one suite's few parts adds up."""
    per_kind: dict[str, Counter] = {k: Counter() for k in VALUE_KINDS}
    by_explorer: Counter = Counter()
    ranks = RankTally()
    no_question = underspecified = 0
    for tasks, db in suites:
        cols = Columns(db)
        u_, n_ = _audit_one(tasks, cols, per_kind, by_explorer, ranks)
        underspecified += u_
        no_question += n_
    rank_report, flagged = ranks.report()
    return {
        "underspecified read tasks": underspecified,
        "need no question": no_question,
        "per kind": {k: dict(v) for k, v in per_kind.items() if v},
        "resolved by explorer": {k: by_explorer[k] for k in EXPLORERS},
        "rank explorers": rank_report,
        "above chance": flagged,
    }


def _audit_one(
    tasks: Sequence[Task],
    cols: Columns,
    per_kind: dict[str, Counter],
    by_explorer: Counter,
    ranks: RankTally,
) -> tuple[int, int]:
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
            surface = u.label.content or None
            tables = t.metadata.get("tables", [])
            site = FilterSite(t.gold_sql or "", u.value)
            cands = site.candidates(cols) if site.eq is not None else []
            if not cands:
                site.eq = None
                cands = family_candidates(cols, str(u.value), tables)
            if not cands:
                where = cols.place(u.value, tables, t.utterance)
                if where is None:
                    c["not found"] += 1
                    all_resolved = False
                    continue
                tab, col, narrow = where
                vals = cols.values(tab, col, narrow)
                if u.value not in vals:  # a narrowing that drops the gold read the words wrong
                    narrow = ""
                    vals = cols.values(tab, col)
                cands = value_stats(cols.rows, _q(tab), _q(col), vals, narrow)
            gold = next((x.value for x in cands if str(x.value) == str(u.value)), u.value)
            hits = resolved_by(surface, cands, gold)
            if hits:  # at chance where the gold is uniform over >= 2 readings: reported only
                c["picked by an explorer"] += 1
                by_explorer.update(hits)
            literal = literal_of(t, gold, [x.value for x in cands])
            # (made-up names read as their sources in synthesized suites only, as generated)
            reads = readings(surface, cands, literal, made_up=bool(t.metadata.get("layer")))
            if kind == "not-exist" and t.metadata.get("layer") == "clarify":
                # as the generator reads the words: a singular lookup ("the product called ...")
                # names one entity, an aggregate ("the lowest price of the orders of ...") the
                # rows of a name many rows hold; row counts are in plain view to an agent
                one = t.metadata.get("recipe") == "where:lookup"
                within = site.counts_within(cols) if site.eq is not None else {}
                fit = {x for x, n in within.items() if (n == 1) == one} if within else None
                if fit is None:
                    fit = {x.value for x in cands if x.count is None or (x.count == 1) == one}
                reads = [x for x in reads if x in fit]
            if gold not in reads:
                c["gold outside readings"] += 1
                all_resolved = False
                continue
            answers = None
            if site.eq is not None:
                got = open_readings(cols, site, t.metadata.get("naive_sql"), reads)
                if got is not None and gold not in got[0]:
                    c["gold ruled out by running it"] += 1
                    all_resolved = False
                    continue
                if got is not None:
                    reads, answers = got
            if len(reads) < 2:  # exploring leaves one reading: the gold, found without asking
                c["resolved"] += 1
                continue
            picks = rank_picks(surface, cands, reads)
            if answers is None:
                hits = {k: p is not None and p == gold for k, p in picks.items()}
                n_choices = len(reads)
            else:
                # an agent that never asks is right when its answer is the gold's: each
                # explorer's reading is scored by its answer, and a guess picks among the
                # distinct answers (the answer explorers run every reading)
                picks.update(answer_picks(reads, answers, same_answer))
                ans = dict(zip(reads, answers, strict=True))
                hits = {
                    k: p is not None and p in ans and same_answer(ans[p], ans[gold])
                    for k, p in picks.items()
                }
                n_choices = len(answer_groups(answers, same_answer))
                if n_choices < 2:  # every reading gives the gold's answer: no question needed
                    c["one answer"] += 1
                    continue
            all_resolved = False
            c["ambiguous"] += 1
            groups = [kind, f"{kind}:{u.label.slot}"]
            ranks.add(groups, hits, n_choices)
        no_question += all_resolved
    return underspecified, no_question


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--builtin", type=int, default=None, metavar="SEED")
    ap.add_argument(
        "--suite",
        action="append",
        default=None,
        metavar="DIR",
        help="a folder with tasks.jsonl and one .sqlite (repeat to pool several suites)",
    )
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
        suites = []
        for f in args.suite:
            folder = Path(f)
            suites.append((load_tasks(folder / "tasks.jsonl"), next(folder.glob("*.sqlite"))))
        res = audit_suites(suites)
    else:
        ap.error("give --builtin SEED or --suite DIR")
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
