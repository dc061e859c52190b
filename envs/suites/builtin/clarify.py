"""The built-in domain's FROM scope (Missing / Error / Unmatch for the city, district and year
slots), WHERE not-exist (a look-alike family's common name) and mixed underspecification.

Ambiguity that exploring cannot resolve (:mod:`clarisql.envs.explorers`): every unclear part has
candidates (the city's districts, the cities with that district, the year tables, every name in
the gold table's column); its *readings* come from what the user wrote and those candidates only
(:func:`~clarisql.envs.explorers.readings`), never from the gold, with the literal reading
(``naive_sql``: the first district, the latest year, the nearest year; the name as written is no
candidate) left out. A part is kept only when >= 2 readings are left and give different answers,
and the gold is drawn uniformly among them, so no explorer (nearest, prefix, trigrams, first
row, most frequent, the k-th by year or by row: "the second-latest year") is right more often
than a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from clarisql.envs.explorers import Candidate, readings
from clarisql.envs.suites.builtin import names as N
from clarisql.envs.suites.builtin.db import District, possessive, sql_str
from clarisql.envs.suites.builtin.intents import Intents
from clarisql.envs.suites.builtin.phrasing import ENT, Q, nearest_year
from clarisql.envs.synth.domain import DomainDraft
from clarisql.envs.synth.verify import same_answer
from clarisql.envs.tasks import Label, Underspec

#: Readings whose answers are compared per unclear part (bounds the queries a draft costs).
MAX_READINGS = 6

ScopeLoc = tuple[District, District, str, str, Underspec, list[District]]


class Clarify(Intents):
    """Makers of ``from``, ``where`` and ``mixed`` drafts (scope triples, name surfaces)."""

    # ========================================================================================
    # explorers
    # ========================================================================================
    def differ(self, sqls: Sequence[str], literal: str | None = None) -> bool:
        """True when at least two of the queries (the first :data:`MAX_READINGS` readings) give
        different answers, not counting a reading that answers as the ``literal`` reading does:
        an agent could rule that one out by running both (the gold never answers as the literal
        reading does, so such readings are never the gold)."""
        bad = self.rows(literal) if literal is not None else None
        seen: list[list[tuple]] = []
        for sql in list(sqls)[:MAX_READINGS]:
            rows = self.rows(sql)
            if bad is not None and same_answer(rows, bad):
                continue
            if not any(same_answer(rows, x) for x in seen):
                seen.append(rows)
            if len(seen) >= 2:
                return True
        return False

    def pick_gold(
        self, surface: str | None, cands: list[Candidate], literal: Any = None
    ) -> tuple[Any, list[Any]] | None:
        """A gold drawn uniformly among the readings of ``surface`` over ``cands`` (``literal``
        left out), with the readings; ``None`` when fewer than two are left."""
        reads = readings(surface, cands, literal, made_up=False)
        return (self.rng.choice(reads), reads) if len(reads) >= 2 else None

    def district_cands(self, ds: list[District], tkind: str, by_city: bool) -> list[Candidate]:
        """Candidates for a district scope: the district's name (or its city's, ``by_city``),
        its row in the ``districts`` (or ``cities``) table, its table's row count."""
        out = []
        for d in ds:
            if by_city:
                ref = f"SELECT rowid FROM cities WHERE city = {sql_str(d.city)}"
            else:
                ref = (
                    f"SELECT rowid FROM districts WHERE city = {sql_str(d.city)} "
                    f"AND district = {sql_str(d.name)}"
                )
            n = self.rows(f"SELECT COUNT(*) FROM {self.table_of(tkind, d)}")[0][0]
            out.append(Candidate(d.city if by_city else d.name, self.rows(ref)[0][0], n))
        return out

    def year_cands(self) -> list[Candidate]:
        return [
            Candidate(
                str(y), i + 1, self.rows(f"SELECT COUNT(*) FROM enterprise_finance_{y}")[0][0]
            )
            for i, y in enumerate(self.years)
        ]

    @staticmethod
    def ent_column(q: Q) -> str:
        sql = q.sql or q.measures[0][0]
        m = re.search(r"(\w+) = " + re.escape(ENT), sql)
        if m is None:
            raise ValueError(q.name)
        return m.group(1)

    def name_part(self, q: Q, table: str, measure: int | None = None) -> str | None:
        """Make ``q`` about a member of a look-alike family in ``table`` (its entity replaced)
        and return the family's common name, if the family leaves >= 2 unrankable readings with
        different answers; else ``None``."""
        col = self.ent_column(q)
        vals = self.col(f"SELECT DISTINCT {col} FROM {table} WHERE {col} IS NOT NULL ORDER BY 1")
        members = [v for v in vals if self.family_surface(v) is not None]
        if not members:
            return None
        surface = self.family_surface(self.rng.choice(members))
        if surface is None or surface in vals:
            return None
        keep = readings(surface, vals, made_up=False)  # every name the surface could cut short
        if len(keep) < 2:
            return None
        literal = q.render_sql(table, surface, measure=measure)
        if not self.differ([q.render_sql(table, v, measure=measure) for v in keep], literal):
            return None
        q.ent = self.rng.choice(keep)  # uniform: no explorer beats a guess
        return surface

    # ========================================================================================
    # from (scope)
    # ========================================================================================
    def scope_loc(self, kind: str, slot: str, tkind: str = "sales") -> ScopeLoc | None:
        """(gold district, naive district, utterance prefix, loc phrase, underspec, the
        readings no explorer separates from the gold)."""
        make = {
            ("Missing", "district"): self._scope_missing_district,
            ("Missing", "city"): self._scope_missing_city,
            ("Error", "district"): self._scope_error_district,
            ("Unmatch", "city"): self._scope_unmatch_city,
            ("Unmatch", "district"): self._scope_unmatch_district,
        }.get((kind, slot))
        if make is None:
            raise ValueError((kind, slot))
        return make(tkind)

    def _in_city(
        self, city: str, surface: str | None, tkind: str, exclude: str | None
    ) -> tuple[District, list[District]] | None:
        ds = self.w.districts[city]
        cands = self.district_cands(ds, tkind, by_city=False)
        got = self.pick_gold(surface, cands, exclude)
        if got is None:
            return None
        by = {d.name: d for d in ds}
        return by[got[0]], [by[n] for n in got[1]]

    def _across_cities(
        self, name: str, surface: str | None, tkind: str, exclude: str | None
    ) -> tuple[District, list[District]] | None:
        ds = [self.w.district(c, name) for c in self.w.cities_with(name)]
        cands = self.district_cands(ds, tkind, by_city=True)
        got = self.pick_gold(surface, cands, exclude)
        if got is None:
            return None
        by = {d.city: d for d in ds}
        return by[got[0]], [by[c] for c in got[1]]

    def _shared_name(self) -> str | None:
        shared = [n for n in N.DISTRICT_POOL if len(self.w.cities_with(n)) >= 3]
        return self.rng.choice(shared) if shared else None

    def _scope_missing_district(self, tkind: str) -> ScopeLoc | None:
        rng, w = self.rng, self.w
        city = rng.choice(w.cities)
        naive = w.districts[city][0]
        got = self._in_city(city, None, tkind, naive.name)
        if got is None:
            return None
        prefix = rng.choice(
            (
                f"I'm looking at one of {possessive(city)} districts. ",
                f"I'm reviewing a district in {city}. ",
                f"I'm analysing a district of {city}. ",
            )
        )
        us = Underspec(Label("Missing", "", "district"), got[0].name)
        return got[0], naive, prefix, "there", us, got[1]

    def _scope_missing_city(self, tkind: str) -> ScopeLoc | None:
        name = self._shared_name()
        if name is None:
            return None
        naive = self.w.district(self.w.cities_with(name)[0], name)
        got = self._across_cities(name, None, tkind, naive.city)
        if got is None:
            return None
        us = Underspec(Label("Missing", "", "city"), got[0].city)
        return got[0], naive, "", f"in the {name} district", us, got[1]

    def _scope_error_district(self, tkind: str) -> ScopeLoc | None:
        """A district of another city named for this city."""
        rng, w = self.rng, self.w
        city = rng.choice(w.cities)
        mine = {d.name for d in w.districts[city]}
        elsewhere = [n for n in N.DISTRICT_POOL if n not in mine and w.cities_with(n)]
        if not elsewhere:
            return None
        wrong = rng.choice(elsewhere)
        got = self._in_city(city, wrong, tkind, None)
        if got is None:
            return None
        naive = w.district(w.cities_with(wrong)[0], wrong)
        us = Underspec(Label("Error", wrong, "district"), got[0].name)
        return got[0], naive, "", self.loc(city, wrong), us, got[1]

    def _scope_unmatch_city(self, tkind: str) -> ScopeLoc | None:
        name = self._shared_name()
        if name is None:
            return None
        absent = self.rng.choice(self.w.absent_cities)
        naive = self.w.district(self.w.cities_with(name)[0], name)
        got = self._across_cities(name, absent, tkind, naive.city)
        if got is None:
            return None
        us = Underspec(Label("Unmatch", absent, "city"), got[0].city)
        return got[0], naive, "", self.loc(absent, name), us, got[1]

    def _scope_unmatch_district(self, tkind: str) -> ScopeLoc | None:
        """A district name no city of this database has (other seeds' cities may)."""
        rng, w = self.rng, self.w
        nowhere = [n for n in N.DISTRICT_POOL if not w.cities_with(n)]
        if not nowhere:
            return None
        city = rng.choice(w.cities)
        surface = rng.choice(nowhere)
        naive = w.districts[city][0]
        got = self._in_city(city, surface, tkind, naive.name)
        if got is None:
            return None
        us = Underspec(Label("Unmatch", surface, "district"), got[0].name)
        return got[0], naive, "", self.loc(city, surface), us, got[1]

    def scope_year(self, kind: str) -> tuple[int, int, str, Underspec, list[int]] | None:
        """(gold year, naive year, year phrase, underspec, unrankable years) for a finance
        question."""
        cands = self.year_cands()
        if kind == "Missing":
            naive = self.years[-1]
            got = self.pick_gold(None, cands, str(naive))
            if got is None:
                return None
            y = int(got[0])
            us = Underspec(Label("Missing", "", "year"), str(y))
            return y, naive, "", us, [int(x) for x in got[1]]
        # a year next to the table years (other seeds' databases have it): every other year
        # is a reading, the nearest one is the literal reading
        s = str(self.rng.choice((self.years[0] - 1, self.years[-1] + 1)))
        naive = nearest_year(s, self.years)
        got = self.pick_gold(s, cands, str(naive))
        if got is None:
            return None
        y = int(got[0])
        us = Underspec(Label("Unmatch", s, "year"), str(y))
        return y, naive, self.year_phrase(s), us, [int(x) for x in got[1]]

    def from_makers(self, kind: str) -> list[Callable[[], DomainDraft | None]]:
        def loc(slot: str) -> Callable[[], DomainDraft | None]:
            def make() -> DomainDraft | None:
                tkind = self.rng.choice(("sales", "auctions"))
                got = self.scope_loc(kind, slot, tkind)
                if got is None:
                    return None
                gold_d, naive_d, prefix, loc_text, us, readings = got
                q = self.loc_q(tkind, gold_d)
                if q is None or q.ent is not None:  # a named entity may not exist elsewhere
                    return None
                gt, nt = self.table_of(tkind, gold_d), self.table_of(tkind, naive_d)
                sqls = [q.render_sql(self.table_of(tkind, d)) for d in readings]
                if not self.differ(sqls, q.render_sql(nt)):
                    return None
                text = prefix + q.render_text(loc_text)
                return DomainDraft(
                    f"{q.name}+{kind}_{slot}",
                    "from",
                    text,
                    [gt],
                    gold_sql=q.render_sql(gt),
                    naive_sql=q.render_sql(nt),
                    underspecs=[us],
                    check=q.render_check(gt),
                )

            return make

        def year() -> DomainDraft | None:
            got = self.scope_year(kind)
            if got is None:
                return None
            gy, ny, phrase, us, readings = got
            q = self.fin_q(gy, company=False)
            gt, nt = f"enterprise_finance_{gy}", f"enterprise_finance_{ny}"
            sqls = [q.render_sql(f"enterprise_finance_{y}") for y in readings]
            if not self.differ(sqls, q.render_sql(nt)):
                return None
            return DomainDraft(
                f"{q.name}+{kind}_year",
                "from",
                q.render_text(phrase),
                [gt],
                gold_sql=q.render_sql(gt),
                naive_sql=q.render_sql(nt),
                underspecs=[us],
            )

        if kind == "Missing":
            return [year, loc("district"), loc("city")]
        if kind == "Error":
            return [loc("district")]
        return [year, loc("city"), loc("district")]

    # ========================================================================================
    # where (not-exist)
    # ========================================================================================
    def where_makers(self) -> list[Callable[[], DomainDraft | None]]:
        def fin() -> DomainDraft | None:
            y = self.rng.choice(self.years)
            t = f"enterprise_finance_{y}"
            q = self.fin_company_q(self.fin_company(y))
            s = self.name_part(q, t)
            if s is None:
                return None
            return DomainDraft(
                f"{q.name}+not_exist",
                "where",
                q.render_text(self.year_phrase(y), s),
                [t],
                gold_sql=q.render_sql(t),
                naive_sql=q.render_sql(t, s),
                underspecs=[Underspec(Label("not-exist", s, "enterprise"), q.ent or "")],
            )

        def loc(kind: str) -> Callable[[], DomainDraft | None]:
            def make() -> DomainDraft | None:
                d = self.pick_district()
                q = self.loc_q(kind, d)
                if q is None:
                    return None
                t = self.table_of(kind, d)
                s = self.name_part(q, t)
                if s is None:
                    return None
                return DomainDraft(
                    f"{q.name}+not_exist",
                    "where",
                    q.render_text(self.loc(d.city, d.name), s),
                    [t],
                    gold_sql=q.render_sql(t),
                    naive_sql=q.render_sql(t, s),
                    underspecs=[Underspec(Label("not-exist", s, q.ent_slot or ""), q.ent or "")],
                )

            return make

        return [fin, loc("project"), fin, loc("developer"), loc("project"), loc("bidder")]

    # ========================================================================================
    # mixed
    # ========================================================================================
    def mixed_makers(self) -> list[Callable[[], DomainDraft | None]]:
        return [
            self._mx_fin(True, "Missing", False),
            self._mx_fin(False, "Missing", True),
            self._mx_loc("sales", True, ("Error", "district"), False),
            self._mx_fin(True, None, True),
            self._mx_loc("auctions", True, ("Missing", "district"), False),
            self._mx_fin(False, "Unmatch", True),
            self._mx_loc("project", True, None, True),
            self._mx_loc("sales", True, ("Missing", "city"), False),
            self._mx_loc("auctions", True, ("Unmatch", "city"), False),
        ]

    def _mx_fin(
        self, intent: bool, scope: str | None, not_exist: bool
    ) -> Callable[[], DomainDraft | None]:
        def make() -> DomainDraft | None:
            readings: list[int] = []
            if scope is None:
                gy = ny = self.rng.choice(self.years)
                phrase = self.year_phrase(gy)
                uss: list[Underspec] = []
            else:
                got = self.scope_year(scope)
                if got is None:
                    return None
                gy, ny, phrase, us, readings = got
                uss = [us]
            co = self.fin_company(gy, also=(ny,))
            q = self.fin_intent_q(gy, co) if intent else self.fin_company_q(co)
            g = n = None
            if intent:
                g, n = self.intent_pick(q)
            gt, nt = f"enterprise_finance_{gy}", f"enterprise_finance_{ny}"
            s = None
            if not_exist:
                s = self.name_part(q, gt, measure=g)
                if s is None or not self.rows(
                    f"SELECT 1 FROM {nt} WHERE company_name = {sql_str(q.ent or '')}"
                ):
                    return None
                uss.append(Underspec(Label("not-exist", s, "enterprise"), q.ent or ""))
            if intent:
                uss.insert(0, Underspec(Label("intent"), q.measures[g][1]))
            if readings and not self.differ(
                [q.render_sql(f"enterprise_finance_{y}", measure=g) for y in readings],
                q.render_sql(nt, measure=g),
            ):
                return None
            parts = (
                ["intent"] * intent
                + [f"{scope}_year"] * (scope is not None)
                + ["not_exist"] * not_exist
            )
            return DomainDraft(
                f"{q.name}+{'+'.join(parts)}",
                "mixed",
                q.render_text(phrase, s),
                [gt],
                gold_sql=q.render_sql(gt, measure=g),
                naive_sql=q.render_sql(nt, s, measure=n),
                underspecs=uss,
            )

        return make

    def _mx_loc(
        self, kind: str, intent: bool, scope: tuple[str, str] | None, not_exist: bool
    ) -> Callable[[], DomainDraft | None]:
        def make() -> DomainDraft | None:
            uss: list[Underspec] = []
            prefix = ""
            readings: list[District] = []
            if scope is None:
                gold_d = naive_d = self.pick_district()
                loc_text = self.loc(gold_d.city, gold_d.name)
            else:
                tkind = "auctions" if kind in ("auctions", "bidder") else "sales"
                got = self.scope_loc(*scope, tkind)
                if got is None:
                    return None
                gold_d, naive_d, prefix, loc_text, us, readings = got
                uss.append(us)
            q = self.loc_intent_q(kind, gold_d) if intent else self.loc_q(kind, gold_d)
            if q is None:
                return None
            if scope is not None and q.ent is not None and not not_exist:
                return None  # a named entity of one district may not exist in the others
            g = n = None
            if intent:
                g, n = self.intent_pick(q)
            gt, nt = self.table_of(kind, gold_d), self.table_of(kind, naive_d)
            s = None
            if not_exist:
                if scope is not None:
                    return None  # a family lives in one district table
                s = self.name_part(q, gt, measure=g)
                if s is None:
                    return None
                uss.append(Underspec(Label("not-exist", s, q.ent_slot or ""), q.ent or ""))
            if intent:
                uss.insert(0, Underspec(Label("intent"), q.measures[g][1]))
            if readings and not self.differ(
                [q.render_sql(self.table_of(kind, d), measure=g) for d in readings],
                q.render_sql(nt, measure=g),
            ):
                return None
            parts = (
                ["intent"] * intent
                + (["_".join(scope)] if scope else [])
                + ["not_exist"] * not_exist
            )
            return DomainDraft(
                f"{q.name}+{'+'.join(parts)}",
                "mixed",
                prefix + q.render_text(loc_text, s),
                [gt],
                gold_sql=q.render_sql(gt, measure=g),
                naive_sql=q.render_sql(nt, s, measure=n),
                underspecs=uss,
                check=None if intent else q.render_check(gt),
            )

        return make


__all__ = ["Clarify"]
