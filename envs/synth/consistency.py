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
  has a ``Z`` other than the row's (a city moved to another country); or another row listing
  the same thing (:meth:`Dependencies.twin_row`: the same value of a column that names the rows,
  :func:`names_row`, and the same ``c``: the same song on a live album) keeps the old ``c``;
- :meth:`Dependencies.breaks_order`: a new value breaks an order two columns keep on every row
  (a rental date after its return date);
- :meth:`Dependencies.tied`: a number that moves with another of its row on the data (a
  track's length and its size): it is not changed alone;
- :func:`spelled_in_row`: the other text column of the row that spells a value (case-folded,
  at least :data:`LEAST_SPELLED` characters): a first name inside the row's e-mail. Such a
  value is not renamed or swapped: the row itself says it is right.

- :meth:`Dependencies.key_ordered`: a date or number whose order agrees with an integer key's
  on (nearly) every row (invoices numbered in date order): a point update must keep it between
  its neighbours by key, and a swap of two different values between two rows reverses their
  order (:meth:`Dependencies.swap_breaks_order`);
- :func:`spelled_in_children`: a row of another table that refers to the row (declared or
  discovered reference) and spells its value (an album's title track, a city's name as the
  district of its addresses): the value is not renamed or swapped, those rows say it is right;
  :func:`described_by_children`: rows of another table that refer to the row and hold text of
  their own (an album's tracks, a city's addresses) make it a whole thing, not an entry: two
  such things' names are swapped only where they differ in a number alone (:func:`interchangeable`:
  "Disc 1" and "Disc 2"), never two albums' or two cities' names. A copy that a trigger on the
  table rewrites with the row (:func:`kept_in_step`: ``film_text`` beside ``film``) says nothing.

- :func:`varies_within`: whether a column is each row's own value inside the groups of another
  (names of an album's tracks), not the group's (the district of a city's addresses): only
  such a value can have been mixed up between two rows of a group.

Both :mod:`~clarisql.envs.synth.layers.writes` (which makes no such write) and
:mod:`~clarisql.envs.synth.audit` (which counts them) use these functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from clarisql.envs.synth.column_roles import column_role
from clarisql.envs.synth.types import LakeProfile, TableProfile, quote_ident, sql_lit
from clarisql.envs.synth.verify import Verifier

#: a dependency counts when at least this many values of the determining column repeat
LEAST_GROUPS = 3
#: rows a dependency is checked on (one GROUP BY per pair of columns: on a table of 300,000
#: rows, every pair read in full cost the write layer half a minute)
SAMPLE_ROWS = 20_000
#: an order between two columns counts when at least this many rows hold both
LEAST_ORDERED = 10
#: two numbers of a row move together when their correlation on the data is at least this
TIED = 0.9
#: a word of a value at least this long is looked for inside the row's other text columns
LEAST_WORD = 5
#: a value shorter than this is not looked for inside other columns
LEAST_SPELLED = 3
#: a date or number orders with an integer key when at most this share of the rows, read in key
#: order, steps back (a few late entries do not undo a numbering in date order)
KEY_ORDER_SLACK = 0.01


def _order_sign(got: list[tuple] | None, slack: float = 0.0) -> int:
    """From ``(rows, rows with c <= d, rows with c >= d)``: -1 where ``c <= d`` holds on all but
    ``slack`` of at least :data:`LEAST_ORDERED` rows, 1 for ``c >= d``, 0 for neither (or
    where the two are equal on every row)."""
    if not got or not got[0][0] or got[0][0] < LEAST_ORDERED:
        return 0
    n, le, ge = got[0][0], got[0][1] or 0, got[0][2] or 0
    if le >= n * (1 - slack) and ge < n:
        return -1
    if ge >= n * (1 - slack) and le < n:
        return 1
    return 0


def _join_sql(path: Sequence[tuple[str, str, str]], start: int = 0) -> tuple[str, str]:
    """``JOIN`` clauses from alias ``a{start}`` along ``path`` (each step ``(column, table,
    key)``; aliases ``a{start + 1}``...), and the last alias."""
    parts = [
        f"JOIN {quote_ident(table)} AS a{i} ON a{i - 1}.{quote_ident(col)} = a{i}.{quote_ident(k)}"
        for i, (col, table, k) in enumerate(path, start + 1)
    ]
    return " ".join(parts), f"a{start + len(path)}"


class Dependencies:
    """The dependencies between the columns of a database's tables, found on the data and
    cached per ``(table, column)``."""

    def __init__(self, v: Verifier, lake: LakeProfile | None = None):
        self.v = v
        self.lake = lake  # (its join pairs: orders with the rows a row refers to)
        self._linked: dict[tuple[str, str], list[tuple[list[tuple[str, str, str]], str, int]]] = {}
        self._det: dict[tuple[str, str, str], bool] = {}
        self._order: dict[tuple[str, str, str], list[tuple[str, int]]] = {}
        self._named: dict[tuple[str, str, str], dict[str, list[Any]]] = {}

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

    def ordered(self, t: TableProfile, c: str) -> list[tuple[str, int]]:
        """The columns of ``t`` that ``c`` keeps an order with on every sampled row where both
        are present (at least :data:`LEAST_ORDERED` rows): ``(d, -1)`` for ``c <= d`` (a rental
        date before its return date), ``(d, 1)`` for ``c >= d``. Only between columns of one
        kind (dates with dates, numbers with numbers)."""
        key = (t.name, c, "<order>")
        if key not in self._order:
            out: list[tuple[str, int]] = []
            me = t.column(c)
            for d in t.columns:
                if d.name == c or d.kind != me.kind or d.kind not in ("date", "integer", "real"):
                    continue
                cq, dq = quote_ident(c), quote_ident(d.name)
                got = self.v.rows(
                    f"SELECT COUNT(*), SUM({cq} <= {dq}), SUM({cq} >= {dq}) FROM (SELECT {cq}, "
                    f"{dq} FROM {quote_ident(t.name)} LIMIT {SAMPLE_ROWS}) WHERE {cq} IS NOT "
                    f"NULL AND {dq} IS NOT NULL"
                )
                sign = _order_sign(got)
                if sign:
                    out.append((d.name, sign))
            self._order[key] = out
        return self._order[key]

    def key_ordered(self, t: TableProfile, c: str) -> list[str]:
        """The integer keys of ``t`` (unique integer columns) whose order ``c`` (a date or a
        number) follows: read in key order over the first :data:`SAMPLE_ROWS` rows, ``c``
        steps back on at most :data:`KEY_ORDER_SLACK` of the rows where it is present and
        steps forward on at least :data:`LEAST_ORDERED` (invoices numbered in the order of
        their dates)."""
        key = (t.name, c, "<key-order>")
        if key not in self._order:
            me = t.column(c)
            out: list[tuple[str, int]] = []
            if me.kind in ("date", "integer", "real") and not me.needs_cast:
                for d in t.columns:
                    if d.name == c or d.kind != "integer" or not d.unique or d.needs_cast:
                        continue
                    cq, dq = quote_ident(c), quote_ident(d.name)
                    got = self.v.rows(
                        f"SELECT COUNT(*), SUM(x < p), SUM(x > p) FROM (SELECT {cq} AS x, "
                        f"LAG({cq}) OVER (ORDER BY {dq}) AS p FROM (SELECT {cq}, {dq} FROM "
                        f"{quote_ident(t.name)} LIMIT {SAMPLE_ROWS}) WHERE {cq} IS NOT NULL "
                        f"AND {dq} IS NOT NULL) WHERE p IS NOT NULL"
                    )
                    if not got or not got[0][0]:
                        continue
                    n, back, fwd = got[0][0], got[0][1] or 0, got[0][2] or 0
                    if fwd >= LEAST_ORDERED and back <= KEY_ORDER_SLACK * n:
                        out.append((d.name, 1))
            self._order[key] = out
        return [d for d, _ in self._order[key]]

    def breaks_key_order(
        self, t: TableProfile, row: Mapping[str, Any], c: str, new: Any, skip: Sequence[Any] = ()
    ) -> str | None:
        """Why ``new`` as the row's ``c`` falls out of the order of a key ``c`` follows
        (:meth:`key_ordered`): a row with a smaller key holds a later ``c``, or one with a
        larger key an earlier one (rows whose key is in ``skip`` left out), or ``None``."""
        if new is None:
            return None
        for d in self.key_ordered(t, c):
            mine = row.get(d)
            if mine is None:
                continue
            cq, dq, lit = quote_ident(c), quote_ident(d), sql_lit(new)
            others = "".join(f" AND {dq} <> {sql_lit(x)}" for x in skip)
            got = self.v.rows(
                f"SELECT {dq}, {cq} FROM {quote_ident(t.name)} WHERE (({dq} < {sql_lit(mine)} "
                f"AND {cq} > {lit}) OR ({dq} > {sql_lit(mine)} AND {cq} < {lit})){others} LIMIT 1"
            )
            if got:
                return f"{c} {new!r} of {d} {mine!r} is out of {d} order ({d} {got[0][0]!r} has {got[0][1]!r})"
        return None

    def swap_breaks_order(
        self, t: TableProfile, a: Mapping[str, Any], b: Mapping[str, Any], c: str
    ) -> str | None:
        """Why exchanging ``c`` between rows ``a`` and ``b`` breaks the order of a key ``c``
        follows (:meth:`key_ordered`): two different values in key order come out reversed,
        and each new value must also fit between the rows' other neighbours by key."""
        for d in self.key_ordered(t, c):
            ka, kb, va, vb = a.get(d), b.get(d), a.get(c), b.get(c)
            if None in (ka, kb, va, vb) or va == vb:
                continue
            try:
                agree = (ka < kb) == (va < vb)
            except TypeError:
                continue
            if agree:
                return f"{c} follows {d} on the data; swapping {va!r} and {vb!r} reverses them"
        for me, other in ((a, b), (b, a)):
            keys = [other.get(d) for d in self.key_ordered(t, c)]
            why = self.breaks_key_order(t, me, c, other.get(c), [k for k in keys if k is not None])
            if why:
                return why
        return None

    def tied(self, t: TableProfile, c: str) -> str | None:
        """Another number of ``t`` that ``c`` moves with on the data (Pearson's correlation of
        at least :data:`TIED` over the sampled rows where both are present, at least
        :data:`LEAST_ORDERED` of them): a track's length and its size in bytes. Changed alone,
        ``c`` leaves the row saying two things (a 145-second MP3 of 9.6 MB). ``None`` when
        there is none."""
        key = (t.name, c, "<tied>")
        if key not in self._order:
            me = t.column(c)
            found: list[tuple[str, int]] = []
            if me.kind in ("integer", "real"):
                for d in t.columns:
                    if d.name == c or d.kind not in ("integer", "real") or d.unique:
                        continue
                    x, y = quote_ident(c), quote_ident(d.name)
                    got = self.v.rows(
                        f"SELECT COUNT(*), AVG(1.0 * {x} * {y}) - AVG({x}) * AVG({y}), "
                        f"AVG(1.0 * {x} * {x}) - AVG({x}) * AVG({x}), "
                        f"AVG(1.0 * {y} * {y}) - AVG({y}) * AVG({y}) FROM (SELECT {x}, {y} "
                        f"FROM {quote_ident(t.name)} LIMIT {SAMPLE_ROWS}) WHERE typeof({x}) IN "
                        f"('integer', 'real') AND typeof({y}) IN ('integer', 'real')"
                    )
                    if not got or not got[0][0] or got[0][0] < LEAST_ORDERED:
                        continue
                    _, cov, vx, vy = got[0]
                    if vx and vy and vx > 0 and vy > 0 and cov / (vx * vy) ** 0.5 >= TIED:
                        found.append((d.name, 1))
            self._order[key] = found
        return self._order[key][0][0] if self._order[key] else None

    def breaks_order(self, t: TableProfile, row: Mapping[str, Any], c: str, new: Any) -> str | None:
        """Why ``new`` as the row's ``c`` breaks an order that holds on every row (:meth:`ordered`:
        a rental returned before it was rented; :meth:`breaks_key_order`: an invoice dated
        after the invoices numbered after it), or ``None``."""
        if new is None:
            return None
        for d, sign in self.ordered(t, c):
            other = row.get(d)
            if (
                other is None
                or type(other) is not type(new)
                and not (isinstance(other, (int, float)) and isinstance(new, (int, float)))
            ):
                continue
            if (sign < 0 and new > other) or (sign > 0 and new < other):
                word = "before" if sign < 0 else "after"
                return f"{c} {new!r} would not be {word} {d} {other!r}"
        linked = self.breaks_linked_order(t, row, c, new)  # (a payment below the film's rate)
        return linked or self.breaks_key_order(t, row, c, new)  # (an invoice dated after later
        # ones)

    def chains(self, t: TableProfile, hops: int = 3) -> list[list[tuple[str, str, str]]]:
        """The many-to-one join paths from ``t`` (each step ``(column, table, key)``: a column
        whose values a unique key of the next table holds, :attr:`LakeProfile.joins`), at most
        ``hops`` long, no table twice: the rows a row of ``t`` refers to."""
        if self.lake is None:
            return []
        unique = {(x.name, c.name) for x in self.lake.tables for c in x.columns if c.unique}
        steps: dict[str, list[tuple[str, str, str]]] = {}
        for j in self.lake.joins:
            if j.right in unique and j.left[0] != j.right[0]:
                steps.setdefault(j.left[0], []).append((j.left[1], j.right[0], j.right[1]))
        out: list[list[tuple[str, str, str]]] = []
        todo: list[list[tuple[str, str, str]]] = [[s] for s in steps.get(t.name, [])]
        while todo:
            path = todo.pop(0)
            out.append(path)
            seen = {t.name, *(p[1] for p in path)}
            if len(path) < hops:
                todo += [[*path, s] for s in steps.get(path[-1][1], []) if s[1] not in seen]
        return out

    def linked_ordered(
        self, t: TableProfile, c: str
    ) -> list[tuple[list[tuple[str, str, str]], str, int]]:
        """Numbers of the rows a row of ``t`` refers to (:meth:`chains`) that ``c`` keeps an
        order with on its first :data:`SAMPLE_ROWS` rows, but for :data:`KEY_ORDER_SLACK` of
        them (a payment's amount is at least the rental rate of the film it pays for): ``(path,
        column, sign)``, ``sign`` -1 for ``c <= column``, 1 for ``c >= column``; never where
        the two are equal on every row. Only between measures
        (:func:`~clarisql.envs.synth.column_roles.column_role`), never against a key or code."""
        key = (t.name, c)
        if key not in self._linked:
            out: list[tuple[list[tuple[str, str, str]], str, int]] = []
            me = next((x for x in t.columns if x.name == c), None)
            if me is not None and column_role(me) == "measure":
                for path in self.chains(t):  # (empty without the lake's joins)
                    for d in self.lake.table(path[-1][1]).columns if self.lake else ():
                        if column_role(d) != "measure":  # (an amount against a rate, no key)
                            continue
                        joins, last = _join_sql(path)
                        cq, dq = f"a0.{quote_ident(c)}", f"{last}.{quote_ident(d.name)}"
                        got = self.v.rows(
                            f"SELECT COUNT(*), SUM({cq} <= {dq}), SUM({cq} >= {dq}) FROM "
                            f"(SELECT * FROM {quote_ident(t.name)} LIMIT {SAMPLE_ROWS}) AS a0 "
                            f"{joins} WHERE {cq} IS NOT NULL AND {dq} IS NOT NULL"
                        )
                        sign = _order_sign(got, KEY_ORDER_SLACK)
                        if sign:
                            out.append((path, d.name, sign))
            self._linked[key] = out
        return self._linked[key]

    def breaks_linked_order(
        self, t: TableProfile, row: Mapping[str, Any], c: str, new: Any
    ) -> str | None:
        """Why ``new`` as the row's ``c`` breaks an order with a number of a row it refers to
        (:meth:`linked_ordered`: a payment of 1.99 for a film rented at 2.99), or ``None``."""
        if not isinstance(new, (int, float)) or isinstance(new, bool):
            return None
        for path, d, sign in self.linked_ordered(t, c):
            first = row.get(path[0][0])
            if first is None:
                continue
            _, table, k = path[0]  # (from the row the first step leads to)
            joins, last = _join_sql(path[1:], start=1)
            got = self.v.rows(
                f"SELECT {last}.{quote_ident(d)} FROM {quote_ident(table)} AS a1 {joins} "
                f"WHERE a1.{quote_ident(k)} = {sql_lit(first)} LIMIT 2"
            )
            other = got[0][0] if got and len(got) == 1 else None
            if not isinstance(other, (int, float)):
                continue
            if (sign > 0 and new < other) or (sign < 0 and new > other):
                word = "at least" if sign > 0 else "at most"
                return f"{c} {new!r} would not be {word} {path[-1][1]}.{d} {other!r}"
        return None

    def twin_row(
        self, t: TableProfile, row: Mapping[str, Any], c: str, key: str, skip: Sequence[Any]
    ) -> str | None:
        """Why changing ``c`` of ``row`` (keyed by ``key``) contradicts another row of ``t``
        listing the same thing, or ``None``. Such a row has ``row``'s value of a column that
        names the rows (:func:`names_row`: a track's name), compared folded (:func:`fold`:
        "Knockin On Heavens Door" is "Knockin' On Heaven's Door"): where ``c`` is that name
        itself, the other row keeps it (a live album's "Blood Brothers" beside the studio
        one); else where it also agrees on ``c`` (the same value folded, or a credit sharing
        a person: :func:`shares_person`), the change leaves the two disagreeing. Rows whose key
        is in ``skip`` (the row, a swap's other row) do not count."""
        for d in t.columns:
            if row.get(d.name) is None or not names_row(t, d):
                continue
            keys = [k for k in self.named_alike(t, d.name, key, row[d.name]) if k not in skip]
            if not keys:
                continue
            if d.name == c:
                return f"another row is called {row[d.name]!r} too (key {keys[0]!r})"
            got = self.v.rows(
                f"SELECT {quote_ident(c)} FROM {quote_ident(t.name)} WHERE {quote_ident(key)} "
                f"IN ({', '.join(sql_lit(k) for k in keys[:50])})"
            )
            for (x,) in got or []:
                if x == row.get(c) or shares_person(x, row.get(c)):
                    return f"another row with {d.name} = {row[d.name]!r} keeps {c} = {x!r}"
        return None

    def named_alike(self, t: TableProfile, d: str, key: str, value: Any) -> list[Any]:
        """The keys of ``t``'s rows whose ``d`` is ``value`` folded (:func:`fold`), read once
        per column (its first :data:`SAMPLE_ROWS` rows)."""
        idx = self._named.get((t.name, d, key))
        if idx is None:
            idx = {}
            got = self.v.trusted_rows(  # (every row of the sample: no verdict's row cap)
                f"SELECT {quote_ident(key)}, {quote_ident(d)} FROM {quote_ident(t.name)} "
                f"WHERE {quote_ident(d)} IS NOT NULL LIMIT {SAMPLE_ROWS}"
            )
            for k, x in got or []:
                idx.setdefault(fold(x), []).append(k)
            self._named[(t.name, d, key)] = idx
        return list(idx.get(fold(value), ()))

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
        dependency that holds on the data, or another row listing the same thing
        (:meth:`twin_row`), or ``None``. With ``alone`` (a point update), a
        column that another column determines is not changed at all: the row's own value of the
        determining column (even one no other row holds) fixes it. Rows whose key is in ``exclude`` (the
        other row of a swap) are not compared with on the determining side; on the determined
        side every other row holding ``new`` is (a state swapped between two customers of two
        countries: each state was seen with its own country)."""
        tq, kq = quote_ident(t.name), quote_ident(key)
        skip = [row[key], *exclude]
        others = f"{kq} NOT IN ({', '.join(sql_lit(x) for x in skip)})"
        if new != row.get(c):
            twin = self.twin_row(t, row, c, key, skip)
            if twin:
                return twin
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


#: a column varies inside the groups of another when it takes two values or more in more than
#: this share of the groups of two rows or more, and there are at least :data:`LEAST_VARIED`
#: such groups (fewer say nothing: the district of the 4 cities with two addresses)
VARIES_SHARE = 0.5
LEAST_VARIED = 5


def varies_within(v: Verifier, table: str, g: str, c: str) -> bool:
    """Whether ``c`` is a value of each row, not of its group ``g``: inside more than
    :data:`VARIES_SHARE` of the groups of ``g`` that hold two rows or more (at least
    :data:`LEAST_VARIED` of them, on the first :data:`SAMPLE_ROWS` rows) ``c`` takes two values
    or more. Two tracks of one album have their own names; two addresses of one city share its
    district, so two that differ in it are an error of the data, not a mix-up a swap repairs."""
    tq, gq, cq = quote_ident(table), quote_ident(g), quote_ident(c)
    got = v.rows(
        f"SELECT COUNT(*), SUM(n > 1) FROM (SELECT COUNT(DISTINCT {cq}) AS n FROM "
        f"(SELECT {gq}, {cq} FROM {tq} LIMIT {SAMPLE_ROWS}) WHERE {gq} IS NOT NULL "
        f"AND {cq} IS NOT NULL GROUP BY {gq} HAVING COUNT(*) > 1)"
    )
    if not got or not got[0][0] or got[0][0] < LEAST_VARIED:
        return False
    return (got[0][1] or 0) > VARIES_SHARE * got[0][0]


References = Sequence[tuple[str, Sequence[str], str, Sequence[str]]]


def _child_text_columns(v: Verifier, child: str, src: str) -> list[str]:
    """The columns of ``child`` that may hold text of its own: not the reference ``src``, not
    a time the database keeps (``last_update``)."""
    from clarisql.envs.state.digest import DEFAULT_VOLATILE_COLUMNS

    got = v.rows(f"SELECT name FROM pragma_table_info({sql_lit(child)})") or []
    return [r[0] for r in got if r[0] != src and r[0].lower() not in DEFAULT_VOLATILE_COLUMNS]


def _wordy(n: str) -> str:
    """SQL: column ``n`` holds text with a letter that is not a date or a time."""
    q = quote_ident(n)
    return (
        f"(typeof({q}) = 'text' AND {q} GLOB '*[A-Za-z]*' "
        f"AND NOT {q} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]*')"
    )


def kept_in_step(v: Verifier, table: str) -> set[str]:
    """The tables (case-folded) a trigger on ``table`` updates when its rows change: a copy the
    database keeps in step itself (``film_text`` beside ``film``), which a write leaves right."""
    got = v.rows(
        f"SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = {sql_lit(table)}"
    )
    out: set[str] = set()
    for (sql,) in got or []:
        if isinstance(sql, str) and re.search(
            r"\bUPDATE\s+OF\b|\bAFTER\s+UPDATE\b|\bBEFORE\s+UPDATE\b", sql, re.I
        ):
            out.update(m.casefold() for m in re.findall(r"\bUPDATE\s+[\"`\[]?(\w+)", sql, re.I))
    return out - {"of", "on"}


def spelled_in_children(
    v: Verifier, refs: References, table: str, row: Mapping[str, Any], c: str
) -> str | None:
    """A row of another table that refers to ``row`` of ``table`` (``refs``: ``(child, child
    columns, parent, parent columns)``, declared and discovered) and holds text that contains
    ``row[c]`` (case-folded, at least :data:`LEAST_SPELLED` characters): the album's title
    track, the district of a city's address named as the city. ``"child.column 'text'"`` or
    ``None``. Renamed or swapped, the value would leave those rows naming the old one."""
    x = row.get(c)
    if not isinstance(x, str) or len(x.strip()) < LEAST_SPELLED:
        return None
    needle = sql_lit(x.strip().lower())
    synced = kept_in_step(v, table)
    for child, src, parent, dst in refs:
        if parent != table or child == table or len(src) != 1 or len(dst) != 1:
            continue
        if child.casefold() in synced:
            continue  # a copy a trigger rewrites with the row (film_text beside film)
        kv = row.get(dst[0])
        if kv is None:
            continue
        cols = _child_text_columns(v, child, src[0])
        if not cols:
            continue
        hit = " OR ".join(
            f"(typeof({quote_ident(n)}) = 'text' AND instr(lower({quote_ident(n)}), {needle}) > 0)"
            for n in cols
        )
        sel = ", ".join(quote_ident(n) for n in cols)
        got = v.rows(
            f"SELECT {sel} FROM {quote_ident(child)} WHERE {quote_ident(src[0])} = "
            f"{sql_lit(kv)} AND ({hit}) LIMIT 1"
        )
        if got:
            low = x.strip().lower()
            for n, y in zip(cols, got[0], strict=True):
                if isinstance(y, str) and low in y.lower():
                    return f"{child}.{n} {y!r}"
            return child
    return None


def described_by_children(
    v: Verifier, refs: References, table: str, row: Mapping[str, Any]
) -> str | None:
    """A table of rows that refer to ``row`` of ``table`` and hold text of their own (an
    album's tracks with their names, a city's addresses): the row is a whole thing those rows
    describe, not an entry of a list (a copy a trigger keeps in step is no such row). The
    child table's name, or ``None``."""
    synced = kept_in_step(v, table)
    for child, src, parent, dst in refs:
        if parent != table or child == table or len(src) != 1 or len(dst) != 1:
            continue
        if child.casefold() in synced:
            continue
        kv = row.get(dst[0])
        if kv is None:
            continue
        cols = _child_text_columns(v, child, src[0])
        if not cols:
            continue
        text = " OR ".join(_wordy(n) for n in cols)
        got = v.rows(
            f"SELECT 1 FROM {quote_ident(child)} WHERE {quote_ident(src[0])} = {sql_lit(kv)} "
            f"AND ({text}) LIMIT 1"
        )
        if got:
            return child
    return None


def fold(value: Any) -> str:
    """``value`` as a name is compared: case, accents and everything but letters and digits
    left out ("Knockin' On Heaven's Door" and "Knockin On Heavens Door" are one)."""
    text = unicodedata.normalize("NFKD", str(value))
    return "".join(ch for ch in text.casefold() if ch.isalnum())


_CREDIT_SPLIT = re.compile(r"\s*(?:/|,|&|;|\band\b)\s*", re.I)


def shares_person(a: Any, b: Any) -> bool:
    """Two credit lists ("Clapton/Dylan", "Bob Dylan") that name one person alike: a part of
    one whose last word (folded, at least 4 letters) ends a part of the other."""
    if not isinstance(a, str) or not isinstance(b, str):
        return False

    def lasts(s: str) -> set[str]:
        out = set()
        for part in _CREDIT_SPLIT.split(s):
            words = part.split()
            if words and len(fold(words[-1])) >= 4:
                out.add(fold(words[-1]))
        return out

    return bool(lasts(a) & lasts(b))


#: a text column names its rows when at least this share of them hold a value of their own
NAMES_ROW = 0.9


def names_row(t: TableProfile, c: Any) -> bool:
    """Whether text column ``c`` of ``t`` is what its rows are called: a name or title nearly
    every row holds alone (:data:`NAMES_ROW`: an album's title, a city's name), not a place or
    kind several rows share (an address's district)."""
    return c.kind == "text" and c.distinct >= NAMES_ROW * max(1, t.rows * (1 - c.missing))


def interchangeable(a: Any, b: Any) -> bool:
    """Two names that differ in their numbers alone ("Vol. 1" and "Vol. 2", "[Disc 1]" and
    "[Disc 2]"): entries of one series that can be mixed up, unlike two albums or two cities."""
    if not isinstance(a, str) or not isinstance(b, str):
        return False
    mask = lambda s: re.sub(r"\d+", "#", s.strip().casefold())  # noqa: E731
    return mask(a) == mask(b)


def whole_things_swapped(
    v: Verifier,
    refs: References,
    t: TableProfile,
    c: Any,
    a: Mapping[str, Any],
    b: Mapping[str, Any],
) -> str | None:
    """Why exchanging column ``c`` (what the rows are called, :func:`names_row`) between rows
    ``a`` and ``b`` of ``t`` swaps two whole things: rows of another table describe one of them
    (:func:`described_by_children`: two albums, two cities), and the two names differ in more
    than a number (:func:`interchangeable`); ``None`` when it does not. The write layer and the
    audit ask this one rule."""
    if not names_row(t, c) or interchangeable(a.get(c.name), b.get(c.name)):
        return None
    whole = [described_by_children(v, refs, t.name, r) for r in (a, b)]
    told = next((w for w in whole if w), None)
    return f"{c.name} of two whole things ({told} refer to them)" if told else None


def spelled_in_row(row: Mapping[str, Any], c: str) -> str | None:
    """The other text column of ``row`` whose value contains ``row[c]`` (case-folded, at least
    :data:`LEAST_SPELLED` characters: a name inside an e-mail or login), or one of its words of
    :data:`LEAST_WORD` letters or more (a company inside the e-mail's domain), or ``None``."""
    x = row.get(c)
    if not isinstance(x, str) or len(x.strip()) < LEAST_SPELLED:
        return None
    needle = x.strip().casefold()
    # a word of a longer value counts too ("Microsoft Corporation" in jack@microsoft.com)
    words = [w for w in re.findall(r"[^\W\d_]+", needle) if len(w) >= LEAST_WORD and w != needle]
    for name, y in row.items():
        if name != c and isinstance(y, str) and y.strip().casefold() != needle:
            hay = y.casefold()
            if needle in hay or any(w in hay for w in words):
                return name
    return None


__all__ = [
    "Dependencies",
    "described_by_children",
    "interchangeable",
    "names_row",
    "spelled_in_children",
    "spelled_in_row",
    "varies_within",
    "whole_things_swapped",
    "KEY_ORDER_SLACK",
    "LEAST_GROUPS",
    "LEAST_ORDERED",
    "LEAST_SPELLED",
    "LEAST_VARIED",
    "NAMES_ROW",
    "SAMPLE_ROWS",
    "TIED",
    "VARIES_SHARE",
]
