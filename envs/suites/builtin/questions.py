"""The built-in domain's read question templates: property sales, projects, developers, land
auctions, bidders (one table per city and district) and enterprise finance (one table per year).
"""

from __future__ import annotations

from clarisql.envs.suites.builtin import names as N
from clarisql.envs.suites.builtin.db import District
from clarisql.envs.suites.builtin.phrasing import (
    ENT,
    LOC,
    MEASURES,
    TBL,
    BuiltinBase,
    Q,
    top_unique,
)


class Questions(BuiltinBase):
    """Read templates per table kind: each returns a :class:`Q` over one table."""

    # --- question templates -------------------------------------------------------------------
    def sales_q(self, table: str) -> Q:
        rng = self.rng
        k = rng.randrange(7)
        if k == 0:
            y = rng.choice(
                self.col(f"SELECT DISTINCT substr(sale_date, 1, 4) FROM {table} ORDER BY 1")
            )
            return Q(
                "sales_count_year",
                f"How many property sales were recorded {LOC} in {y}?",
                f"SELECT COUNT(*) FROM {TBL} WHERE sale_date BETWEEN '{y}-01-01' AND '{y}-12-31'",
            )
        if k == 1:
            ptype = rng.choice(self.col(f"SELECT DISTINCT property_type FROM {table} ORDER BY 1"))
            return Q(
                "sales_avg_unit_price_type",
                f"What was the average unit price of {ptype} property sold {LOC}?",
                f"SELECT ROUND(AVG(unit_price), 2) FROM {TBL} WHERE property_type = '{ptype}'",
            )
        if k == 2:
            status = rng.choice(("cancelled", "pending"))
            phrase = "were cancelled" if status == "cancelled" else "are still pending"
            return Q(
                "sales_count_status",
                f"How many property sales {LOC} {phrase}?",
                f"SELECT COUNT(*) FROM {TBL} WHERE status = '{status}'",
            )
        if k == 3:
            return Q(
                "sales_max_total_price",
                f"What was the highest total price paid for a single property {LOC}?",
                f"SELECT MAX(total_price) FROM {TBL}",
            )
        if k == 4:
            return Q(
                "sales_top_project",
                f"Which project {LOC} recorded the most sales?",
                f"SELECT project_name FROM {TBL} GROUP BY project_name ORDER BY COUNT(*) DESC LIMIT 1",
                check=top_unique("project_name"),
            )
        if k == 5:
            y = rng.choice(
                self.col(f"SELECT DISTINCT substr(sale_date, 1, 4) FROM {table} ORDER BY 1")
            )
            return Q(
                "sales_area_year",
                f"What was the total floor area of the property sales recorded {LOC} in {y}, in square metres?",
                f"SELECT ROUND(SUM(area_sqm), 1) FROM {TBL} WHERE sale_date BETWEEN '{y}-01-01' AND '{y}-12-31'",
            )
        lo = rng.choice((3_000_000, 5_000_000, 8_000_000, 10_000_000))
        return Q(
            "sales_count_above",
            f"How many properties {LOC} sold for more than {lo:,} in total?",
            f"SELECT COUNT(*) FROM {TBL} WHERE total_price > {lo} AND status = 'completed'",
        )

    def project_q(self, table: str) -> Q:
        rng = self.rng
        pj = rng.choice(
            self.plain(self.col(f"SELECT DISTINCT project_name FROM {table} ORDER BY 1"))
        )
        k = rng.randrange(5)
        where = f"project_name = {ENT}"
        if k == 0:
            q = (
                "project_count",
                f"How many sales of {ENT} are recorded {LOC}?",
                f"SELECT COUNT(*) FROM {TBL} WHERE {where}",
            )
        elif k == 1:
            q = (
                "project_avg_unit_price",
                f"What was the average unit price of {ENT} {LOC}?",
                f"SELECT ROUND(AVG(unit_price), 2) FROM {TBL} WHERE {where}",
            )
        elif k == 2:
            q = (
                "project_completed_value",
                f"What is the total value of the completed sales of {ENT} {LOC}?",
                f"SELECT SUM(total_price) FROM {TBL} WHERE {where} AND status = 'completed'",
            )
        elif k == 3:
            q = (
                "project_developer",
                f"Which company developed {ENT} {LOC}?",
                f"SELECT DISTINCT developer FROM {TBL} WHERE {where}",
            )
        else:
            q = (
                "project_max_area",
                f"What was the largest unit sold in {ENT} {LOC}, in square metres?",
                f"SELECT MAX(area_sqm) FROM {TBL} WHERE {where}",
            )
        return Q(q[0], q[1], q[2], ent=pj, ent_slot="project")

    def developer_q(self, table: str) -> Q:
        rng = self.rng
        dev = rng.choice(self.plain(self.col(f"SELECT DISTINCT developer FROM {table} ORDER BY 1")))
        k = rng.randrange(3)
        where = f"developer = {ENT}"
        if k == 0:
            q = (
                "developer_total_value",
                f"What was the total sales value of {ENT} {LOC}?",
                f"SELECT SUM(total_price) FROM {TBL} WHERE {where}",
            )
        elif k == 1:
            q = (
                "developer_projects",
                f"Which projects has {ENT} sold {LOC}?",
                f"SELECT DISTINCT project_name FROM {TBL} WHERE {where}",
            )
        else:
            q = (
                "developer_count",
                f"How many sales contracts did {ENT} record {LOC}?",
                f"SELECT COUNT(*) FROM {TBL} WHERE {where}",
            )
        return Q(q[0], q[1], q[2], ent=dev, ent_slot="enterprise")

    def auction_q(self, table: str) -> Q:
        rng = self.rng
        k = rng.randrange(6)
        if k == 0:
            status = rng.choice(N.AUCTION_STATUSES)
            phrase = {
                "sold": "ended in a sale",
                "unsold": "ended unsold",
                "withdrawn": "were withdrawn",
            }[status]
            return Q(
                "auction_count_status",
                f"How many land auctions {LOC} {phrase}?",
                f"SELECT COUNT(*) FROM {TBL} WHERE status = '{status}'",
            )
        if k == 1:
            use = rng.choice(
                self.col(f"SELECT DISTINCT land_use FROM {table} WHERE status = 'sold' ORDER BY 1")
            )
            return Q(
                "auction_max_bid_use",
                f"What was the highest winning bid for {use} land {LOC}?",
                f"SELECT MAX(winning_bid) FROM {TBL} WHERE land_use = '{use}'",
            )
        if k == 2:
            y = rng.choice(
                self.col(f"SELECT DISTINCT substr(auction_date, 1, 4) FROM {table} ORDER BY 1")
            )
            return Q(
                "auction_area_year",
                f"What was the total area of land auctioned {LOC} in {y}, in square metres?",
                f"SELECT ROUND(SUM(area_sqm), 1) FROM {TBL} WHERE auction_date BETWEEN '{y}-01-01' AND '{y}-12-31'",
            )
        if k == 3:
            return Q(
                "auction_top_bidder",
                f"Which company won the most land auctions {LOC}?",
                f"SELECT winning_bidder FROM {TBL} WHERE winning_bidder IS NOT NULL GROUP BY winning_bidder ORDER BY COUNT(*) DESC LIMIT 1",
                check=top_unique("winning_bidder", where="winning_bidder IS NOT NULL"),
            )
        if k == 4:
            use = rng.choice(self.col(f"SELECT DISTINCT land_use FROM {table} ORDER BY 1"))
            return Q(
                "auction_avg_reserve_use",
                f"What was the average reserve price of {use} parcels {LOC}?",
                f"SELECT ROUND(AVG(reserve_price), 2) FROM {TBL} WHERE land_use = '{use}'",
            )
        return Q(
            "auction_premium",
            f"On average, by what ratio did winning bids exceed reserve prices for the parcels sold {LOC}?",
            f"SELECT ROUND(AVG(winning_bid * 1.0 / reserve_price), 3) FROM {TBL} WHERE status = 'sold'",
        )

    def bidder_q(self, table: str) -> Q | None:
        rng = self.rng
        bidders = self.col(
            f"SELECT DISTINCT winning_bidder FROM {table} WHERE winning_bidder IS NOT NULL ORDER BY 1"
        )
        if not bidders:
            return None
        b = rng.choice(self.plain(bidders))
        k = rng.randrange(3)
        where = f"winning_bidder = {ENT}"
        if k == 0:
            q = (
                "bidder_count",
                f"How many land auctions {LOC} were won by {ENT}?",
                f"SELECT COUNT(*) FROM {TBL} WHERE {where}",
            )
        elif k == 1:
            q = (
                "bidder_total_paid",
                f"How much did {ENT} pay in total for land {LOC}?",
                f"SELECT SUM(winning_bid) FROM {TBL} WHERE {where}",
            )
        else:
            q = (
                "bidder_parcels",
                f"Which parcels {LOC} did {ENT} win?",
                f"SELECT parcel_code FROM {TBL} WHERE {where}",
            )
        return Q(q[0], q[1], q[2], ent=b, ent_slot="enterprise")

    def loc_q(self, table_kind: str, d: District) -> Q | None:
        if table_kind == "sales":
            return self.sales_q(d.sales)
        if table_kind == "auctions":
            return self.auction_q(d.auctions)
        if table_kind == "project":
            return self.project_q(d.sales)
        if table_kind == "developer":
            return self.developer_q(d.sales)
        return self.bidder_q(d.auctions)

    @staticmethod
    def table_of(table_kind: str, d: District) -> str:
        return d.auctions if table_kind in ("auctions", "bidder") else d.sales

    def fin_company_q(self, company: str) -> Q:
        rng = self.rng
        k = rng.randrange(6)
        where = f"company_name = {ENT}"
        if k <= 1:
            col = rng.choice(list(MEASURES))
            q = (
                "finance_value",
                f"What {MEASURES[col][2]} the {MEASURES[col][0]} of {ENT}{LOC}?",
                f"SELECT {col} FROM {TBL} WHERE {where}",
            )
        elif k == 2:
            q = (
                "finance_debt_ratio",
                f"What was the debt ratio (total liabilities divided by total assets) of {ENT}{LOC}?",
                f"SELECT ROUND(total_liabilities / total_assets, 4) FROM {TBL} WHERE {where}",
            )
        elif k == 3:
            q = (
                "finance_margin",
                f"What was the net profit margin (net profit divided by revenue) of {ENT}{LOC}?",
                f"SELECT ROUND(net_profit / revenue, 4) FROM {TBL} WHERE {where}",
            )
        elif k == 4:
            q = (
                "finance_revenue_rank",
                f"Where did {ENT} rank by revenue among all companies{LOC}?",
                f"SELECT COUNT(*) + 1 FROM {TBL} WHERE revenue > (SELECT revenue FROM {TBL} WHERE {where})",
            )
        else:
            q = (
                "finance_revenue_per_employee",
                f"How much revenue per employee did {ENT} generate{LOC}, in millions?",
                f"SELECT ROUND(revenue / employees, 4) FROM {TBL} WHERE {where}",
            )
        return Q(q[0], q[1], q[2], ent=company, ent_slot="enterprise")

    def fin_general_q(self, year: int) -> Q:
        rng = self.rng
        t = f"enterprise_finance_{year}"
        k = rng.randrange(5)
        if k == 0:
            ind = rng.choice(self.col(f"SELECT DISTINCT industry FROM {t} ORDER BY 1"))
            col = rng.choice(["revenue", "net_profit", "total_assets", "employees"])
            return Q(
                "finance_top_in_industry",
                f"Which {ind} company had the highest {MEASURES[col][0]}{LOC}?",
                f"SELECT company_name FROM {TBL} WHERE industry = '{ind}' ORDER BY {col} DESC LIMIT 1",
            )
        if k == 1:
            city = rng.choice(self.col(f"SELECT DISTINCT city FROM {t} ORDER BY 1"))
            n = rng.choice((500, 1000, 2000, 5000))
            return Q(
                "finance_count_city_employees",
                f"How many companies based in {city} had more than {n:,} employees{LOC}?",
                f"SELECT COUNT(*) FROM {TBL} WHERE city = '{city}' AND employees > {n}",
            )
        if k == 2:
            ind = rng.choice(self.col(f"SELECT DISTINCT industry FROM {t} ORDER BY 1"))
            return Q(
                "finance_industry_profit",
                f"What was the combined net profit of the {ind} companies{LOC}?",
                f"SELECT ROUND(SUM(net_profit), 2) FROM {TBL} WHERE industry = '{ind}'",
            )
        if k == 3:
            n = rng.choice((3, 5))
            word = {3: "three", 5: "five"}[n]
            return Q(
                "finance_top_revenue",
                f"List the {word} companies with the highest revenue{LOC}, with their revenue.",
                f"SELECT company_name, revenue FROM {TBL} ORDER BY revenue DESC LIMIT {n}",
            )
        return Q(
            "finance_net_loss",
            f"Which companies reported a net loss{LOC}?",
            f"SELECT company_name FROM {TBL} WHERE net_profit < 0",
        )

    def fin_q(self, year: int, company: bool | None = None) -> Q:
        if company is None:
            company = self.rng.random() < 0.55
        if company:
            return self.fin_company_q(self.fin_company(year, also=(self.years[-1],)))
        return self.fin_general_q(year)


__all__ = ["Questions"]
