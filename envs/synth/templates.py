"""Building blocks of the offline templates: column roles, SQL fragments, wording.

- :func:`roles` sorts a table's usable columns into measures (numbers worth aggregating),
  dimensions (categorical columns worth filtering and grouping by), labels (name-like text) and
  dates, leaving key-like columns (unique, ``...id``/``...code``, discovered join keys) out of the
  measures.
- :class:`Sel` renders one SELECT with sqlglot's builder (SQLite dialect), so every gold query is
  a syntax tree, not string concatenation; :func:`lit` renders a literal.
- :func:`human` turns identifiers into words for questions (``UnitPrice`` -> ``unit price``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from clarisql.envs.state.digest import DEFAULT_VOLATILE_COLUMNS
from clarisql.envs.synth.column_roles import column_role
from clarisql.envs.synth.names import in_words, speakable
from clarisql.envs.synth.phrasing import quote
from clarisql.envs.synth.profile import present_sql, value_sql
from clarisql.envs.synth.types import ColumnProfile, LakeProfile, TableProfile, quote_ident

D = "sqlite"
_KEYISH = re.compile(r"(^|[^a-z])(id|key|code|no|nr|num|number|uuid|guid)$|id$", re.I)
_NOT_MEASURE = re.compile(r"phone|fax|zip|postal|ssn|tel|year|month|day|lat|lon", re.I)
SCOPE_WORDS = re.compile(
    r"year|region|country|state|city|district|province|area|zone|category|type|genre|"
    r"department|segment|class|group|kind|sector|season|month|quarter",
    re.I,
)


def human(name: str) -> str:
    """A table or column name in words (:func:`clarisql.envs.synth.names.in_words`:
    ``UnitPrice`` -> ``unit price``, ``qty`` -> ``quantity``, ``weight_kg`` -> ``weight in kg``)."""
    return in_words(name)


def lit(v: Any) -> str:
    """An SQL literal for a profile value (numbers as numbers, everything else as text)."""
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, (int, float)):
        return repr(v)
    return exp.Literal.string(str(v)).sql(D)


def show(v: Any) -> str:
    """A value as a question quotes it: the same in every category
    (:func:`clarisql.envs.synth.phrasing.quote`: text in double quotes, numbers bare)."""
    return quote(v)


@dataclass
class Roles:
    table: TableProfile
    measures: list[ColumnProfile] = field(default_factory=list)
    dims: list[ColumnProfile] = field(default_factory=list)
    labels: list[ColumnProfile] = field(default_factory=list)
    dates: list[ColumnProfile] = field(default_factory=list)
    keys: list[ColumnProfile] = field(default_factory=list)


def is_keyish(c: ColumnProfile, join_cols: set[tuple[str, str]]) -> bool:
    return c.unique or bool(_KEYISH.search(c.name)) or (c.table, c.name) in join_cols


def roles(t: TableProfile, lake: LakeProfile) -> Roles:
    """The table's column roles (see the module docstring): each column's meaning comes from
    its name and values together (:func:`~clarisql.envs.synth.column_roles.column_role`); only
    a ``measure`` is aggregated, and no measure is grouped by."""
    join_cols = {j.left for j in lake.joins} | {j.right for j in lake.joins}
    r = Roles(t)
    for c in t.usable():
        if c.name.lower() in DEFAULT_VOLATILE_COLUMNS:
            continue  # set by the database itself (timestamps): nothing to ask about
        present = max(1, round(c.rows * (1 - c.missing)))
        role = column_role(c, (c.table, c.name) in join_cols)
        if not speakable(c.name):
            continue  # a name no one can put in words (``G``, ``e``) is never asked about
        keyish = is_keyish(c, join_cols) or role in ("identifier", "code")
        if keyish:
            r.keys.append(c)
        if role == "measure" and not keyish and c.distinct >= 5:
            r.measures.append(c)
        if c.kind == "date":
            r.dates.append(c)
        small = 2 <= c.distinct <= 60 and c.distinct <= present / 2
        categorical = c.kind in ("text", "boolean") or (c.kind != "date" and c.distinct <= 12)
        if small and not keyish and categorical and role in GROUP_ROLES:
            r.dims.append(c)
        if (
            c.kind == "text"
            and not c.free_text  # a paragraph names no row ("whose description is 'A ...'")
            and c.distinct >= max(10, present // 2)
            and not c.name.isdigit()
            and role in ("name", "identifier", "code", "text")
        ):
            r.labels.append(c)
    return r


#: roles a question may group or filter by (never a measure: no group by the aggregated column)
GROUP_ROLES = ("category", "date", "code", "name", "text")


def cond_eq(c: ColumnProfile, v: Any) -> str:
    return f"{c.ref()} = {lit(v)}"


def num(c: ColumnProfile) -> str:
    """The column as a number (cast when stored as text)."""
    return value_sql(c)


def present(c: ColumnProfile) -> str:
    return present_sql(c)


class Sel:
    """One SELECT built with sqlglot (SQLite dialect)."""

    def __init__(self, *cols: str, distinct: bool = False):
        self.q = exp.select(*cols, dialect=D)
        if distinct:
            self.q = self.q.distinct()

    def frm(self, table: str | exp.Expression) -> Sel:
        self.q = self.q.from_(quote_ident(table) if isinstance(table, str) else table, dialect=D)
        return self

    def join(self, table: str, on: str) -> Sel:
        self.q = self.q.join(quote_ident(table), on=on, dialect=D)
        return self

    def where(self, *conds: str) -> Sel:
        if conds:
            self.q = self.q.where(*conds, dialect=D)
        return self

    def group(self, *cols: str) -> Sel:
        self.q = self.q.group_by(*cols, dialect=D)
        return self

    def having(self, cond: str) -> Sel:
        self.q = self.q.having(cond, dialect=D)
        return self

    def order(self, *cols: str) -> Sel:
        self.q = self.q.order_by(*cols, dialect=D)
        return self

    def limit(self, n: int) -> Sel:
        self.q = self.q.limit(n)
        return self

    def sub(self, alias: str) -> exp.Expression:
        return self.q.subquery(alias)

    def sql(self) -> str:
        return self.q.sql(dialect=D)


def union_all(a: Sel, b: Sel, alias: str = "u", distinct: bool = False) -> exp.Expression:
    """``(a UNION [ALL] b) AS alias`` for a FROM clause."""
    return exp.union(a.q, b.q, distinct=distinct).subquery(alias)


def union_sql(a: Sel, b: Sel, distinct: bool = True) -> str:
    return exp.union(a.q, b.q, distinct=distinct).sql(dialect=D)


#: Tables at least this large get equality filters in whole-table templates (cost bound).
#: Measured on the 60 MB benchmark lake (520k-row table, indexed): filtering a 20k+ row table
#: through a low-selectivity index costs more than scanning it (26 s vs 18 s of CPU per 100
#: drafts), so narrowing starts only where a full scan would near the 2 s sandbox budget.
LARGE_TABLE = 2_000_000

AGG_WORDS = {"avg": "average", "sum": "total", "max": "highest", "min": "lowest"}

__all__ = [
    "AGG_WORDS",
    "LARGE_TABLE",
    "SCOPE_WORDS",
    "Roles",
    "Sel",
    "cond_eq",
    "human",
    "is_keyish",
    "lit",
    "num",
    "present",
    "roles",
    "show",
    "union_all",
    "union_sql",
]
