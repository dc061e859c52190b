"""The built-in domain's phrasing: question templates, measures, places, years and the
surfaces (abbreviations, misspellings) of its names.

:class:`Q` is a question template over one table; :class:`BuiltinBase` holds the seeded ``rng``,
the invented :class:`~clarisql.envs.suites.builtin.db.World` and the engine's database reads
(:class:`~clarisql.envs.synth.domain.DomainRun`), and picks places, years and companies. The
makers (:mod:`.builtin_reads`, :mod:`.builtin_intents`, :mod:`.builtin_clarify`,
:mod:`.builtin_writes`) build on it. Changing anything here changes the generated suite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from clarisql.envs.suites.builtin import names as N
from clarisql.envs.suites.builtin.db import District, World, possessive, sql_str
from clarisql.envs.synth.domain import DomainRun, misspell

# Text and SQL placeholders of question templates.
LOC, TBL, ENT = "<loc>", "<t>", "<ent>"


@dataclass
class Q:
    """A question template over one table: ``text`` has ``<loc>`` (and ``<ent>``), ``sql`` has
    ``<t>`` (and ``<ent>``). Intent questions carry ``measures`` (sql, user's answer) instead of
    one ``sql``. For finance questions ``<loc>`` is the year phrase and ``<t>`` the year table."""

    name: str
    text: str
    sql: str = ""
    ent: str | None = None
    ent_slot: str | None = None
    check: str | None = None
    measures: list[tuple[str, str]] = field(default_factory=list)

    def render_text(self, loc: str, ent: str | None = None) -> str:
        text = self.text.replace(LOC, loc)
        if self.ent is not None:
            text = text.replace(ENT, ent if ent is not None else self.ent)
        return tidy(text)

    def render_sql(self, table: str, ent: str | None = None, measure: int | None = None) -> str:
        sql = self.measures[measure][0] if measure is not None else self.sql
        sql = sql.replace(TBL, table)
        if self.ent is not None:
            sql = sql.replace(ENT, sql_str(ent if ent is not None else self.ent))
        return sql

    def render_check(self, table: str) -> str | None:
        return None if self.check is None else self.check.replace(TBL, table)


def tidy(text: str) -> str:
    """Drop spaces before punctuation and the second dot of "Ltd.."; capitalise."""
    text = re.sub(r"\s+([?.,:])", r"\1", text)
    text = text.replace("..", ".")
    return text[0].upper() + text[1:]


def top_unique(key_col: str, agg: str = "COUNT(*)", where: str = "") -> str:
    """A check query: the top group by ``agg`` is unique (no tie for first place)."""
    w = f" WHERE {where}" if where else ""
    top = f"SELECT {agg} AS c FROM {TBL}{w} GROUP BY {key_col} ORDER BY c DESC"
    return f"SELECT ({top} LIMIT 1) > COALESCE(({top} LIMIT 1 OFFSET 1), -1)"


#: column -> (natural name, the user's answer to "which measure?", verb agreeing with the name)
MEASURES = {
    "revenue": ("revenue", "I want its revenue", "was"),
    "net_profit": ("net profit", "I want its net profit", "was"),
    "total_assets": ("total assets", "I want its total assets", "were"),
    "total_liabilities": ("total liabilities", "I want its total liabilities", "were"),
    "employees": ("number of employees", "I want its number of employees", "was"),
}

#: First words of two-word business cores that make no sense alone ("Heavy" Industries).
KEEP_WHOLE_CORE = frozenset({"Heavy", "Cold", "New", "Department"})


def nearest_year(surface: str, years: tuple[int, ...]) -> int:
    """The year of ``years`` nearest to ``surface`` (the later one on a tie)."""
    y = int(surface)
    return min(years, key=lambda f: (abs(f - y), -f))


class BuiltinBase:
    """The seeded state every maker shares: ``rng``, the world ``w`` and database reads."""

    def __init__(self, run: DomainRun):
        self.run = run
        self.rng = run.rng
        world: World = run.world
        self.w = world
        #: the years with a finance table in this seed's database
        self.years: tuple[int, ...] = tuple(world.fin_years)
        self.fin_companies = {
            y: self.col(f"SELECT company_name FROM enterprise_finance_{y} ORDER BY company_name")
            for y in self.years
        }
        self.company = {c.name: c for c in world.companies}
        self.entity_names = [*(c.name for c in world.companies), *world.projects]

    # --- database reads (the engine's sandbox) ----------------------------------------------
    def rows(self, sql: str) -> list[tuple]:
        return self.run.rows(sql)

    def col(self, sql: str) -> list[Any]:
        return self.run.col(sql)

    # --- picking ----------------------------------------------------------------------------
    def pick_district(self) -> District:
        return self.rng.choice(self.w.all_districts())

    def loc(self, city: str, district: str) -> str:
        form = self.rng.randrange(3)
        if form == 0:
            return f"in {district}, {city}"
        if form == 1:
            return f"in {possessive(city)} {district} district"
        return f"in the {district} district of {city}"

    def year_phrase(self, year: int | str) -> str:
        return self.rng.choice((f" in {year}", f" in {year}", f" for {year}", f" in fiscal {year}"))

    def fin_company(self, year: int, also: tuple[int, ...] = ()) -> str:
        names = [
            n for n in self.fin_companies[year] if all(n in self.fin_companies[y] for y in also)
        ]
        return self.rng.choice(self.plain(names))

    def plain(self, names: list[Any]) -> list[Any]:
        """``names`` without the members of look-alike families (if any are left): questions
        name those only as the gold of a ``not-exist`` read, so a name in a question reads the
        same whether it exists or not (a family's common name looks like any other name)."""
        return [n for n in names if self.family_surface(n) is None] or names

    # --- surfaces for not-exist ---------------------------------------------------------------
    def company_surface(self, name: str) -> str | None:
        co = self.company[name]
        rng = self.rng
        k = rng.randrange(4)
        if k == 0:
            cand: str | None = co.stem
        elif k == 1:  # a shortened business core: "Riverton Metro (Group)"
            core = co.stem[len(co.prefix) + 1 :].split(" ")
            short = core[:-1] if len(core) > 1 and core[0] not in KEEP_WHOLE_CORE else core
            while short[-1] == "&":
                short = short[:-1]
            cand = f"{co.prefix} {' '.join(short)}"
            if "Group" in name and (short == core or rng.random() < 0.5):
                cand = f"{cand} Group"
        elif k == 2:
            cand = f"{co.stem} Company"
        else:
            typo = misspell(rng, co.prefix, self.w.cities)
            cand = None if typo is None else name.replace(co.prefix, typo, 1)
        if cand is None or any(cand.casefold() == n.casefold() for n in self.entity_names):
            return None
        return cand

    def project_surface(self, name: str) -> str | None:
        rng = self.rng
        words = name.split(" ")
        k = rng.randrange(3)
        cand: str | None
        if k == 0 and len(words) > 3:
            cand = " ".join(words[:2]) if words[1] in N.PROJECT_KINDS else " ".join(words[:3])
        elif k == 1 and name.endswith("s") and not name.endswith("Heights"):
            cand = name[:-1]  # "Lakeview Villas" -> "Lakeview Villa"
        else:
            cand = misspell(rng, name, self.w.projects)
        if cand is None or any(cand.casefold() == n.casefold() for n in self.entity_names):
            return None
        return cand

    def family_surface(self, name: str) -> str | None:
        """A look-alike family's common name for ``name`` (a company without its family word,
        a project without its wing), or ``None`` if ``name`` has no family: the surface of a
        ``not-exist`` read, which several names fit equally well."""
        co = self.company.get(name)
        if co is not None:
            return co.family
        for tail in N.PROJECT_FAMILY_TAILS:
            if name.endswith(" " + tail):
                return name[: -len(tail) - 1]
        return None

    def surface(self, q: Q) -> str | None:
        assert q.ent is not None
        if q.ent_slot == "project":
            return self.project_surface(q.ent)
        return self.company_surface(q.ent)


__all__ = [
    "ENT",
    "LOC",
    "MEASURES",
    "TBL",
    "BuiltinBase",
    "Q",
    "nearest_year",
    "tidy",
    "top_unique",
]
