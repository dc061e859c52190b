"""Underspecified tasks derived from answerable drafts (any difficulty, single / join / union).

A draft whose question names an equality filter's value (``... whose billing state is 'CA'``,
``... in 2021``) becomes a task whose user writes that value unclearly; the draft's SQL stays the
gold, so the task keeps the draft's difficulty, type, joins and window functions:
- a text value of a scope column (few distinct values: a country, a category) -> ``Error``
  (FROM): cut short or misspelled, each about half the time (the clarify layer's
  :meth:`~.clarify._ClarifyGen.want`), so that several values fit;
- a text value of another name column -> ``not-exist`` (WHERE): cut short or misspelled, the
  same way; an aggregate over one table keeps only names that >= 2 rows hold (an aggregate over
  the one row a name stands for is no question a user asks: see :mod:`.clarify`); where the
  names the surface fits are each one row's, the task becomes the clarify layer's singular
  lookup of that table and name column instead (``where:lookup``);
- an integer year -> ``Unmatch`` (FROM): a year outside the column's range; the literal reading
  takes the nearest existing year.
Checks, as in :mod:`.clarify`: the literal reading (the draft's SQL with the value as the user
wrote it, or the nearest year) runs and gives a different answer, and so does the SQL without
that filter (reading every candidate at once); substituting the values the
surface fits (>= 2) gives >= 2 different non-empty answers; the value occurs exactly once in the
question and once in the SQL, on any column (so the substitution is exact: a union that filters
both branches on it is left out).
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Any

from clarisql.envs.synth.layers.common import (
    Made,
    fill,
    is_entity,
    is_scope,
    is_year_like,
    qi,
    scope_values,
    show,
    sql_lit,
)
from clarisql.envs.synth.layers.surfaces import listed
from clarisql.envs.synth.profile import present_sql
from clarisql.envs.synth.types import ColumnProfile, Draft
from clarisql.envs.synth.verify import echoes_question, is_trivial, same_answer
from clarisql.envs.tasks import Label, Underspec

#: Neighbouring values (by sort order) fetched on each side of a name, to find close ones.
WINDOW = 75


class DraftedClarify:
    """Makes one task at a time from a shuffled list of drafts (see the module docstring)."""

    def __init__(self, gen: Any, drafts: list[Draft], rng: random.Random):
        self.gen, self.rng = gen, rng  # gen: the clarify layer's generator (queries, surfaces)
        self.items = [(d, f) for d in drafts for f in d.slots.get("filters") or [] if f[2] == "="]
        rng.shuffle(self.items)
        self.pos = 0

    def make(self) -> Made | None:
        if self.pos >= len(self.items):
            return None
        d, (table, col, _, value) = self.items[self.pos]
        self.pos += 1
        try:
            c = self.gen.lake.table(table).column(col)
        except KeyError:
            return None
        ref = f"{qi(table)}.{qi(col)} = {sql_lit(value)}"
        mention = f"'{value}'" if isinstance(value, str) else show(value)
        pat = re.compile(r"(?<![\w.])" + re.escape(mention) + r"(?!\w|\.\d)")
        if d.sql.count(ref) != 1 or len(pat.findall(d.question)) != 1:
            return None
        if d.sql.count(f" = {sql_lit(value)}") != 1:  # e.g. both branches of a union: the
            return None  # literal reading would change one and keep the other
        if isinstance(value, str) and not is_year_like(c) and (is_entity(c) or is_scope(c)):
            got = self.text_surface(table, c, value)
        elif isinstance(value, int) and is_year_like(c):
            got = self.year_surface(table, c, value)
        else:
            return None
        if got is None:
            return None
        kind, surface, naive_value, cands = got
        # the readings come from the surface and every value of the column, and the gold is
        # drawn uniformly among them: no explorer beats a guess (clarisql.envs.explorers)
        cands = self.gen.unrankable_values(table, col, surface, cands, value, naive_value)
        if kind == "not-exist" and d.qtype == "single" and _AGGREGATE.search(d.sql):
            # an aggregate over the rows of a name: names one row holds are one entity each
            cands = self.gen.held_by_many(table, c, cands, None, 2)
        if len(cands) < 2:
            if kind == "not-exist" and d.qtype == "single" and _AGGREGATE.search(d.sql):
                # each name one row's: a lookup of one attribute of the entity, not an aggregate
                return self.gen.noted(self.gen.lookup(table, col))
            return None
        value = self.rng.choice(cands)
        new_ref = f"{qi(table)}.{qi(col)} = {sql_lit(value)}"
        d, ref = dataclasses.replace(d, sql=d.sql.replace(ref, new_ref)), new_ref
        shown = f"'{surface}'" if isinstance(surface, str) else show(surface)
        question = pat.sub(lambda _: shown, d.question)
        naive = d.sql.replace(ref, f"{qi(table)}.{qi(col)} = {sql_lit(naive_value)}")
        gold_rows = self.gen.rows(d.sql)
        naive_rows = self.gen.rows(naive)
        if gold_rows is None or is_trivial(gold_rows) or naive_rows is None:
            return None
        if echoes_question(gold_rows, question):
            return None
        if same_answer(gold_rows, naive_rows, ordered=d.ordered):
            return None
        relaxed = self.gen.rows(d.sql.replace(ref, "1 = 1"))  # the unclear filter dropped
        if relaxed is not None and same_answer(gold_rows, relaxed, ordered=d.ordered):
            return None
        # every reading run, the gold's answer uniform over their distinct answers (the
        # commonest answer is no better than a guess: _ClarifyGen.keep_by_answer)
        reads = self.gen.sample(value, cands)
        qs = None
        if reads is not None:
            qs = [d.sql.replace(ref, f"{qi(table)}.{qi(col)} = {sql_lit(x)}") for x in reads]
        n_readings = self.gen.fair_answers(qs, [naive, d.sql.replace(ref, "1 = 1")])
        if n_readings is None:
            return None
        us = Underspec(Label(kind, show(surface), col), show(value))
        return self.gen.noted(self._made(d, question, naive, us, kind, table, col, n_readings))

    def _made(
        self,
        d: Draft,
        question: str,
        naive: str,
        us: Underspec,
        kind: str,
        table: str,
        col: str,
        n_readings: int,
    ) -> Made:
        return Made(
            utterance=question,
            category="where" if kind == "not-exist" else "from",
            gold_sql=d.sql,
            naive_sql=naive,
            underspecs=[us],
            ordered=d.ordered,
            meta={
                "layer": "clarify",
                "recipe": f"draft:{kind}",
                "from_draft": True,
                "label_column": f"{table}.{col}",
                "difficulty": d.difficulty,
                "qtype": d.qtype,
                "tables": list(d.tables),
                "columns": list(d.columns),
                "operations": list(d.operations),
                "candidates": {"scope" if kind != "not-exist" else "name": n_readings},
            },
        )

    def neighbours(self, table: str, c: ColumnProfile, value: str) -> list[str]:
        base = f"SELECT DISTINCT {qi(c.name)} FROM {qi(table)} WHERE {present_sql(c, qi(c.name))}"
        lo = self.gen.rows(
            f"{base} AND {qi(c.name)} < {sql_lit(value)} ORDER BY 1 DESC LIMIT {WINDOW}"
        )
        hi = self.gen.rows(f"{base} AND {qi(c.name)} >= {sql_lit(value)} ORDER BY 1 LIMIT {WINDOW}")
        vals = [r[0] for r in [*(lo or [])[::-1], *(hi or [])]]
        return [x for x in vals if isinstance(x, str)]

    def text_surface(
        self, table: str, c: ColumnProfile, value: str
    ) -> tuple[str, str, str, list[str]] | None:
        vals = self.neighbours(table, c, value)
        if value not in vals or listed(vals):  # a credit list or an address: no name
            return None
        if is_scope(c):  # few distinct values: a scoping dimension (FROM), else a name (WHERE)
            got = self.gen.value_surface(value, vals, self.gen.want("scope"))
            if got is None:
                return None
            s, cands = got
            return "Error", s, s, cands[:6]
        base = f"SELECT DISTINCT {qi(c.name)} FROM {qi(table)} WHERE {present_sql(c, qi(c.name))}"
        got2 = self.gen.name_surface(value, vals, base, c)
        if got2 is None:
            return None
        s, cands = got2
        exists = self.gen.rows(
            f"SELECT COUNT(*) FROM {qi(table)} WHERE {qi(c.name)} = {sql_lit(s)} COLLATE NOCASE"
        )
        if not exists or exists[0][0]:
            return None
        return "not-exist", s, s, cands[:6]

    def year_surface(
        self, table: str, c: ColumnProfile, value: int
    ) -> tuple[str, int, int, list[int]] | None:
        nums = sorted(x for x, _ in scope_values(self.gen.v, table, c) if isinstance(x, int))
        if len(nums) < 2 or value not in nums:
            return None
        k = self.rng.randint(1, 4)
        u = nums[0] - k if value == nums[-1] else nums[-1] + k
        nearest = min(nums, key=lambda x: (abs(x - u), -x))
        if nearest == value:
            return None
        others = [x for x in nums if x != value][:5]
        return "Unmatch", u, nearest, [value, *others]


_AGGREGATE = re.compile(r"\b(?:COUNT|SUM|AVG|MIN|MAX|TOTAL|GROUP_CONCAT)\s*\(", re.I)


def drafted_tasks(
    gen: Any, drafts: list[Draft], rng: random.Random, n: int, seen: set[str]
) -> list[Made]:
    """At most ``n`` tasks derived from ``drafts`` (utterances in ``seen`` are skipped)."""
    maker = DraftedClarify(gen, drafts, rng)
    return fill(n, [maker.make], seen, budget=max(25, len(maker.items)))


__all__ = ["DraftedClarify", "drafted_tasks"]
