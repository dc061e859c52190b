"""The built-in domain's well-specified reads and its TrustSQL unanswerable requests (the
attribute pools live in :data:`~clarisql.envs.suites.builtin.names.UNANSWERABLE`).
"""

from __future__ import annotations

from collections.abc import Callable

from clarisql.envs.suites.builtin import names as N
from clarisql.envs.suites.builtin.db import sql_str
from clarisql.envs.suites.builtin.phrasing import (
    MEASURES,
)
from clarisql.envs.suites.builtin.questions import Questions
from clarisql.envs.synth.domain import COLUMN_KINDS, DomainDraft


class Reads(Questions):
    """Makers of well-specified reads and of the five unanswerable kinds."""

    # ========================================================================================
    # well-specified
    # ========================================================================================
    def well_specified_makers(self) -> list[Callable[[], DomainDraft | None]]:
        return [
            self._ws_loc_maker("sales"),
            self._ws_fin_maker(True),
            self._ws_loc_maker("auctions"),
            self._ws_loc_maker("project"),
            self._ws_fin_maker(False),
            self._ws_loc_maker("developer"),
            self._ws_loc_maker("bidder"),
            self._ws_change,
            self._ws_loc_maker("sales"),
            self._ws_fin_maker(True),
            self._ws_loc_maker("auctions"),
            self._ws_parcel,
            self._ws_cross,
            self._attr_maker("finance", True),
            self._attr_maker("sales", True),
            self._attr_maker("auctions", True),
            self._attr_maker("finance", True),
            self._attr_maker("sales", True),
            self._attr_maker("auctions", True),
        ]

    # ========================================================================================
    # attribute questions: minimal pairs (the database decides whether the attribute exists)
    # ========================================================================================
    def _attr_maker(
        self, tkind: str, present: bool, kind: str | None = None
    ) -> Callable[[], DomainDraft | None]:
        """A question about one optional attribute of a ``tkind`` table: one this seed's
        database has (``present``: well-specified) or lacks (an unanswerable one of ``kind``);
        both from :data:`~.builtin_names.ATTR_TEMPLATES`."""
        rng = self.rng

        def make() -> DomainDraft | None:
            specs = [
                a
                for a in N.OPTIONAL_ATTRS
                if a[1] == tkind
                and (a[0] in self.w.attrs) == present
                and (kind is None or a[2] == kind)
            ]
            if not specs:
                return None
            col, _, akind, phrase, verb, naive = rng.choice(specs)
            tpl = rng.choice(N.ATTR_TEMPLATES[tkind])
            expr = col if present else naive
            if tkind == "finance":
                y = rng.choice(self.years)
                co = self.fin_company(y)
                t = f"enterprise_finance_{y}"
                text = tpl.format(a=phrase, v=verb, co=co, yp=self.year_phrase(y))
                sql = f"SELECT {expr} FROM {t} WHERE company_name = {sql_str(co)}"
            else:
                d = self.pick_district()
                loc = self.loc(d.city, d.name)
                if tkind == "sales":
                    t = d.sales
                    pj = rng.choice(
                        self.plain(self.col(f"SELECT DISTINCT project_name FROM {t} ORDER BY 1"))
                    )
                    text = tpl.format(a=phrase, v=verb, pj=pj, loc=loc)
                    sql = (
                        f"SELECT ROUND(AVG({expr}), 2) FROM {t} WHERE project_name = {sql_str(pj)}"
                    )
                else:
                    t = d.auctions
                    codes = self.col(f"SELECT parcel_code FROM {t} ORDER BY 1")
                    code = rng.choice(codes)
                    text = tpl.format(a=phrase, v=verb, code=code, loc=loc)
                    sql = f"SELECT {expr} FROM {t} WHERE parcel_code = '{code}'"
            if present:
                return DomainDraft(
                    f"attr_{tkind}", "well-specified", text, [t], gold_sql=sql, naive_sql=sql
                )
            return DomainDraft(
                col,
                f"unanswerable:{akind}",
                text,
                [],
                naive_sql=sql,
                unanswerable_kind=akind,
                attribute=col,
            )

        return make

    # ========================================================================================
    # unanswerable
    # ========================================================================================

    def _ws_loc_maker(self, kind: str) -> Callable[[], DomainDraft | None]:
        def make() -> DomainDraft | None:
            d = self.pick_district()
            q = self.loc_q(kind, d)
            if q is None:
                return None
            t = self.table_of(kind, d)
            sql = q.render_sql(t)
            return DomainDraft(
                q.name,
                "well-specified",
                q.render_text(self.loc(d.city, d.name)),
                [t],
                gold_sql=sql,
                naive_sql=sql,
                check=q.render_check(t),
            )

        return make

    def _ws_fin_maker(self, company: bool) -> Callable[[], DomainDraft | None]:

        def make() -> DomainDraft | None:
            y = self.rng.choice(self.years)
            q = self.fin_company_q(self.fin_company(y)) if company else self.fin_general_q(y)
            t = f"enterprise_finance_{y}"
            sql = q.render_sql(t)
            return DomainDraft(
                q.name,
                "well-specified",
                q.render_text(self.year_phrase(y)),
                [t],
                gold_sql=sql,
                naive_sql=sql,
            )

        return make

    def _ws_change(self) -> DomainDraft | None:
        y1, y2 = sorted(self.rng.sample(self.years, 2))
        co = self.fin_company(y1, also=(y2,))
        col = self.rng.choice(list(MEASURES))
        t1, t2 = f"enterprise_finance_{y1}", f"enterprise_finance_{y2}"
        diff = f"b.{col} - a.{col}" if col == "employees" else f"ROUND(b.{col} - a.{col}, 2)"
        sql = (
            f"SELECT {diff} FROM {t2} AS b, {t1} AS a "
            f"WHERE a.company_name = {sql_str(co)} AND b.company_name = {sql_str(co)}"
        )
        text = f"By how much did the {MEASURES[col][0]} of {co} change from {y1} to {y2}?"
        return DomainDraft(
            "finance_change", "well-specified", text, [t1, t2], gold_sql=sql, naive_sql=sql
        )

    def _ws_parcel(self) -> DomainDraft | None:
        d = self.pick_district()
        codes = self.col(f"SELECT parcel_code FROM {d.auctions} WHERE status = 'sold' ORDER BY 1")
        if not codes:
            return None
        code = self.rng.choice(codes)
        sql = f"SELECT winning_bidder, winning_bid FROM {d.auctions} WHERE parcel_code = '{code}'"
        text = (
            f"Who won the auction for parcel {code} {self.loc(d.city, d.name)}, and at what price?"
        )
        return DomainDraft(
            "auction_parcel_winner",
            "well-specified",
            text,
            [d.auctions],
            gold_sql=sql,
            naive_sql=sql,
        )

    def _ws_cross(self) -> DomainDraft | None:
        d = self.pick_district()
        y = self.rng.choice(self.years)
        t = f"enterprise_finance_{y}"
        codes = self.col(f"SELECT parcel_code FROM {d.auctions} WHERE status = 'sold' ORDER BY 1")
        if not codes:
            return None
        code = self.rng.choice(codes)
        col = self.rng.choice(list(MEASURES))
        sql = (
            f"SELECT {col} FROM {t} WHERE company_name = "
            f"(SELECT winning_bidder FROM {d.auctions} WHERE parcel_code = '{code}')"
        )
        text = (
            f"What {MEASURES[col][2]} the {y} {MEASURES[col][0]} of the company that won parcel {code} "
            f"{self.loc(d.city, d.name)}?"
        )
        return DomainDraft(
            "cross_parcel_winner_finance",
            "well-specified",
            text,
            [d.auctions, t],
            gold_sql=sql,
            naive_sql=sql,
        )

    def unanswerable_makers(self) -> dict[str, list[Callable[[], DomainDraft | None]]]:
        """Column-surface and column-related requests ask about an optional attribute this seed's
        database lacks (minimal pairs with the well-specified attribute questions); the other
        kinds come from :data:`~.builtin_names.UNANSWERABLE`."""
        out = {
            kind: [self._attr_maker(tk, False, kind) for tk in ("finance", "sales", "auctions")]
            for kind in ("column-surface", "column-related")
        }
        for kind, specs in N.UNANSWERABLE.items():
            out[kind] = [self.unanswerable_maker(kind, *spec) for spec in specs]
        return out

    def unanswerable_maker(
        self, kind: str, template: str, scope: str, text: str, naive: str
    ) -> Callable[[], DomainDraft | None]:
        rng = self.rng

        def make() -> DomainDraft | None:
            d = self.pick_district()
            loc = self.loc(d.city, d.name)
            if scope == "finance":
                y = rng.choice(self.years)
                co = self.fin_company(y)
                utterance = text.format(co=co, y=y)
                sql = (
                    f"SELECT {naive} FROM enterprise_finance_{y} WHERE company_name = {sql_str(co)}"
                )
            elif scope == "project":
                pj = rng.choice(
                    self.plain(self.col(f"SELECT DISTINCT project_name FROM {d.sales} ORDER BY 1"))
                )
                utterance = text.format(pj=pj, loc=loc)
                sql = f"SELECT {naive} FROM {d.sales} WHERE project_name = {sql_str(pj)}"
            elif scope == "parcel":
                codes = self.col(
                    f"SELECT parcel_code FROM {d.auctions} WHERE status = 'sold' ORDER BY 1"
                )
                if not codes:
                    return None
                code = rng.choice(codes)
                utterance = text.format(code=code, loc=loc)
                sql = f"SELECT {naive} FROM {d.auctions} WHERE parcel_code = '{code}'"
            else:
                utterance = text.format(city=d.city, district=d.name, loc=loc)
                sql = naive.format(
                    sales=d.sales, auctions=d.auctions, city=sql_str(d.city), last=self.years[-1]
                )
            return DomainDraft(
                template,
                f"unanswerable:{kind}",
                utterance,
                [],
                naive_sql=sql,
                unanswerable_kind=kind,
                attribute=template if kind in COLUMN_KINDS else None,
            )

        return make


__all__ = ["Reads"]
