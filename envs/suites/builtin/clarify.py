"""The built-in domain's FROM scope (Missing / Error / Unmatch for the city, district and year
slots), WHERE not-exist (abbreviated or misspelled names) and mixed underspecification.
"""

from __future__ import annotations

from collections.abc import Callable

from clarisql.envs.suites.builtin import names as N
from clarisql.envs.suites.builtin.db import FIN_YEARS, District, possessive
from clarisql.envs.suites.builtin.intents import Intents
from clarisql.envs.suites.builtin.phrasing import (
    YEAR_TYPOS,
    nearest_year,
)
from clarisql.envs.synth.domain import DomainDraft, misspell
from clarisql.envs.tasks import Label, Underspec


class Clarify(Intents):
    """Makers of ``from``, ``where`` and ``mixed`` drafts (scope triples, name surfaces)."""

    # ========================================================================================
    # from (scope)
    # ========================================================================================
    def scope_loc(
        self, kind: str, slot: str
    ) -> tuple[District, District, str, str, Underspec] | None:
        """(gold district, naive district, utterance prefix, loc phrase, underspec)."""
        make = {
            ("Missing", "district"): self._scope_missing_district,
            ("Missing", "city"): self._scope_missing_city,
            ("Error", "city"): self._scope_error_city,
            ("Error", "district"): self._scope_error_district,
            ("Unmatch", "city"): self._scope_unmatch_city,
            ("Unmatch", "district"): self._scope_unmatch_district,
        }.get((kind, slot))
        if make is None:
            raise ValueError((kind, slot))
        return make()

    def _scope_missing_district(self) -> tuple[District, District, str, str, Underspec] | None:
        rng, w = self.rng, self.w
        city = rng.choice(w.cities)
        gold = rng.choice(w.districts[city][1:])
        naive = w.districts[city][0]
        prefix = rng.choice(
            (
                f"I'm looking at one of {possessive(city)} districts. ",
                f"I'm reviewing a district in {city}. ",
                f"I'm analysing a district of {city}. ",
            )
        )
        return (
            gold,
            naive,
            prefix,
            "there",
            Underspec(Label("Missing", "", "district"), gold.name),
        )

    def _scope_missing_city(self) -> tuple[District, District, str, str, Underspec] | None:
        rng, w = self.rng, self.w
        shared = [n for n in N.DISTRICT_POOL if len(w.cities_with(n)) >= 2]
        name = rng.choice(shared)
        cities = w.cities_with(name)
        city = rng.choice(cities[1:])
        return (
            w.district(city, name),
            w.district(cities[0], name),
            "",
            f"in the {name} district",
            Underspec(Label("Missing", "", "city"), city),
        )

    def _scope_error_city(self) -> tuple[District, District, str, str, Underspec] | None:
        rng, w = self.rng, self.w
        shared = [n for n in N.DISTRICT_POOL if len(w.cities_with(n)) >= 2]
        name = rng.choice(shared)
        cities = w.cities_with(name)
        city = rng.choice(cities)
        other = next(c for c in cities if c != city)
        typo = misspell(rng, city, [*w.cities, *w.absent_cities])
        if typo is None:
            return None
        return (
            w.district(city, name),
            w.district(other, name),
            "",
            self.loc(typo, name),
            Underspec(Label("Error", typo, "city"), city),
        )

    def _scope_error_district(self) -> tuple[District, District, str, str, Underspec] | None:
        rng, w = self.rng, self.w
        city = rng.choice(w.cities)
        ds = w.districts[city]
        if rng.random() < 0.5:  # misspelled district
            gold = rng.choice(ds)
            typo = misspell(rng, gold.name, list(N.DISTRICT_POOL))
            if typo is None:
                return None
            naive = next(d for d in ds if d is not gold)
            return (
                gold,
                naive,
                "",
                self.loc(city, typo),
                Underspec(Label("Error", typo, "district"), gold.name),
            )
        # a district of another city
        mine = {d.name for d in ds}
        elsewhere = [n for n in N.DISTRICT_POOL if n not in mine and w.cities_with(n)]
        wrong = rng.choice(elsewhere)
        gold = rng.choice(ds)
        naive = w.district(w.cities_with(wrong)[0], wrong)
        return (
            gold,
            naive,
            "",
            self.loc(city, wrong),
            Underspec(Label("Error", wrong, "district"), gold.name),
        )

    def _scope_unmatch_city(self) -> tuple[District, District, str, str, Underspec] | None:
        rng, w = self.rng, self.w
        shared = [n for n in N.DISTRICT_POOL if len(w.cities_with(n)) >= 2]
        name = rng.choice(shared)
        cities = w.cities_with(name)
        city = rng.choice(cities[1:])
        absent = rng.choice(w.absent_cities)
        return (
            w.district(city, name),
            w.district(cities[0], name),
            "",
            self.loc(absent, name),
            Underspec(Label("Unmatch", absent, "city"), city),
        )

    def _scope_unmatch_district(self) -> tuple[District, District, str, str, Underspec] | None:
        rng, w = self.rng, self.w
        city = rng.choice(w.cities)
        gold = rng.choice(w.districts[city][1:])
        surface = rng.choice(N.UNMATCHED_DISTRICTS)
        return (
            gold,
            w.districts[city][0],
            "",
            self.loc(city, surface),
            Underspec(Label("Unmatch", surface, "district"), gold.name),
        )

    def scope_year(self, kind: str) -> tuple[int, int, str, Underspec]:
        """(gold year, naive year, year phrase, underspec) for a finance question."""
        rng = self.rng
        if kind == "Missing":
            y = rng.choice(FIN_YEARS[:-1])
            return y, FIN_YEARS[-1], "", Underspec(Label("Missing", "", "year"), str(y))
        y = rng.choice(sorted(YEAR_TYPOS))
        s = rng.choice(YEAR_TYPOS[y])
        return (
            y,
            nearest_year(s),
            self.year_phrase(s),
            Underspec(Label("Unmatch", s, "year"), str(y)),
        )

    def from_makers(self, kind: str) -> list[Callable[[], DomainDraft | None]]:
        def loc(slot: str) -> Callable[[], DomainDraft | None]:
            def make() -> DomainDraft | None:
                tkind = self.rng.choice(("sales", "auctions"))
                got = self.scope_loc(kind, slot)
                if got is None:
                    return None
                gold_d, naive_d, prefix, loc_text, us = got
                q = self.loc_q(tkind, gold_d)
                if q is None:
                    return None
                gt, nt = self.table_of(tkind, gold_d), self.table_of(tkind, naive_d)
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
            gy, ny, phrase, us = self.scope_year(kind)
            q = self.fin_q(gy)
            gt, nt = f"enterprise_finance_{gy}", f"enterprise_finance_{ny}"
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
            return [loc("city"), loc("district")]
        return [year, loc("city"), loc("district")]

    # ========================================================================================
    # where (not-exist)
    # ========================================================================================
    def where_makers(self) -> list[Callable[[], DomainDraft | None]]:
        def fin() -> DomainDraft | None:
            y = self.rng.choice(FIN_YEARS)
            q = self.fin_company_q(self.fin_company(y))
            s = self.surface(q)
            if s is None:
                return None
            t = f"enterprise_finance_{y}"
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
                s = self.surface(q)
                if s is None:
                    return None
                t = self.table_of(kind, d)
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

        return [fin, loc("project"), loc("developer"), fin, loc("project"), loc("bidder")]

    # ========================================================================================
    # mixed
    # ========================================================================================
    def mixed_makers(self) -> list[Callable[[], DomainDraft | None]]:
        return [
            self._mx_fin(True, "Missing", False),
            self._mx_fin(False, "Missing", True),
            self._mx_loc("project", False, ("Error", "district"), True),
            self._mx_fin(True, None, True),
            self._mx_loc("auctions", True, ("Missing", "district"), False),
            self._mx_fin(False, "Unmatch", True),
            self._mx_loc("developer", False, ("Error", "city"), True),
            self._mx_loc("project", True, None, True),
            self._mx_loc("sales", True, ("Missing", "city"), False),
            self._mx_loc("bidder", False, ("Unmatch", "city"), True),
        ]

    def _mx_fin(
        self, intent: bool, scope: str | None, not_exist: bool
    ) -> Callable[[], DomainDraft | None]:
        def make() -> DomainDraft | None:
            if scope is None:
                gy = ny = self.rng.choice(FIN_YEARS)
                phrase = self.year_phrase(gy)
                uss: list[Underspec] = []
            else:
                gy, ny, phrase, us = self.scope_year(scope)
                uss = [us]
            co = self.fin_company(gy, also=(ny,))
            q = self.fin_intent_q(gy, co) if intent else self.fin_company_q(co)
            g = n = None
            if intent:
                g, n = self.intent_pick(q)
                uss.insert(0, Underspec(Label("intent"), q.measures[g][1]))
            s = None
            if not_exist:
                s = self.surface(q)
                if s is None:
                    return None
                uss.append(Underspec(Label("not-exist", s, "enterprise"), co))
            gt, nt = f"enterprise_finance_{gy}", f"enterprise_finance_{ny}"
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
            if scope is None:
                gold_d = naive_d = self.pick_district()
                loc_text = self.loc(gold_d.city, gold_d.name)
            else:
                got = self.scope_loc(*scope)
                if got is None:
                    return None
                gold_d, naive_d, prefix, loc_text, us = got
                uss.append(us)
            q = self.loc_intent_q(kind, gold_d) if intent else self.loc_q(kind, gold_d)
            if q is None:
                return None
            g = n = None
            if intent:
                g, n = self.intent_pick(q)
                uss.insert(0, Underspec(Label("intent"), q.measures[g][1]))
            s = None
            if not_exist:
                s = self.surface(q)
                if s is None:
                    return None
                uss.append(Underspec(Label("not-exist", s, q.ent_slot or ""), q.ent or ""))
            gt, nt = self.table_of(kind, gold_d), self.table_of(kind, naive_d)
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
