"""What a row's own data says a write must keep: dependencies between columns, and values that
another column of the same row spells.

Contract (checked on the data, names play no part):
- a column ``Y`` *determines* ``c`` in a table when every value of ``Y`` that repeats (at least
  :data:`LEAST_GROUPS` of them, NULLs left out) holds one value of ``c`` (NULL counts as a
  value), ``Y`` is not unique and not ``c``: ``BillingCity`` -> ``BillingState``; it is
  checked on the table's first :data:`SAMPLE_ROWS` rows in storage order (a fixed sample, so
  the verdict is the same on any machine; a dependency the sample shows and the rest breaks
  only blocks a write: the cautious side);
- :meth:`Dependencies.breaks_dependency`: setting ``c`` of one row to ``new`` breaks a
  dependency that holds on the data: a point update of a column another column determines (a
  customer's country beside its city); another row with the row's ``Y`` holds a ``c`` other than ``new`` (a Salt Lake
  City invoice billed to state "RJ"), or ``c`` determines ``Z`` and another row holding ``new``
  has a ``Z`` other than the row's (a city moved to another country);
- :func:`spelled_in_row`: the other text column of the row that spells a value (case-folded,
  at least :data:`LEAST_SPELLED` characters): a first name inside the row's e-mail. Such a
  value is not renamed or swapped: the row itself says it is right.

Both :mod:`~clarisql.envs.synth.layers.writes` (which makes no such write) and
:mod:`~clarisql.envs.synth.audit` (which counts them) use these functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clarisql.envs.synth.types import TableProfile, quote_ident, sql_lit
from clarisql.envs.synth.verify import Verifier

#: a dependency counts when at least this many values of the determining column repeat
LEAST_GROUPS = 3
#: rows a dependency is checked on (one GROUP BY per pair of columns: on a table of 300,000
#: rows, every pair read in full cost the write layer half a minute)
SAMPLE_ROWS = 20_000
#: a value shorter than this is not looked for inside other columns
LEAST_SPELLED = 3


class Dependencies:
    """The dependencies between the columns of a database's tables, found on the data and
    cached per ``(table, column)``."""

    def __init__(self, v: Verifier):
        self.v = v
        self._det: dict[tuple[str, str, str], bool] = {}

    def holds(self, t: TableProfile, y: str, c: str) -> bool:
        """Whether ``y`` determines ``c`` in ``t`` (module docstring)."""
        key = (t.name, y, c)
        if key not in self._det:
            col = t.column(y)
            ok = False
            if y != c and not col.unique:
                tq, yq, cq = quote_ident(t.name), quote_ident(y), quote_ident(c)
                got = self.v.rows(
                    f"SELECT COUNT(*), SUM(n > 1) FROM (SELECT COUNT(DISTINCT {cq}) "
                    f"+ MAX({cq} IS NULL) AS n FROM (SELECT {yq}, {cq} FROM {tq} "
                    f"LIMIT {SAMPLE_ROWS}) WHERE {yq} IS NOT NULL GROUP BY {yq} "
                    f"HAVING COUNT(*) > 1)"
                )
                ok = bool(got and got[0][0] and got[0][0] >= LEAST_GROUPS and not got[0][1])
            self._det[key] = ok
        return self._det[key]

    def determinants(self, t: TableProfile, c: str) -> list[str]:
        """The columns of ``t`` that determine ``c``."""
        return [x.name for x in t.columns if self.holds(t, x.name, c)]

    def dependents(self, t: TableProfile, c: str) -> list[str]:
        """The columns of ``t`` that ``c`` determines."""
        return [x.name for x in t.columns if self.holds(t, c, x.name)]

    def breaks_dependency(
        self,
        t: TableProfile,
        row: Mapping[str, Any],
        c: str,
        new: Any,
        key: str,
        exclude: Sequence[Any] = (),
        alone: bool = True,
    ) -> str | None:
        """Why setting ``c`` of ``row`` (named by its unique ``key``) to ``new`` breaks a
        dependency that holds on the data, or ``None``. With ``alone`` (a point update), a
        column that another column determines is not changed at all: the row's own value of the
        determining column (even one no other row holds) fixes it. Rows whose key is in ``exclude`` (the
        other row of a swap) are not compared with on the determining side; on the determined
        side every other row holding ``new`` is (a state swapped between two customers of two
        countries: each state was seen with its own country)."""
        tq, kq = quote_ident(t.name), quote_ident(key)
        skip = [row[key], *exclude]
        others = f"{kq} NOT IN ({', '.join(sql_lit(x) for x in skip)})"
        for y in self.determinants(t, c):
            if row.get(y) is None or y == key:
                continue
            if alone and new != row.get(c):
                # c is a function of y on the data: changed alone, the row's y (a city held by
                # this row only) would now go with another c than it did
                return f"{c} follows {y} on the data; {y} = {row[y]!r} is left as it is"
            got = self.v.rows(
                f"SELECT {quote_ident(c)} FROM {tq} WHERE {quote_ident(y)} = {sql_lit(row[y])} "
                f"AND {others} AND {quote_ident(c)} IS NOT {sql_lit(new)} LIMIT 1"
            )
            if got:
                return f"{y} = {row[y]!r} goes with {c} = {got[0][0]!r}, not {new!r}"
        if new is None:
            return None
        mine = f"{kq} <> {sql_lit(row[key])}"  # (a swap's other row counts: its pairing is known)
        for z in self.dependents(t, c):
            if z == key:
                continue
            got = self.v.rows(
                f"SELECT {quote_ident(z)} FROM {tq} WHERE {quote_ident(c)} = {sql_lit(new)} "
                f"AND {mine} AND {quote_ident(z)} IS NOT {sql_lit(row.get(z))} LIMIT 1"
            )
            if got:
                return f"{c} = {new!r} goes with {z} = {got[0][0]!r}, not {row.get(z)!r}"
        return None


def spelled_in_row(row: Mapping[str, Any], c: str) -> str | None:
    """The other text column of ``row`` whose value contains ``row[c]`` (case-folded, at least
    :data:`LEAST_SPELLED` characters: a name inside an e-mail or login), or ``None``."""
    x = row.get(c)
    if not isinstance(x, str) or len(x.strip()) < LEAST_SPELLED:
        return None
    needle = x.strip().casefold()
    for name, y in row.items():
        if name != c and isinstance(y, str) and y.strip().casefold() != needle:
            if needle in y.casefold():
                return name
    return None


__all__ = ["Dependencies", "spelled_in_row", "LEAST_GROUPS", "LEAST_SPELLED", "SAMPLE_ROWS"]
