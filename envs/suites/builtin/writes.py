"""The built-in domain's write requests (DySQL-Bench style golden action lists), some of them
underspecified (a missing year or district, a misspelled district, an abbreviated name).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from clarisql.envs.suites.builtin import names as N
from clarisql.envs.suites.builtin.clarify import Clarify
from clarisql.envs.suites.builtin.db import District, project_name, sql_str
from clarisql.envs.synth.domain import DomainDraft
from clarisql.envs.tasks import Label, Underspec


def _write(template: str, text: str, actions: list[str], tables: list[str]) -> DomainDraft:
    return DomainDraft(template, "write", text, tables, gold_actions=actions)


def _write_under(
    template: str,
    text: str,
    gold: list[str],
    naive: list[str],
    tables: list[str],
    uss: list[Underspec],
) -> DomainDraft:
    return DomainDraft(
        template, "write", text, tables, gold_actions=gold, naive_actions=naive, underspecs=uss
    )


class BuiltinMakers(Clarify):
    """Every maker of the built-in domain (this class closes the chain of mixins:
    phrasing -> questions -> reads -> intents -> clarify -> writes); write makers here."""

    # ========================================================================================
    # write
    # ========================================================================================
    def new_date(self) -> str:
        return (date(2024, 1, 1) + timedelta(days=self.rng.randrange(300))).isoformat()

    def sale_insert(
        self, table: str, project: str, developer: str, ptype: str, status: str
    ) -> tuple[str, str]:
        """(utterance tail, INSERT statement) for one new sale."""
        rng = self.rng
        avg = self.rows(f"SELECT AVG(unit_price) FROM {table}")[0][0]
        area = rng.randint(50, 180)
        unit = int(round(avg * rng.uniform(0.95, 1.15), -2))
        day = self.new_date()
        sql = (
            f"INSERT INTO {table} (project_name, developer, property_type, sale_date, area_sqm, "
            f"unit_price, total_price, status) VALUES ({sql_str(project)}, {sql_str(developer)}, '{ptype}', "
            f"'{day}', {area}, {unit}, {area * unit}, '{status}')"
        )
        text = f"a {area} sqm {ptype} unit sold on {day} at {unit:,} per sqm, status {status}"
        return text, sql

    def new_parcel(self, city: str) -> tuple[str, str, float, float, int, str]:
        """(code, land use, area, plot ratio, reserve price, date) of a new parcel in ``city``."""
        rng = self.rng
        code = f"{self.w.city_code[city]}24-{rng.randint(500, 899)}"
        use = rng.choice(N.LAND_USES)
        area = float(rng.randrange(300, 8000) * 10)
        ratio = round(rng.uniform(1.5, 4.0), 1)
        reserve = rng.randrange(20, 900) * 1_000_000
        return code, use, area, ratio, reserve, self.new_date()

    def write_makers(self) -> list[Callable[[], DomainDraft | None]]:
        """Well-specified writes, in the order they are tried (round-robin)."""
        self._finance_inserts = 0
        return [
            self._w_insert_sale,
            self._w_parcel_sold,
            self._w_employees,
            self._w_status_change(
                "write_delete_cancelled",
                "cancelled",
                "",
                "Delete the cancelled sales of {pj} {loc}.",
            ),
            self._w_insert_new_project,
            self._w_parcel_withdrawn,
            self._w_profit,
            self._w_status_change(
                "write_complete_pending",
                "pending",
                "completed",
                "All pending sales of {pj} {loc} have closed; mark them as completed.",
            ),
            self._w_price_rise,
            self._w_insert_finance_limited,
            self._w_rename_developer,
            self._w_delete_withdrawn,
            self._w_cancel_sale,
        ]

    def _w_insert_sale(self) -> DomainDraft | None:
        rng = self.rng
        d = self.pick_district()
        pj, dev, ptype = rng.choice(
            self.rows(
                f"SELECT project_name, developer, property_type FROM {d.sales} GROUP BY project_name ORDER BY project_name"
            )
        )
        tail, ins = self.sale_insert(d.sales, pj, dev, ptype, rng.choice(("completed", "pending")))
        text = f"Please record a new sale of {pj} {self.loc(d.city, d.name)}: {tail}."
        read = f"SELECT developer, property_type FROM {d.sales} WHERE project_name = {sql_str(pj)} LIMIT 1"
        return _write("write_insert_sale", text, [read, ins], [d.sales])

    def _w_insert_new_project(self) -> DomainDraft | None:
        rng = self.rng
        d = self.pick_district()
        pj = project_name(rng, set(self.w.projects))
        dev = rng.choice(self.w.developers)
        tail, ins = self.sale_insert(d.sales, pj, dev, "residential", "completed")
        text = f"Record the first sale of the new project {pj} by {dev} {self.loc(d.city, d.name)}: {tail}."
        return _write("write_insert_new_project_sale", text, [ins], [d.sales])

    def _w_parcel_sold(self) -> DomainDraft | None:
        rng = self.rng
        d = self.pick_district()
        rows = self.rows(
            f"SELECT parcel_code, reserve_price, land_use FROM {d.auctions} WHERE status = 'unsold' ORDER BY 1"
        )
        if not rows:
            return None
        code, reserve, use = rng.choice(rows)
        pool = (
            self.w.developers
            if use != "industrial"
            else [c.name for c in self.w.companies if c.industry == "manufacturing"]
        )
        bidder = rng.choice(pool)
        bid = int(round(reserve * rng.uniform(1.0, 1.3), -4))
        text = (
            f"Parcel {code} {self.loc(d.city, d.name)} was re-auctioned and sold to {bidder} "
            f"for {bid:,}. Please update its record."
        )
        act = (
            f"UPDATE {d.auctions} SET status = 'sold', winning_bidder = {sql_str(bidder)}, "
            f"winning_bid = {bid} WHERE parcel_code = '{code}'"
        )
        return _write("write_parcel_sold", text, [act], [d.auctions])

    def _w_parcel_withdrawn(self) -> DomainDraft | None:
        rng = self.rng
        d = self.pick_district()
        codes = self.col(f"SELECT parcel_code FROM {d.auctions} WHERE status = 'unsold' ORDER BY 1")
        if not codes:
            return None
        code = rng.choice(codes)
        text = f"Parcel {code} {self.loc(d.city, d.name)} has been withdrawn from auction; update its status."
        act = f"UPDATE {d.auctions} SET status = 'withdrawn' WHERE parcel_code = '{code}'"
        return _write("write_parcel_withdrawn", text, [act], [d.auctions])

    def _w_employees(self) -> DomainDraft | None:
        rng = self.rng
        y = rng.choice(self.years)
        co = self.fin_company(y)
        t = f"enterprise_finance_{y}"
        cur = self.rows(f"SELECT employees FROM {t} WHERE company_name = {sql_str(co)}")[0][0]
        n = int(round(cur * rng.uniform(0.8, 1.2))) or 1
        text = f"Correct the {y} employee count of {co} to {n:,}."
        act = f"UPDATE {t} SET employees = {n} WHERE company_name = {sql_str(co)}"
        return _write("write_fix_employees", text, [act], [t])

    def _w_profit(self) -> DomainDraft | None:
        rng = self.rng
        y = rng.choice(self.years)
        co = self.fin_company(y)
        t = f"enterprise_finance_{y}"
        cur = self.rows(f"SELECT net_profit FROM {t} WHERE company_name = {sql_str(co)}")[0][0]
        v = round(cur * rng.uniform(0.7, 0.95), 2)
        text = f"The {y} net profit of {co} was restated to {v} million; please update it."
        act = f"UPDATE {t} SET net_profit = {v} WHERE company_name = {sql_str(co)}"
        return _write("write_restate_profit", text, [act], [t])

    def _w_status_change(
        self, template: str, frm: str, to: str, phrase: str
    ) -> Callable[[], DomainDraft | None]:
        rng = self.rng

        def make() -> DomainDraft | None:
            d = self.pick_district()
            pjs = self.col(
                f"SELECT DISTINCT project_name FROM {d.sales} WHERE status = '{frm}' ORDER BY 1"
            )
            if not pjs:
                return None
            pj = rng.choice(pjs)
            text = phrase.format(pj=pj, loc=self.loc(d.city, d.name))
            w = f"WHERE project_name = {sql_str(pj)} AND status = '{frm}'"
            read = f"SELECT sale_id FROM {d.sales} {w}"
            act = (
                f"DELETE FROM {d.sales} {w}"
                if to == ""
                else f"UPDATE {d.sales} SET status = '{to}' {w}"
            )
            return _write(template, text, [read, act], [d.sales])

        return make

    def _pending_project(self) -> tuple[District, str] | None:
        """A district and one of its projects with pending sales (None if it has none)."""
        d = self.pick_district()
        pjs = self.col(
            f"SELECT DISTINCT project_name FROM {d.sales} WHERE status = 'pending' ORDER BY 1"
        )
        return (d, self.rng.choice(pjs)) if pjs else None

    def _w_price_rise(self) -> DomainDraft | None:
        rng = self.rng
        picked = self._pending_project()
        if picked is None:
            return None
        d, pj = picked
        pct = rng.choice((2, 3, 5, 8, 10))
        f = 1 + pct / 100
        text = (
            f"Raise the unit price of all pending sales of {pj} {self.loc(d.city, d.name)} by {pct}% "
            "(rounded to whole currency units) and recompute their total prices."
        )
        act = (
            f"UPDATE {d.sales} SET unit_price = CAST(ROUND(unit_price * {f}) AS INTEGER), "
            f"total_price = CAST(ROUND(area_sqm * ROUND(unit_price * {f})) AS INTEGER) "
            f"WHERE project_name = {sql_str(pj)} AND status = 'pending'"
        )
        return _write("write_price_rise", text, [act], [d.sales])

    def _w_insert_finance(self) -> DomainDraft | None:
        rng = self.rng
        prev, last = self.years[-2], self.years[-1]
        missing = [n for n in self.fin_companies[prev] if n not in self.fin_companies[last]]
        co = rng.choice(missing)
        ind, city, rev = self.rows(
            f"SELECT industry, city, revenue FROM enterprise_finance_{prev} WHERE company_name = {sql_str(co)}"
        )[0]
        r = round(rev * rng.uniform(0.9, 1.2), 2)
        np_ = round(r * rng.uniform(0.02, 0.15), 2)
        ta = round(r * rng.uniform(1.0, 3.0), 2)
        tl = round(ta * rng.uniform(0.4, 0.8), 2)
        emp = rng.randint(200, 20000)
        text = (
            f"Add the {last} figures of {co}: revenue {r} million, net profit {np_} million, "
            f"total assets {ta} million, total liabilities {tl} million and {emp:,} employees."
        )
        read = f"SELECT industry, city FROM enterprise_finance_{prev} WHERE company_name = {sql_str(co)}"
        ins = (
            f"INSERT INTO enterprise_finance_{last} (company_name, industry, city, revenue, net_profit, "
            f"total_assets, total_liabilities, employees) VALUES ({sql_str(co)}, {sql_str(ind)}, {sql_str(city)}, "
            f"{r}, {np_}, {ta}, {tl}, {emp})"
        )
        return _write(
            "write_insert_finance",
            text,
            [read, ins],
            [f"enterprise_finance_{prev}", f"enterprise_finance_{last}"],
        )

    def _w_rename_developer(self) -> DomainDraft | None:
        rng = self.rng
        d = self.pick_district()
        dev = rng.choice(self.col(f"SELECT DISTINCT developer FROM {d.sales} ORDER BY 1"))
        stem = self.company[dev].prefix
        new = f"{stem} {rng.choice(N.RENAMED_SUFFIXES)}"
        text = f"{dev} has been renamed {new}. Update the developer name on its sales {self.loc(d.city, d.name)}."
        read = f"SELECT COUNT(*) FROM {d.sales} WHERE developer = {sql_str(dev)}"
        act = f"UPDATE {d.sales} SET developer = {sql_str(new)} WHERE developer = {sql_str(dev)}"
        return _write("write_rename_developer", text, [read, act], [d.sales])

    def _w_delete_withdrawn(self) -> DomainDraft | None:
        d = self.pick_district()
        text = f"Remove the withdrawn land auction records {self.loc(d.city, d.name)}."
        return _write(
            "write_delete_withdrawn",
            text,
            [f"DELETE FROM {d.auctions} WHERE status = 'withdrawn'"],
            [d.auctions],
        )

    def _w_cancel_sale(self) -> DomainDraft | None:
        rng = self.rng
        d = self.pick_district()
        sid = rng.choice(
            self.col(f"SELECT sale_id FROM {d.sales} WHERE status = 'pending' ORDER BY 1") or [0]
        )
        if not sid:
            return None
        text = f"Sale number {sid} {self.loc(d.city, d.name)} has fallen through; mark it as cancelled."
        act = f"UPDATE {d.sales} SET status = 'cancelled' WHERE sale_id = {sid}"
        return _write("write_cancel_sale", text, [act], [d.sales])

    def _w_insert_finance_limited(self) -> DomainDraft | None:
        if self._finance_inserts >= 3:
            return None
        dft = self._w_insert_finance()
        if dft is not None and not self.run.taken(dft.utterance):
            self._finance_inserts += 1
        return dft

    def write_underspec_makers(self) -> list[Callable[[], DomainDraft | None]]:
        """Underspecified writes (a missing or misspelled scope, an abbreviated name)."""
        return [
            self._wu_employees_missing_year,
            self._wu_profit_not_exist,
            self._wu_complete_not_exist,
            self._wu_parcel_missing_district,
            self._wu_new_project_error_district,
        ]

    def _wu_employees_missing_year(self) -> DomainDraft | None:
        rng = self.rng
        y = rng.choice(self.years[:-1])
        co = self.fin_company(y, also=(self.years[-1],))
        cur = self.rows(
            f"SELECT employees FROM enterprise_finance_{y} WHERE company_name = {sql_str(co)}"
        )[0][0]
        n = int(round(cur * rng.uniform(0.8, 1.2))) or 1
        text = f"Correct the employee count of {co} to {n:,}; the reported figure was wrong."
        act = (
            f"UPDATE enterprise_finance_{{}} SET employees = {n} WHERE company_name = {sql_str(co)}"
        )
        return _write_under(
            "write_fix_employees+Missing_year",
            text,
            [act.format(y)],
            [act.format(self.years[-1])],
            [f"enterprise_finance_{y}"],
            [Underspec(Label("Missing", "", "year"), str(y))],
        )

    def _wu_profit_not_exist(self) -> DomainDraft | None:
        rng = self.rng
        y = rng.choice(self.years)
        co = self.fin_company(y)
        s = self.company_surface(co)
        if s is None:
            return None
        t = f"enterprise_finance_{y}"
        cur = self.rows(f"SELECT net_profit FROM {t} WHERE company_name = {sql_str(co)}")[0][0]
        v = round(cur * rng.uniform(0.7, 0.95), 2)
        text = f"Restate the {y} net profit of {s} to {v} million."
        act = f"UPDATE {t} SET net_profit = {v} WHERE company_name = %s"
        return _write_under(
            "write_restate_profit+not_exist",
            text,
            [act % sql_str(co)],
            [act % sql_str(s)],
            [t],
            [Underspec(Label("not-exist", s, "enterprise"), co)],
        )

    def _wu_complete_not_exist(self) -> DomainDraft | None:
        picked = self._pending_project()
        if picked is None:
            return None
        d, pj = picked
        s = self.project_surface(pj)
        if s is None:
            return None
        text = f"Mark all pending sales of {s} {self.loc(d.city, d.name)} as completed."
        act = f"UPDATE {d.sales} SET status = 'completed' WHERE project_name = %s AND status = 'pending'"
        return _write_under(
            "write_complete_pending+not_exist",
            text,
            [act % sql_str(pj)],
            [act % sql_str(s)],
            [d.sales],
            [Underspec(Label("not-exist", s, "project"), pj)],
        )

    def _wu_parcel_missing_district(self) -> DomainDraft | None:
        rng = self.rng
        city = rng.choice(self.w.cities)
        ds = self.w.districts[city]
        gold = rng.choice(ds[1:])
        code, use, area, ratio, reserve, day = self.new_parcel(city)
        text = (
            f"Add a new land auction record in {city}: parcel {code}, {use} use, {area:,.0f} sqm, "
            f"plot ratio {ratio}, reserve price {reserve:,}, auctioned on {day}, unsold."
        )
        act = (
            "INSERT INTO {} (parcel_code, land_use, area_sqm, plot_ratio, reserve_price, "
            f"auction_date, status) VALUES ('{code}', '{use}', {area}, {ratio}, {reserve}, "
            f"'{day}', 'unsold')"
        )
        return _write_under(
            "write_insert_parcel+Missing_district",
            text,
            [act.format(gold.auctions)],
            [act.format(ds[0].auctions)],
            [gold.auctions],
            [Underspec(Label("Missing", "", "district"), gold.name)],
        )

    def _wu_new_project_error_district(self) -> DomainDraft | None:
        rng = self.rng
        got = self.scope_loc("Error", "district")
        if got is None:
            return None
        gold_d, naive_d, _, loc_text, us, _ = got
        pj = project_name(rng, set(self.w.projects))
        dev = rng.choice(self.w.developers)
        tail, ins = self.sale_insert(gold_d.sales, pj, dev, "residential", "completed")
        text = f"Record the first sale of the new project {pj} by {dev} {loc_text}: {tail}."
        return _write_under(
            "write_insert_new_project_sale+Error_district",
            text,
            [ins],
            [ins.replace(gold_d.sales, naive_d.sales, 1)],
            [gold_d.sales],
            [us],
        )


__all__ = ["BuiltinMakers"]
