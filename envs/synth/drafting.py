"""What drafting answerable queries works with: the context a maker draws from
(:class:`DraftContext`), a drawn :class:`Candidate`, the :class:`DraftReport` of a run, and the
``Maker`` type. The makers themselves live in :mod:`.answerable_single` and
:mod:`.answerable_join`; :mod:`.answerable` runs them.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.synth.phrasing import wording_flaw
from clarisql.envs.synth.templates import (
    LARGE_TABLE,
    Roles,
    Sel,
    cond_eq,
    human,
    lit,
    num,
    present,
    roles,
    show,
)
from clarisql.envs.synth.types import (
    ColumnProfile,
    Draft,
    LakeProfile,
    join_on,
)
from clarisql.envs.synth.verify import Verifier, echoes_question, is_trivial, same_answer

Maker = Callable[[], "Draft | Candidate | None"]

#: Candidates drawn ahead of the one being checked (their SQL runs on the verifier's worker
#: threads meanwhile). A constant, so the drafts do not depend on the number of workers.
LOOKAHEAD = 8


@dataclass
class Candidate:
    """A draft not yet executed (what :meth:`DraftContext.check` needs)."""

    sql: str
    question: str
    difficulty: str
    qtype: str
    cols: list[ColumnProfile]
    ops: tuple[str, ...]
    ordered: bool
    slots: dict[str, Any]


@dataclass
class DraftReport:
    made: Counter = field(default_factory=Counter)
    missing: dict[str, str] = field(default_factory=dict)
    attempts: int = 0
    rejected: Counter = field(default_factory=Counter)


class DraftContext:
    """What the makers share: lake, verifier, rng, column roles, seen questions."""

    def __init__(self, lake: LakeProfile, v: Verifier, rng: random.Random):
        self.lake, self.v, self.rng = lake, v, rng
        self.roles = {t.name: roles(t, lake) for t in lake.tables}
        self.seen: set[str] = set()
        self.rejected: list[str] = []
        #: :meth:`draft` returns unexecuted candidates (the driver checks them, see make_drafts)
        self.deferred = False
        #: (left, right) of a join -> the other key paths between its two tables
        self.join_alternatives = {(j.left, j.right): j.alternatives for j in lake.joins}
        self._counts: dict[tuple[str, str], dict[Any, int]] = {}
        self._tops: dict[tuple[str, str], list[Any]] = {}

    def pick(self, items: list[Any] | tuple[Any, ...]) -> Any:
        return items[self.rng.randrange(len(items))]

    def value(self, c: ColumnProfile, max_count: int | None = None) -> Any:
        """A filter value of ``c``: one of its samples (the frequent ones first); with
        ``max_count``, one matching at most that many rows (``None`` when there is none)."""
        vals = list(c.samples[: max(1, min(len(c.samples), 12))])
        if max_count is not None:
            counts = self.counts(c)
            vals = [v for v in c.samples if 0 < counts.get(v, 0) <= max_count]
            if not vals:
                return None
        return self.pick(vals)

    def counts(self, c: ColumnProfile) -> dict[Any, int]:
        """How many rows hold each sample value of ``c`` (one query per column, cached)."""
        key = (c.table, c.name)
        if key not in self._counts:
            inlist = ", ".join(lit(v) for v in c.samples) or "NULL"
            sql = Sel(c.ref(), "COUNT(*)").frm(c.table).where(f"{c.ref()} IN ({inlist})")
            rows = self.v.rows(sql.group(c.ref()).sql()) or []
            self._counts[key] = {v: n for v, n in rows}
        return self._counts[key]

    def narrow(self, r: Roles, avoid: tuple[str, ...]) -> tuple[list[str], str, list]:
        """On a large table (>= :data:`LARGE_TABLE` rows) equality filters on further (indexed)
        dimensions until about :data:`LARGE_TABLE` rows remain (estimated from the value
        counts), so whole-table templates stay cheap: ``(conditions, phrase, filters)``;
        nothing on small tables."""
        dims = [d for d in r.dims if d.name not in avoid]
        conds: list[str] = []
        words: list[str] = []
        filters: list = []
        est = float(r.table.rows)
        while dims and est > LARGE_TABLE:
            d = self.pick(dims)
            dims.remove(d)
            v = self.value(d)
            est *= self.counts(d).get(v, 0) / max(1, r.table.rows)
            conds.append(cond_eq(d, v))
            words.append(f"{human(d.name)} {show(v)}")
            filters.append((d.table, d.name, "=", v))
        return conds, (" with " + " and ".join(words)) if words else "", filters

    def threshold(self, table: str, m: ColumnProfile) -> Any:
        """A value of ``m`` with a few (3..25) rows above it, from the data (top values cached)."""
        key = (table, m.name)
        if key not in self._tops:
            sql = Sel(num(m)).frm(table).where(present(m)).order(f"{num(m)} DESC").limit(26)
            self._tops[key] = [r[0] for r in self.v.rows(sql.sql()) or []]
        tops = self._tops[key]
        if len(tops) < 4:
            return None
        return tops[self.rng.randint(3, len(tops) - 1)]

    def draft(
        self,
        sel: Sel | str,
        question: str,
        difficulty: str,
        qtype: str,
        cols: list[ColumnProfile],
        ops: tuple[str, ...],
        ordered: bool = False,
        **slots: Any,
    ) -> Draft | Candidate | None:
        """Execute and check a candidate; the :class:`Draft` or ``None`` (reason recorded).

        With :attr:`deferred` set, the unexecuted :class:`Candidate` instead (see
        :meth:`check`); ``None`` when the question is taken.
        """
        q = " ".join(question.split())
        if q.casefold() in self.seen:
            return None
        if wording_flaw(q):  # no question says a noun twice or speaks SQL (phrasing)
            self.rejected.append("wording")
            return None
        sql = sel if isinstance(sel, str) else sel.sql()
        c = Candidate(sql, q, difficulty, qtype, cols, ops, ordered, slots)
        return c if self.deferred else self.check(c)

    def _paths_agree(self, c: Candidate, rows: list[tuple]) -> bool:
        """Every other key path between the join's two tables gives the same answer (when in
        doubt, no: a gold that depends on which key was chosen is not a gold)."""
        join = c.slots.get("join")
        alts = self.join_alternatives.get(join, ()) if join else ()
        if not alts:
            return True
        on = join_on(*join)
        if on not in c.sql:
            return False
        for left, right in alts:
            other = self.v.rows(c.sql.replace(on, join_on(left, right)))
            if other is None or not same_answer(rows, other, ordered=c.ordered):
                return False
        return True

    def check(self, c: Candidate) -> Draft | None:
        """Execute and check ``c``: the :class:`Draft` or ``None`` (reason recorded)."""
        if c.question.casefold() in self.seen:
            return None
        rows = self.v.rows(c.sql)
        if rows is None:
            self.rejected.append(self.v.last_error or "failed")
            return None
        if is_trivial(rows):
            self.rejected.append("trivial answer")
            return None
        if echoes_question(rows, c.question):
            self.rejected.append("the answer is written in the question")
            return None
        if not self._paths_agree(c, rows):
            self.rejected.append("join paths disagree")
            return None
        ranked = c.slots.get("ranked")  # (SQL counting every row the ranking ranks)
        if ranked is not None:
            got = self.v.rows(ranked)
            if not got or len(rows) * 2 > (got[0][0] or 0):
                # "one of the 3 largest numbers" that most rows share ranks nothing
                self.rejected.append("a ranking that keeps most of its rows")
                return None
        ops = c.ops
        if "group" in ops and len(rows) < 2:
            self.rejected.append("a single group")
            return None
        if any(col.needs_cast for col in c.cols) and "cast" not in ops:
            ops = (*ops, "cast")
        self.seen.add(c.question.casefold())
        tables = tuple(dict.fromkeys(col.table for col in c.cols))
        return Draft(
            sql=c.sql,
            question=c.question,
            difficulty=c.difficulty,
            qtype=c.qtype,
            tables=tables,
            columns=tuple(dict.fromkeys(f"{col.table}.{col.name}" for col in c.cols)),
            operations=ops,
            rows=rows,
            ordered=c.ordered,
            slots={k: v for k, v in c.slots.items() if v is not None and k != "ranked"},
            meta={"review_count": 0, "tokens": 0, "rejected": []},
        )


# --- driver -------------------------------------------------------------------------------------
