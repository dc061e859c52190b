"""The built-in suite's database generator (internal to :mod:`clarisql.envs.suites.builtin`).

:func:`build_database` writes, with sqlite-utils and a caller's ``random.Random``, the cities
and districts reference tables, one ``property_sales_<city>_<district>`` and one
``land_auctions_<city>_<district>`` table per district, and ``enterprise_finance_<year>`` tables,
and returns a :class:`World` describing what it made. Changing anything here changes the suite:
bump ``builtin.GENERATOR_VERSION``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import sqlite_utils

from clarisql.envs.suites.builtin import names as N

#: The default finance years; each seed's database covers four consecutive years starting at
#: one of :data:`FIN_STARTS` (``World.fin_years``), so a year's existence is the database's call.
FIN_YEARS: tuple[int, ...] = (2019, 2020, 2021, 2022)
FIN_STARTS: tuple[int, ...] = (2018, 2019, 2020)
SALE_YEARS: tuple[int, ...] = (2019, 2020, 2021, 2022, 2023)
N_CITIES = 8


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def sql_str(value: str) -> str:
    """An SQL string literal (single quotes)."""
    return "'" + value.replace("'", "''") + "'"


@dataclass
class District:
    city: str
    name: str
    sales: str
    auctions: str


@dataclass
class Company:
    name: str
    stem: str  # the name without the legal suffix
    prefix: str  # the city or brand word(s) the name starts with
    industry: str
    city: str
    #: the name without its family word ("Riverton Metro Co., Ltd." for "Riverton Metro
    #: Partners Co., Ltd."): what a user who forgot which member writes; None outside a family
    family: str | None = None


@dataclass
class World:
    cities: list[str]
    city_code: dict[str, str]
    absent_cities: list[str]
    districts: dict[str, list[District]]  # city -> districts sorted by name
    companies: list[Company]
    developers: list[str]
    projects: list[str]
    tables: list[str]
    #: the years that have an enterprise_finance_<year> table (four consecutive years)
    fin_years: tuple[int, ...] = FIN_YEARS
    #: the optional attributes (:data:`builtin_names.OPTIONAL_ATTRS`) this seed's tables have
    attrs: tuple[str, ...] = ()

    def district(self, city: str, name: str) -> District:
        for d in self.districts[city]:
            if d.name == name:
                return d
        raise KeyError((city, name))

    def cities_with(self, district: str) -> list[str]:
        return [c for c in self.cities if any(d.name == district for d in self.districts[c])]

    def all_districts(self) -> list[District]:
        return [d for c in self.cities for d in self.districts[c]]


def _rand_date(rng: random.Random, years: tuple[int, ...]) -> date:
    start = date(years[0], 1, 1)
    span = (date(years[-1], 12, 31) - start).days
    return start + timedelta(days=rng.randrange(span + 1))


def _weighted(rng: random.Random, items: tuple[str, ...], weights: tuple[float, ...]) -> str:
    return rng.choices(items, weights=weights, k=1)[0]


def _make_companies(rng: random.Random, cities: list[str]) -> list[Company]:
    companies: list[Company] = []
    stems: set[str] = set()
    brands = list(N.BRANDS)
    for industry, count in N.INDUSTRY_COUNTS.items():
        cores = N.INDUSTRY_CORES[industry]
        made = 0
        while made < count:
            core = rng.choice(cores)
            if rng.random() < 0.45:
                prefix = rng.choice(cities)
                city = prefix
            else:
                prefix = rng.choice(brands)
                city = rng.choice(cities)
            stem = f"{prefix} {core}"
            if rng.random() < 0.5:  # a family word in any name, so a family's common name
                stem = f"{stem} {rng.choice(N.FAMILY_WORDS)}"  # looks like any other name
            if stem in stems:
                continue
            suffix = rng.choice(N.LEGAL_SUFFIXES)
            if (industry == "financial services" and suffix.startswith("Industrial")) or (
                "Development" in core and "Development" in suffix
            ):
                suffix = "Co., Ltd."
            stems.add(stem)
            if count - made >= 3 and rng.random() < 0.2:  # a family of three look-alikes
                words = rng.sample([w for w in N.FAMILY_WORDS if w not in stem], 3)
                family = f"{stem} {suffix}"
                for w in sorted(words):
                    companies.append(
                        Company(
                            f"{stem} {w} {suffix}", f"{stem} {w}", prefix, industry, city, family
                        )
                    )
                made += 3
                continue
            companies.append(Company(f"{stem} {suffix}", stem, prefix, industry, city))
            made += 1
    return companies


def _finance_rows(
    rng: random.Random, companies: list[Company], years: tuple[int, ...]
) -> dict[int, list[dict]]:
    by_year: dict[int, list[dict]] = {y: [] for y in years}
    order = list(range(len(companies)))
    rng.shuffle(order)
    late = set(order[:3])  # listed in the second year: no first-year row
    unfiled = set(order[3:7])  # the last year's figures not filed yet: no last-year row
    for i, co in enumerate(companies):
        scale = 10 ** rng.uniform(2.3, 4.7)
        margin = rng.uniform(-0.04, 0.2)
        leverage = (
            rng.uniform(8, 18) if co.industry == "financial services" else rng.uniform(0.8, 4)
        )
        debt = rng.uniform(0.3, 0.88)
        per_emp = rng.uniform(0.3, 2.5)
        for year in years:
            scale *= rng.uniform(0.85, 1.25)
            m = margin + rng.uniform(-0.05, 0.05)
            assets = scale * leverage * rng.uniform(0.95, 1.05)
            row = {
                "company_name": co.name,
                "industry": co.industry,
                "city": co.city,
                "revenue": round(scale, 2),
                "net_profit": round(scale * m, 2),
                "total_assets": round(assets, 2),
                "total_liabilities": round(assets * debt * rng.uniform(0.95, 1.05), 2),
                "employees": max(40, int(scale / per_emp * rng.uniform(0.95, 1.05))),
            }
            if (year == years[0] and i in late) or (year == years[-1] and i in unfiled):
                continue
            by_year[year].append(row)
    for rows in by_year.values():
        rows.sort(key=lambda r: r["company_name"])
    return by_year


def project_name(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = f"{rng.choice(N.PROJECT_LEADS)} {rng.choice(N.PROJECT_KINDS)}"
        tail = rng.choice(N.PROJECT_TAILS)
        if tail:
            name = f"{name} {tail}"
        if name not in taken:
            taken.add(name)
            return name


def build_database(path: Path, rng: random.Random) -> World:
    start = rng.choice(FIN_STARTS)
    fin_years = tuple(range(start, start + 4))
    pool = list(N.CITY_POOL)
    picked = rng.sample(pool, N_CITIES)
    cities = sorted(c[0] for c in picked)
    info = {c[0]: c for c in pool}
    absent = sorted(c[0] for c in pool if c[0] not in cities)
    companies = _make_companies(rng, cities)
    developers = [c.name for c in companies if c.industry == "real estate"]
    industrial = [c.name for c in companies if c.industry in ("manufacturing", "logistics")]

    db = sqlite_utils.Database(str(path))
    db.execute("PRAGMA journal_mode = MEMORY")
    db.execute("PRAGMA synchronous = OFF")
    db["cities"].create({"city": str, "code": str, "region": str}, pk="city")
    db["cities"].insert_all([{"city": c, "code": info[c][1], "region": info[c][2]} for c in cities])
    db["districts"].create(
        {
            "district_id": int,
            "city": str,
            "district": str,
            "property_sales_table": str,
            "land_auctions_table": str,
        },
        pk="district_id",
        foreign_keys=[("city", "cities", "city")],
    )

    districts: dict[str, list[District]] = {}
    taken_projects: set[str] = set()
    tables: list[str] = []
    dist_rows: list[dict] = []
    for city in cities:
        names = sorted(rng.sample(N.DISTRICT_POOL, rng.randint(4, 6)))
        base = rng.uniform(9000, 45000)
        code = info[city][1]
        seq: dict[int, int] = {}
        districts[city] = []
        for name in names:
            d = District(
                city,
                name,
                f"property_sales_{slug(city)}_{slug(name)}",
                f"land_auctions_{slug(city)}_{slug(name)}",
            )
            districts[city].append(d)
            dist_rows.append(
                {
                    "city": city,
                    "district": name,
                    "property_sales_table": d.sales,
                    "land_auctions_table": d.auctions,
                }
            )
            factor = rng.uniform(0.7, 1.5)
            _create_sales(db, d.sales, rng, base * factor, developers, taken_projects)
            _create_auctions(db, d.auctions, rng, base * factor, developers, industrial, code, seq)
            tables += [d.sales, d.auctions]
    db["districts"].insert_all(dist_rows)

    fin = _finance_rows(rng, companies, fin_years)
    for year in fin_years:
        t = f"enterprise_finance_{year}"
        db[t].create(
            {
                "company_name": str,
                "industry": str,
                "city": str,
                "revenue": float,
                "net_profit": float,
                "total_assets": float,
                "total_liabilities": float,
                "employees": int,
            },
            pk="company_name",
            foreign_keys=[("city", "cities", "city")],
        )
        db[t].insert_all(fin[year])
        tables.append(t)
    attrs = _add_optional_attrs(db, random.Random(rng.getrandbits(64)), tables)
    used = {  # project names in the tables (a family's common part is taken, never used)
        r[0]
        for t in tables
        if t.startswith("property_sales_")
        for r in db.execute(f"SELECT DISTINCT project_name FROM {t}").fetchall()
    }
    db.conn.commit()
    db.close()
    return World(
        cities=cities,
        city_code={c: info[c][1] for c in cities},
        absent_cities=absent,
        districts=districts,
        companies=companies,
        developers=developers,
        projects=sorted(taken_projects & used),
        tables=["cities", "districts", *tables],
        attrs=attrs,
        fin_years=fin_years,
    )


def _pick_attrs(rng: random.Random) -> tuple[str, ...]:
    """About half of each table kind's optional attributes of each absent-kind, at random (at
    least one present and one absent per group of two or more)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for col, tkind, kind, *_ in N.OPTIONAL_ATTRS:
        groups.setdefault((tkind, kind), []).append(col)
    present: list[str] = []
    for cols in groups.values():
        cols = list(cols)
        rng.shuffle(cols)
        k = len(cols) // 2 if len(cols) % 2 == 0 else len(cols) // 2 + rng.randrange(2)
        present += cols[: max(1, k)] if len(cols) > 1 else cols[: rng.randrange(2)]
    return tuple(sorted(present))


def _attr_value(rng: random.Random, col: str, row: dict) -> object:
    """A plausible value of optional attribute ``col`` for one row (``row``: its other values)."""
    r = rng.uniform
    if col == "gross_profit":
        return round(row["revenue"] * r(0.15, 0.45), 2)
    if col == "fixed_assets":
        return round(row["total_assets"] * r(0.2, 0.7), 2)
    if col == "current_liabilities":
        return round(row["total_liabilities"] * r(0.3, 0.8), 2)
    if col == "part_time_employees":
        return int(row["employees"] * r(0.02, 0.25))
    if col in ("rd_spending", "export_revenue"):
        return round(row["revenue"] * r(0.01, 0.3), 2)
    if col in ("dividend_paid", "tax_paid"):
        return round(abs(row["net_profit"]) * r(0.05, 0.4), 2)
    if col == "unit_rent":
        return round(row["unit_price"] * r(0.002, 0.005), 1)
    if col == "list_price":
        return int(round(row["total_price"] * r(1.0, 1.12), -3))
    if col == "bedrooms":
        return max(1, min(6, int(row["area_sqm"] / r(28, 40))))
    if col == "buyer_age":
        return rng.randint(24, 70)
    if col == "service_charge":
        return round(r(2.0, 9.0), 1)
    if col in ("deposit_price", "starting_price"):
        f = r(0.1, 0.3) if col == "deposit_price" else r(0.85, 1.0)
        return int(round(row["reserve_price"] * f, -4))
    if col == "bid_count":
        return rng.randint(1, 14) if row["status"] == "sold" else rng.randint(0, 1)
    if col == "bidder_count":
        return rng.randint(1, 9) if row["status"] == "sold" else 0
    if col == "frontage_m":
        return round(r(20, 260), 1)
    raise ValueError(col)


def _add_optional_attrs(
    db: sqlite_utils.Database, rng: random.Random, tables: list[str]
) -> tuple[str, ...]:
    """Add this seed's optional attributes (:func:`_pick_attrs`) as columns, with values."""
    present = _pick_attrs(rng)
    kinds = {col: tkind for col, tkind, *_ in N.OPTIONAL_ATTRS}
    prefix = {
        "finance": "enterprise_finance_",
        "sales": "property_sales_",
        "auctions": "land_auctions_",
    }
    for col in present:
        typ = (
            int
            if col
            in (
                "part_time_employees",
                "list_price",
                "bedrooms",
                "buyer_age",
                "deposit_price",
                "starting_price",
                "bid_count",
                "bidder_count",
            )
            else float
        )
        for t in (t for t in tables if t.startswith(prefix[kinds[col]])):
            db[t].add_column(col, typ)
            rows = list(db.query(f"SELECT rowid AS _rid, * FROM {t} ORDER BY rowid"))
            db.conn.executemany(
                f"UPDATE {t} SET {col} = ? WHERE rowid = ?",
                [(_attr_value(rng, col, r), r["_rid"]) for r in rows],
            )
    return present


def _create_sales(
    db: sqlite_utils.Database,
    table: str,
    rng: random.Random,
    base: float,
    developers: list[str],
    taken: set[str],
) -> None:
    projects = []
    for _ in range(rng.randint(3, 6)):
        ptype = _weighted(rng, N.PROPERTY_TYPES, (0.7, 0.15, 0.15))
        projects.append((project_name(rng, taken), rng.choice(developers), ptype))
    if rng.random() < 0.5:  # a family of look-alike projects: "Jade Garden North Wing", ...
        fam = f"{rng.choice(N.PROJECT_LEADS)} {rng.choice(N.PROJECT_KINDS)}"
        tail = rng.choice(N.PROJECT_TAILS)  # as often as any project's name has one
        fam = f"{fam} {tail}" if tail else fam
        tails = rng.sample(N.PROJECT_FAMILY_TAILS, 3)
        names = [f"{fam} {t}" for t in tails]
        if fam not in taken and not any(n in taken for n in names):
            taken.add(fam)  # the family's common part is never a project itself
            dev = rng.choice(developers)
            for n in names:
                taken.add(n)
                projects.append((n, dev, "residential"))
    rows = []
    for _ in range(rng.randint(20, 60)):
        name, dev, ptype = rng.choice(projects)
        if rng.random() < 0.15:
            ptype = rng.choice(N.PROPERTY_TYPES)
        day = _rand_date(rng, SALE_YEARS)
        if ptype == "residential":
            area = rng.uniform(45, 220)
        elif ptype == "commercial":
            area = rng.uniform(30, 400)
        else:
            area = rng.uniform(60, 900)
        area = round(area, 1)
        tf = {"residential": 1.0, "commercial": 1.3, "office": 1.1}[ptype]
        unit = int(base * tf * (1 + 0.04 * (day.year - 2019)) * rng.uniform(0.85, 1.15))
        rows.append(
            {
                "project_name": name,
                "developer": dev,
                "property_type": ptype,
                "sale_date": day.isoformat(),
                "area_sqm": area,
                "unit_price": unit,
                "total_price": int(round(area * unit)),
                "status": _weighted(rng, N.SALE_STATUSES, (0.78, 0.14, 0.08)),
            }
        )
    rows.sort(key=lambda r: r["sale_date"])
    db[table].create(
        {
            "sale_id": int,
            "project_name": str,
            "developer": str,
            "property_type": str,
            "sale_date": str,
            "area_sqm": float,
            "unit_price": int,
            "total_price": int,
            "status": str,
        },
        pk="sale_id",
    )
    db[table].insert_all(rows)


def _create_auctions(
    db: sqlite_utils.Database,
    table: str,
    rng: random.Random,
    base: float,
    developers: list[str],
    industrial: list[str],
    code: str,
    seq: dict[int, int],
) -> None:
    rows = []
    for _ in range(rng.randint(20, 40)):
        use = _weighted(rng, N.LAND_USES, (0.45, 0.2, 0.2, 0.15))
        day = _rand_date(rng, SALE_YEARS)
        area = round(rng.uniform(3000, 80000), -1)
        ratio = round(rng.uniform(0.8, 2.0) if use == "industrial" else rng.uniform(1.5, 4.5), 1)
        uf = {"residential": 1.0, "commercial": 0.8, "mixed-use": 0.9, "industrial": 0.15}[use]
        reserve = int(round(area * ratio * base * 0.3 * uf * rng.uniform(0.8, 1.2), -4))
        status = _weighted(rng, N.AUCTION_STATUSES, (0.72, 0.18, 0.1))
        bid: int | None = None
        bidder: str | None = None
        if status == "sold":
            bid = int(round(reserve * rng.uniform(1.0, 1.6), -4))
            bidder = rng.choice(industrial if use == "industrial" else developers)
        rows.append(
            {
                "parcel_code": "",
                "land_use": use,
                "area_sqm": area,
                "plot_ratio": ratio,
                "reserve_price": reserve,
                "winning_bid": bid,
                "winning_bidder": bidder,
                "auction_date": day.isoformat(),
                "status": status,
            }
        )
    rows.sort(key=lambda r: r["auction_date"])
    for r in rows:
        year = int(r["auction_date"][:4])
        seq[year] = seq.get(year, 0) + rng.randint(1, 3)
        r["parcel_code"] = f"{code}{year % 100:02d}-{seq[year]:03d}"
    db[table].create(
        {
            "auction_id": int,
            "parcel_code": str,
            "land_use": str,
            "area_sqm": float,
            "plot_ratio": float,
            "reserve_price": int,
            "winning_bid": int,
            "winning_bidder": str,
            "auction_date": str,
            "status": str,
        },
        pk="auction_id",
    )
    db[table].insert_all(rows)
