"""The built-in domain's SELECT underspecification: vague requests (how did X do?) with the
measures they may mean and the user's answer to "which one?".
"""

from __future__ import annotations

from collections.abc import Callable

from clarisql.envs.suites.builtin.db import District
from clarisql.envs.suites.builtin.phrasing import (
    ENT,
    LOC,
    MEASURES,
    TBL,
    Q,
)
from clarisql.envs.suites.builtin.reads import Reads
from clarisql.envs.synth.domain import DomainDraft
from clarisql.envs.tasks import Label, Underspec


class Intents(Reads):
    """Intent templates (one vague request, several measures) and the ``select`` makers."""

    # ========================================================================================
    # select (intent)
    # ========================================================================================
    def fin_intent_q(self, year: int, company: str | None = None) -> Q:
        rng = self.rng
        k = 0 if company is not None else rng.randrange(1, 3)
        if k == 0:
            co = company or self.fin_company(year, also=(self.years[-1],))
            text = rng.choice(
                (
                    f"How did {ENT} do{LOC}?",
                    f"How did {ENT} perform{LOC}?",
                    f"How was {ENT} doing{LOC}?",
                    f"How big was {ENT}{LOC}?",
                    f"Give me the key figure for {ENT}{LOC}.",
                    f"Show me the headline number of {ENT}{LOC}.",
                )
            )
            measures = [
                (f"SELECT {col} FROM {TBL} WHERE company_name = {ENT}", MEASURES[col][1])
                for col in MEASURES
            ]
            return Q(
                "intent_finance_company", text, ent=co, ent_slot="enterprise", measures=measures
            )
        t = f"enterprise_finance_{year}"
        if k == 1:
            ind = rng.choice(self.col(f"SELECT DISTINCT industry FROM {t} ORDER BY 1"))
            text = rng.choice(
                (f"Which {ind} company did best{LOC}?", f"Who was the leading {ind} company{LOC}?")
            )
            measures = [
                (
                    f"SELECT company_name FROM {TBL} WHERE industry = '{ind}' ORDER BY {col} DESC LIMIT 1",
                    f"Rank them by {MEASURES[col][0]}",
                )
                for col in ("revenue", "net_profit", "total_assets", "employees")
            ]
            return Q("intent_finance_industry_top", text, measures=measures)
        city = rng.choice(
            self.col(f"SELECT city FROM {t} GROUP BY city HAVING COUNT(*) >= 4 ORDER BY 1")
        )
        text = f"Which were the three biggest companies based in {city}{LOC}?"
        measures = [
            (
                f"SELECT company_name FROM {TBL} WHERE city = '{city}' ORDER BY {col} DESC LIMIT 3",
                f"Biggest by {MEASURES[col][0]}",
            )
            for col in ("revenue", "total_assets", "employees")
        ]
        return Q("intent_finance_city_biggest", text, measures=measures)

    def loc_intent_q(self, kind: str, d: District) -> Q | None:
        """An intent question of ``kind`` (project, sales, developer, auctions, bidder) on ``d``."""
        make = {
            "project": self._intent_project,
            "sales": self._intent_sales,
            "developer": self._intent_developer,
            "auctions": self._intent_auctions,
        }.get(kind, self._intent_bidder)
        return make(d)

    def _intent_project(self, d: District) -> Q | None:
        rng = self.rng
        pj = rng.choice(
            self.plain(self.col(f"SELECT DISTINCT project_name FROM {d.sales} ORDER BY 1"))
        )
        w = f"WHERE project_name = {ENT}"
        measures = [
            (f"SELECT COUNT(*) FROM {TBL} {w}", "I want the number of sales"),
            (
                f"SELECT SUM(total_price) FROM {TBL} {w}",
                "I want the total sales value, the sum of the total price",
            ),
            (
                f"SELECT ROUND(AVG(unit_price), 2) FROM {TBL} {w}",
                "I want the average unit price",
            ),
            (
                f"SELECT ROUND(SUM(area_sqm), 1) FROM {TBL} {w}",
                "I want the total area sold in square metres",
            ),
        ]
        text = rng.choice((f"How did {ENT} do {LOC}?", f"How is {ENT} selling {LOC}?"))
        return Q("intent_project", text, ent=pj, ent_slot="project", measures=measures)

    def _intent_sales(self, d: District) -> Q | None:
        rng = self.rng
        y = rng.choice(
            self.col(f"SELECT DISTINCT substr(sale_date, 1, 4) FROM {d.sales} ORDER BY 1")
        )
        w = f"WHERE sale_date BETWEEN '{y}-01-01' AND '{y}-12-31'"
        measures = [
            (f"SELECT COUNT(*) FROM {TBL} {w}", "I want the number of sales"),
            (
                f"SELECT ROUND(AVG(unit_price), 2) FROM {TBL} {w}",
                "I want the average unit price",
            ),
            (
                f"SELECT SUM(total_price) FROM {TBL} {w}",
                "I want the total sales value, the sum of the total price",
            ),
        ]
        text = rng.choice(
            (
                f"How was the property market {LOC} in {y}?",
                f"What did the housing market look like {LOC} in {y}?",
            )
        )
        return Q("intent_market", text, measures=measures)

    def _intent_developer(self, d: District) -> Q | None:
        rng = self.rng
        dev = rng.choice(
            self.plain(self.col(f"SELECT DISTINCT developer FROM {d.sales} ORDER BY 1"))
        )
        w = f"WHERE developer = {ENT}"
        measures = [
            (f"SELECT COUNT(*) FROM {TBL} {w}", "I want the number of sales"),
            (
                f"SELECT SUM(total_price) FROM {TBL} {w}",
                "I want the total sales value, the sum of the total price",
            ),
            (
                f"SELECT COUNT(DISTINCT project_name) FROM {TBL} {w}",
                "I want the number of projects it sold",
            ),
        ]
        return Q(
            "intent_developer",
            f"How did {ENT} do {LOC}?",
            ent=dev,
            ent_slot="enterprise",
            measures=measures,
        )

    def _intent_auctions(self, d: District) -> Q | None:
        rng = self.rng
        use = rng.choice(
            self.col(f"SELECT DISTINCT land_use FROM {d.auctions} WHERE status = 'sold' ORDER BY 1")
        )
        w = f"WHERE land_use = '{use}'"
        measures = [
            (f"SELECT COUNT(*) FROM {TBL} {w}", "I want the number of auctions"),
            (f"SELECT MAX(winning_bid) FROM {TBL} {w}", "I want the highest winning bid"),
            (
                f"SELECT ROUND(SUM(area_sqm), 1) FROM {TBL} {w}",
                "I want the total land area in square metres",
            ),
            (
                f"SELECT ROUND(AVG(reserve_price), 2) FROM {TBL} {w}",
                "I want the average reserve price",
            ),
        ]
        text = rng.choice(
            (
                f"Tell me about the {use} land auctions {LOC}.",
                f"What about {use} land auctions {LOC}?",
            )
        )
        return Q("intent_land_use", text, measures=measures)

    def _intent_bidder(self, d: District) -> Q | None:
        rng = self.rng
        bidders = self.col(
            f"SELECT DISTINCT winning_bidder FROM {d.auctions} WHERE winning_bidder IS NOT NULL ORDER BY 1"
        )
        if not bidders:
            return None
        w = f"WHERE winning_bidder = {ENT}"
        measures = [
            (f"SELECT COUNT(*) FROM {TBL} {w}", "I want the number of auctions it won"),
            (f"SELECT SUM(winning_bid) FROM {TBL} {w}", "I want the total of its winning bids"),
            (
                f"SELECT ROUND(SUM(area_sqm), 1) FROM {TBL} {w}",
                "I want the total land area it won in square metres",
            ),
        ]
        return Q(
            "intent_bidder",
            f"How did {ENT} do at the land auctions {LOC}?",
            ent=rng.choice(self.plain(bidders)),
            ent_slot="enterprise",
            measures=measures,
        )

    def intent_pick(self, q: Q) -> tuple[int, int]:
        gold = self.rng.randrange(len(q.measures))
        naive = 0 if gold != 0 else 1
        return gold, naive

    def select_makers(self) -> list[Callable[[], DomainDraft | None]]:
        def fin(company: bool) -> Callable[[], DomainDraft | None]:
            return lambda: fin_make(company)

        def fin_make(company: bool) -> DomainDraft | None:
            y = self.rng.choice(self.years)
            q = self.fin_intent_q(y, company=self.fin_company(y) if company else None)
            g, n = self.intent_pick(q)
            t = f"enterprise_finance_{y}"
            return DomainDraft(
                q.name,
                "select",
                q.render_text(self.year_phrase(y)),
                [t],
                gold_sql=q.render_sql(t, measure=g),
                naive_sql=q.render_sql(t, measure=n),
                underspecs=[Underspec(Label("intent"), q.measures[g][1])],
            )

        def loc(kind: str) -> Callable[[], DomainDraft | None]:
            def make() -> DomainDraft | None:
                d = self.pick_district()
                q = self.loc_intent_q(kind, d)
                if q is None:
                    return None
                g, n = self.intent_pick(q)
                t = self.table_of(kind, d)
                return DomainDraft(
                    q.name,
                    "select",
                    q.render_text(self.loc(d.city, d.name)),
                    [t],
                    gold_sql=q.render_sql(t, measure=g),
                    naive_sql=q.render_sql(t, measure=n),
                    underspecs=[Underspec(Label("intent"), q.measures[g][1])],
                )

            return make

        return [
            fin(True),
            loc("project"),
            loc("auctions"),
            fin(False),
            loc("sales"),
            loc("developer"),
            fin(True),
            loc("bidder"),
        ]


__all__ = ["Intents"]
