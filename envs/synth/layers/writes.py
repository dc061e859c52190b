"""DySQL-Bench-style write tasks: INSERT / UPDATE / DELETE requests with golden action lists.

Well-specified requests name the row by its key (a unique column) and say every value:
- update a measure of one row to a new number, or move a row to another value of a scope
  column; delete one row; insert a new row (a copy of an existing row's values with a new key,
  every value stated).
Underspecified requests (the user reveals the gold value when asked with the matching label):
- ``not-exist``: the row is named by an abbreviated or misspelled name that >= 2 names fit
  (the same surfaces as :mod:`.clarify`);
- ``Missing``: "every row of the {scope} I have in mind" without saying which scope value (>= 2
  values have rows): a price raised or lowered by a share, or the few rows below a bound
  deleted; or a new row for one table of a family of same-schema tables.
A swap (two statements) exchanges a name, date or position between two neighbouring rows of
one parent row (or one scope value), said in the request.

Every task carries ``gold_actions``, ``metadata["naive_actions"]`` (the literal reading: the name
as written, the default scope value or table; equal to the gold for well-specified requests) and
an ``instruction`` for the instruction-following user (DySQL-Bench's form: what "you" want, and for
underspecified requests the detail the user keeps until asked). Checks (with
:meth:`~clarisql.envs.synth.verify.Verifier.write_digest`): the golden list runs and changes the
final-state digest; on underspecified requests the naive list's digest differs from the gold's.
Columns holding numbers or dates as text (``needs_cast``) are never written, so the stored type of
a new value is not a guess.

What a reviewer would reject is not made:
- a row is named by its key or by a **natural key** (:func:`natural_keys`: a name or title
  column unique on the data), never by a column that does not identify it (a birthplace, a
  city, a category: ``UPDATE ... WHERE birth_city = 'Big River'`` changes every person born
  there);
- a misspelled name that only one value is near (within two edits, or one completion of a
  prefix) is not asked: exploring the values resolves it;
- a deleted row is one no other row refers to (declared foreign keys and discovered joins), so
  deleting it leaves no orphans;
- a new number stays near the old one (half to one and a half times it, within the column's
  range): no country of a billion people;
- no write changes a total of other rows or one of its terms (:func:`derived_columns`, found
  on the data: ``invoices.Total`` = the sum of its lines' price times quantity), and a table
  holding or feeding one gets no insert: the data keeps adding up;
- no arbitrary number over a range of rows ("change the total of all its invoices below 1.98
  to 1.43"): a scope update changes a price-like measure (:func:`priced`) by a share, over at
  most :data:`MAX_SCOPE_ROWS` rows;
- a swap never exchanges a measure (two tracks' sizes) nor rows with nothing in common: the
  two rows are neighbours by key inside one group (:meth:`_WriteGen.groups`: the most specific
  parent reference, else a scope), and the request says which group;
- a new row never copies a row's unique name (a second "Serang"), states no missing value and
  no value the database sets itself (``last_update``), copies no other unique value (an
  e-mail, a phone number: left out), copies no value that nearly every row holds alone (a name
  with one repeat, a rental, a timestamp: the table gets no insert, the copy would be a second
  sale), changes a measure so that no existing row holds every stated value besides the key
  (checked on the data), and holds at least two values besides
  its key (not "a new playlist: ID 19, name Music", a copy of a name); the "which table?"
  insert states no value that tells the table (:func:`reveals_table`: a value found in the
  gold table only, or a number/date inside the gold table's range and outside every other's;
  keys get a value new to the whole family, other revealing values are left out).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from clarisql.envs.state.digest import DEFAULT_VOLATILE_COLUMNS
from clarisql.envs.synth.column_roles import column_role, name_words
from clarisql.envs.synth.consistency import (
    Dependencies,
    spelled_in_children,
    spelled_in_row,
    varies_within,
    whole_things_swapped,
)
from clarisql.envs.synth.layers.clarify import _ClarifyGen
from clarisql.envs.synth.layers.common import (
    Made,
    families,
    fill,
    human,
    is_year_like,
    measures,
    qi,
    scope_values,
    scopes,
    show,
    spread,
    sql_lit,
    tidy,
    top_up,
)
from clarisql.envs.synth.names import speakable
from clarisql.envs.synth.phrasing import key_words, plural, row_noun
from clarisql.envs.synth.profile import is_missing, present_sql
from clarisql.envs.synth.types import ColumnProfile, Draft, LakeProfile, TableProfile
from clarisql.envs.synth.verify import Verifier
from clarisql.envs.tasks import Label, Task, Underspec

_UPDATE = (
    "Please change the {c} of the {row} with {k} {kv} to {new}.",
    "Set the {c} of the {row} with {k} {kv} to {new}.",
    "The {c} of the {row} whose {k} is {kv} is wrong; it should be {new}.",
)
_DELETE = (
    "Delete the {row} with {k} {kv}.",
    "Please remove the {row} whose {k} is {kv}.",
    "The {row} with {k} {kv} was entered by mistake; delete it.",
)
_INSERT = ("Add a new {row}: {vals}.", "Please record a new {row} with {vals}.")
_NAME_UPDATE = (
    "Set the {c} of the {row} {name} to {new}.",
    "Please change the {c} for {name} in the {rows} to {new}.",
)
#: a change of price a user asks for over a set of rows: by a share, never to one number
_SCOPE_UPDATE = (
    "{pre}{verb} the {c} of every {row} by {pct} percent.",
    "{pre}{verb} the {c} of the {rows} by {pct} percent.",
)
_SCOPE_DELETE = (
    "{pre}delete the {rows} whose {c} is below {x}.",
    "{pre}remove every {row} with a {c} below {x}.",
)
#: two rows of one group (the same parent or scope value) whose values were mixed up
_SWAP = (
    "Among {grp}, the {row} with {k} {a} and the one with {k} {b} have each other's {c}; "
    "please swap them.",
    "For {grp}, the {c} of the {row} with {k} {a} and of the one with {k} {b} were mixed up; "
    "please swap them.",
)

# a scope one has in mind, not one "managed" (nobody manages a film rating)
_SCOPE_PRE = ("For the {slot} I have in mind, ", "In the one {slot} I mean, ")
MAX_INSERT_COLUMNS = 8
#: a scope update changes at most this many rows
MAX_SCOPE_ROWS = 40
#: roles of a column two rows' values of which can be swapped by mistake (a name, a date, a
#: position): not a measure, a flag or a code
SWAPPABLE = ("name", "date", "ordinal")
#: words of a measure that is a price, which users raise or lower by a share
_PRICE = {
    "price", "cost", "fee", "fees", "rate", "salary", "wage", "wages", "charge", "fare",
    "rent", "pay", "budget", "premium", "tariff", "commission", "stipend",
}  # fmt: skip


def priced(c: ColumnProfile) -> bool:
    """A measure named as a price, cost, fee, rate or pay (:data:`_PRICE`)."""
    return bool(set(name_words(c.name)) & _PRICE)


def _row(t: str) -> str:
    """One row of table ``t`` as a noun (``addresses`` -> ``address``, ``staff`` -> ``staff
    member``: :func:`~clarisql.envs.synth.phrasing.singular`)."""
    return row_noun(human(t))


def _rows(t: str) -> str:
    """The rows of table ``t`` as a plural noun (``film`` -> ``films``)."""
    return plural(_row(t))


def _q(v: Any) -> str:
    return f'"{v}"' if isinstance(v, str) else show(v)


def _writable(c: ColumnProfile) -> bool:
    return not c.needs_cast


#: words of a column that says where or what kind a row is, not which one it is
_NOT_NAMING = {
    "city", "town", "place", "country", "state", "region", "province", "county", "district",
    "birthplace", "born", "birth", "hometown", "address", "street", "location", "nationality",
    "citizenship", "type", "kind", "category", "genre", "status", "gender", "sex", "color",
    "colour", "language", "department", "team", "school", "college", "club",
}  # fmt: skip
#: what a person is, not a unit someone handles: never "the one birth city I manage"
_PERSONAL = {
    "birth", "born", "birthplace", "hometown", "gender", "sex", "nationality", "citizenship",
    "death", "died", "marital", "religion", "race", "ethnicity", "blood", "age",
}  # fmt: skip
#: words of a moment the database keeps for itself (when the record was made or changed):
#: no user corrects a ``create_date``
_RECORD_TIME = {
    "create", "created", "creation", "modified", "updated", "update", "inserted", "timestamp",
}  # fmt: skip
_NAMING = {"name", "title", "label", "username", "login", "nickname", "handle", "surname"}


def _managed(t: TableProfile) -> list[ColumnProfile]:
    """Scope columns someone could be handling (a region, a store), not a person's traits."""
    return [c for c in scopes(t) if not set(name_words(c.name)) & _PERSONAL]


def natural_keys(t: TableProfile) -> list[ColumnProfile]:
    """The text columns that name one row each: unique on the data (every row, distinct), of a
    name-like role, and not a place, kind or group word (``birth_city`` never names a person).
    A column whose name says ``name``/``title`` comes first."""
    out = [
        c
        for c in t.columns
        if c.kind == "text"
        and c.unique
        and column_role(c) in ("name", "identifier")
        and not set(name_words(c.name)) & _NOT_NAMING
    ]
    return sorted(out, key=lambda c: not set(name_words(c.name)) & _NAMING)


def unique_nearest(surface: str, gold: str, values: list[str]) -> bool:
    """Whether exploring the values resolves ``surface`` alone: ``gold`` is the only value
    within two edits of it, or the only one it begins."""
    s = surface.casefold()
    near = [v for v in values if _edits(s, v.casefold()) <= 2]
    starts = [v for v in values if v.casefold().startswith(s)]
    return near == [gold] or starts == [gold]


def _edits(a: str, b: str, cap: int = 3) -> int:
    if abs(len(a) - len(b)) >= cap:
        return cap
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) >= cap:
            return cap
        prev = cur
    return min(prev[-1], cap)


def reveals_table(v: Verifier, gold_t: str, others: list[str], col: str, x: Any) -> bool:
    """Whether the value ``x`` of column ``col`` tells that a row belongs in ``gold_t`` rather
    than in any of ``others``: ``x`` occurs in ``gold_t`` and in none of the others, or ``x``
    (a number or an ISO date) lies inside ``gold_t``'s range and outside each other's."""
    if x is None:
        return False
    cq, lit = qi(col), sql_lit(x)

    def has(t: str) -> bool:
        got = v.rows(f"SELECT EXISTS (SELECT 1 FROM {qi(t)} WHERE {cq} = {lit})")
        return bool(got and got[0][0])

    def inside(t: str) -> bool:
        got = v.rows(
            f"SELECT {lit} BETWEEN MIN({cq}) AND MAX({cq}) FROM {qi(t)} WHERE {cq} IS NOT NULL"
        )
        return bool(got and got[0][0])

    if has(gold_t) and not any(has(t) for t in others):
        return True
    ranged = isinstance(x, (int, float)) or (isinstance(x, str) and _day_like(x))
    return ranged and inside(gold_t) and not any(inside(t) for t in others)


def _names_a_row(c: ColumnProfile, share: float = 0.9, least: int = 10) -> bool:
    """Nearly every present value of ``c`` occurs once (a name, a rental, a timestamp): a value
    copied from a row names that row, so a new row holding it is a near-duplicate of it."""
    present = c.rows * (1 - c.missing)
    return c.distinct >= least and c.distinct >= share * present


def _day_like(x: str) -> bool:
    return len(x) >= 7 and x[:4].isdigit() and x[4] == "-" and x[5:7].isdigit()


def references(lake: LakeProfile, v: Verifier) -> list[tuple[str, list[str], str, list[str]]]:
    """Every reference between tables: ``(child, child columns, parent, parent columns)``, from
    the foreign keys the schema declares (``PRAGMA foreign_key_list`` on every table,
    multi-column keys too, whatever discovery kept) and from the discovered joins with their
    alternative paths."""
    refs: list[tuple[str, list[str], str, list[str]]] = []
    names = {t.name for t in lake.tables}
    for t in lake.tables:
        got = v.rows(f"SELECT * FROM pragma_foreign_key_list({sql_lit(t.name)})") or []
        by_id: dict[Any, list[tuple]] = {}
        for r in got:
            by_id.setdefault(r[0], []).append(r)
        for rows in by_id.values():
            parent = rows[0][2]
            if parent not in names:
                continue
            src = [r[3] for r in sorted(rows, key=lambda r: r[1])]
            dst = [r[4] for r in sorted(rows, key=lambda r: r[1])]
            if any(x is None for x in dst):  # a key naming no column: the parent's primary key
                info = v.rows(f"SELECT name, pk FROM pragma_table_info({sql_lit(parent)})")
                pk = [n for n, k in sorted(info or [], key=lambda r: r[1]) if k]
                if len(pk) != len(src):
                    continue
                dst = pk
            refs.append((t.name, src, parent, dst))
    for j in lake.joins:
        for (lt, lc), (rt, rc) in [(j.left, j.right), *j.alternatives]:
            refs.append((lt, [lc], rt, [rc]))
    return refs


#: at most this many numeric columns of a child table are tried as the terms of a total
_MAX_TERMS = 6


def derived_columns(
    lake: LakeProfile,
    v: Verifier,
    refs: list[tuple[str, list[str], str, list[str]]] | None = None,
    share: float = 0.95,
) -> set[tuple[str, str]]:
    """``(table, column)`` pairs a write must not change alone: a number of a parent row equal to
    a total over its child rows (``invoices.Total`` = the sum of ``UnitPrice * Quantity`` of its
    ``invoice_items``; a ``track_count`` = their number) on >= ``share`` of the parents that have
    children (at least 3, a fifth of them with two or more: one child each is a copy, not a
    total), and the child columns that total is made of; never an identifier or code. Checked on the data,
    one grouped query per reference (:func:`references`); names play no part."""
    refs = references(lake, v) if refs is None else refs
    out: set[tuple[str, str]] = set()
    seen: set[tuple[str, str, str, str]] = set()
    for child, src, parent, dst in refs:
        if len(src) != 1 or child == parent or (child, src[0], parent, dst[0]) in seen:
            continue
        seen.add((child, src[0], parent, dst[0]))
        try:
            ct, pt = lake.table(child), lake.table(parent)
        except KeyError:
            continue
        nums = lambda t, skip: [  # noqa: E731
            c
            for c in t.columns
            if c.kind in ("integer", "real")
            and not c.needs_cast
            and c.name not in skip
            and not c.unique
        ]
        pms = [
            c
            for c in nums(pt, {dst[0]})
            if c.distinct >= 3 and column_role(c) not in ("identifier", "code")
        ]
        cms = nums(ct, {src[0]})[:_MAX_TERMS]
        if not pms:
            continue
        terms: list[tuple[str, tuple[str, ...]]] = [("COUNT(*)", ())]
        terms += [(f"SUM({qi(c.name)})", (c.name,)) for c in cms]
        terms += [
            (f"SUM({qi(a.name)} * {qi(b.name)})", (a.name, b.name))
            for i, a in enumerate(cms)
            for b in cms[i + 1 :]
        ]
        sums = ", ".join(f"{e} AS s{i}" for i, (e, _) in enumerate(terms))
        checks = ", ".join(
            f"SUM(ABS(p.{qi(m.name)} - s.s{i}) <= 0.005 + 0.0001 * ABS(p.{qi(m.name)}))"
            for m in pms
            for i in range(len(terms))
        )
        got = v.rows(
            f"SELECT COUNT(*), SUM(s.s0 >= 2), {checks} FROM {qi(parent)} AS p "
            f"JOIN (SELECT {qi(src[0])} AS k, "
            f"{sums} FROM {qi(child)} GROUP BY 1) AS s ON s.k = p.{qi(dst[0])}"
        )
        if not got or not got[0][0] or got[0][0] < 3 or (got[0][1] or 0) < 0.2 * got[0][0]:
            continue  # (one child per parent: a copy, not a total)
        n, hits = got[0][0], got[0][2:]
        for a, m in enumerate(pms):
            for i, (_, cols) in enumerate(terms):
                if (hits[a * len(terms) + i] or 0) >= share * n:
                    out.add((parent, m.name))
                    out.update((child, c) for c in cols)
    return out


def feeds_total(
    table: str,
    derived: set[tuple[str, str]],
    refs: list[tuple[str, list[str], str, list[str]]],
) -> bool:
    """Whether ``table`` holds terms of a total kept in a parent row (:func:`derived_columns`:
    the lines of an invoice whose ``Total`` is their sum): a row of it deleted leaves the total
    wrong."""
    mine = {c for t, c in derived if t == table}
    return bool(mine) and any(
        child == table and parent != table and any(t == parent for t, _ in derived)
        for child, _, parent, _ in refs
    )


#: a new number is drawn among the values at least this share of the rows hold, where any is
#: near the old one (a payment of 3.99, not the 1.98 of one row in ten thousand)
COMMON_SHARE = 0.01


class _WriteGen:
    def __init__(self, lake: LakeProfile, v: Verifier, rng: random.Random):
        self.lake, self.v, self.rng = lake, v, rng
        self.tables = [  # (link and mirror tables are no subject: lake.non_subjects)
            t for t in lake.tables if t.rows > 0 and t.usable() and lake.is_subject(t.name)
        ]
        self.base = v.base_digest()
        self.names = _ClarifyGen(lake, v, rng)
        self._refs: list[tuple[str, list[str], str, list[str]]] | None = None
        self._derived: set[tuple[str, str]] | None = None
        self._swapped: set[tuple[str, str, Any, Any]] = set()
        self.deps = Dependencies(v, lake)

    def keyed(self) -> list[tuple[TableProfile, ColumnProfile]]:
        return [
            (t, k)
            for t in self.tables
            for k in t.columns[:1]  # the first column, when it is a key (the usual primary key)
            if k.unique
            and k.kind in ("integer", "text")
            and not k.needs_cast
            and speakable(k.name)  # (the request names the key: no "abschrift ID")
        ]

    def pick_row(self, t: TableProfile, k: ColumnProfile, where: str = "1") -> tuple | None:
        n = self.v.rows(f"SELECT COUNT(*) FROM {qi(t.name)} WHERE {where}")
        if not n or not n[0][0]:
            return None
        off = self.rng.randrange(min(n[0][0], 1000))
        cols = ", ".join(qi(c.name) for c in t.columns)
        got = self.v.rows(
            f"SELECT {cols} FROM {qi(t.name)} WHERE {where} ORDER BY {qi(k.name)} LIMIT 1 OFFSET {off}"
        )
        return got[0] if got else None

    def new_number(self, c: ColumnProfile, old: Any) -> Any:
        """A new value for ``c`` within its observed range (different from ``old``): where the
        column holds values between half and one and a half times ``old``, one of them (a price
        of 1.99 or 3.99 where every amount ends in .99, never 1.61), else a number drawn in
        that range."""
        held = self.held_near(c, old)
        if held:
            return self.rng.choice(held)
        lo, hi = c.min, c.max
        if not isinstance(lo, (int, float)) or not isinstance(hi, (int, float)) or lo >= hi:
            base = old if isinstance(old, (int, float)) and old else 10
            lo, hi = base * 0.5, base * 2.0
        elif isinstance(old, (int, float)) and not isinstance(old, bool) and old > 0:
            # near the old value (a correction, not a new order of magnitude), within the range
            lo, hi = max(lo, old * 0.5), min(hi, old * 1.5)
            if hi - lo < 1 and c.kind == "integer":
                lo, hi = c.min, c.max
        for _ in range(8):
            new: Any = (
                self.rng.randint(int(lo), int(hi))
                if c.kind == "integer"
                else round(self.rng.uniform(lo, hi), 2)
            )
            if new != old:
                return new
        return (old or 0) + 1

    def held_near(self, c: ColumnProfile, old: Any) -> list[Any]:
        """The values ``c`` holds between half and one and a half times ``old`` (up to 200 of
        them, in order), ``old`` left out: those at least :data:`COMMON_SHARE` of the rows hold
        (the column's grid), else the nearest such value below and above, else every value
        held near; none for a number that is not positive."""
        if not isinstance(old, (int, float)) or isinstance(old, bool) or old <= 0:
            return []
        cq, tq = qi(c.name), qi(c.table)
        num = f"{cq} <> {sql_lit(old)} AND typeof({cq}) IN ('integer', 'real')"
        near = f"{cq} BETWEEN {old * 0.5!r} AND {old * 1.5!r} AND {num}"
        common = (  # the column's common values: its grid (amounts of x.99), not the odd 1.98
            f"SELECT {cq} AS v FROM {tq} WHERE {num} GROUP BY 1 HAVING COUNT(*) * "
            f"{round(1 / COMMON_SHARE)} >= (SELECT COUNT(*) FROM {tq})"
        )
        got = self.v.rows(
            f"SELECT v FROM ({common}) WHERE v BETWEEN {old * 0.5!r} AND {old * 1.5!r} "
            "ORDER BY 1 LIMIT 200"
        ) or [  # (none that near: the nearest common value below and above, within a factor
            (x,)  # of 2.5: 1.99 for 0.99, never 4.99 for 40.50)
            for x in (
                self.v.rows(
                    f"SELECT (SELECT MAX(v) FROM ({common}) WHERE v < {old!r}), "
                    f"(SELECT MIN(v) FROM ({common}) WHERE v > {old!r})"
                )
                or [()]
            )[0]
            if x is not None and old / 2.5 <= x <= old * 2.5
        ]
        got = got or self.v.rows(  # (no common value at all: any it holds near)
            f"SELECT DISTINCT {cq} FROM {tq} WHERE {near} ORDER BY 1 LIMIT 200"
        )
        if got:
            return [r[0] for r in got]
        # none that near (rates of 0.99, 2.99 and 4.99): the nearest value below and above
        near = self.v.rows(
            f"SELECT (SELECT MAX({cq}) FROM {tq} WHERE {cq} < {old!r} AND {num}), "
            f"(SELECT MIN({cq}) FROM {tq} WHERE {cq} > {old!r} AND {num})"
        )
        return [x for x in (near[0] if near else ()) if x is not None]

    def check(self, gold: list[str], naive: list[str] | None) -> bool:
        g = self.v.write_digest(gold)
        if g is None or g == self.base:
            return False
        return naive is None or self.v.write_digest(naive) != g

    # --- well-specified ----------------------------------------------------------------------
    def update(self) -> Made | None:
        rng = self.rng
        pairs = [(t, k) for t, k in self.keyed() if measures(t) or scopes(t)]
        if not pairs:
            return None
        t, k = rng.choice(pairs)
        row = self.pick_row(t, k)
        if row is None:
            return None
        kv = row[0]
        cols = [c for c in [*measures(t), *scopes(t)] if _writable(c) and c.name != k.name]
        cols = [
            c
            for c in self.free(t, cols)
            if not self.deps.tied(t, c.name) and not set(name_words(c.name)) & _RECORD_TIME
        ]
        if not cols:
            return None
        c = rng.choice(cols)
        old = row[t.columns.index(c)]
        named = dict(zip([x.name for x in t.columns], row, strict=True))
        if spelled_in_row(named, c.name):
            return None  # the row itself spells the value: it is right as it is
        if spelled_in_children(self.v, self.references(), t.name, named, c.name):
            return None  # rows referring to it spell the value (a city's addresses' district)
        if c in measures(t):
            new = self.new_number(c, old)
        else:
            # a value the rest of the row agrees with (no Salt Lake City invoice billed to "RJ")
            others = [
                x
                for x, _ in scope_values(self.v, t.name, c)
                if x != old and not self.deps.breaks_dependency(t, named, c.name, x, k.name)
            ]
            if not others:
                return None
            new = rng.choice(others)
        if self.deps.breaks_dependency(t, named, c.name, new, k.name):
            return None
        if self.deps.breaks_order(t, named, c.name, new):
            return None  # (a rental returned before it was rented)
        act = f"UPDATE {qi(t.name)} SET {qi(c.name)} = {sql_lit(new)} WHERE {qi(k.name)} = {sql_lit(kv)}"
        text = rng.choice(_UPDATE).format(
            c=human(c.name), row=_row(t.name), k=human(k.name), kv=_q(kv), new=_q(new)
        )
        if not self.check([act], None):
            return None
        return _made(text, [act], None, [], t, [k, c], "update", "simple")

    def references(self) -> list[tuple[str, list[str], str, list[str]]]:
        """Every reference between tables (:func:`references`), computed once."""
        if self._refs is None:
            self._refs = references(self.lake, self.v)
        return self._refs

    def derived(self) -> set[tuple[str, str]]:
        """The columns a write must keep consistent (:func:`derived_columns`), computed once."""
        if self._derived is None:
            self._derived = derived_columns(self.lake, self.v, self.references())
        return self._derived

    def free(self, t: TableProfile, cols: list[ColumnProfile]) -> list[ColumnProfile]:
        """``cols`` less the ones that hold or feed a total of other rows."""
        return [c for c in cols if (t.name, c.name) not in self.derived()]

    def unreferenced(self, t: TableProfile, alias: str | None = None) -> str:
        """A WHERE condition: no row of another table refers to this one (every declared
        foreign key and every discovered join into ``t``, :meth:`references`)."""
        me = qi(alias or t.name)
        conds = ["1"]
        for child, src, parent, dst in self.references():
            if parent != t.name:
                continue  # (a table referring to itself counts: a manager still managing)
            on = " AND ".join(f"c.{qi(a)} = {me}.{qi(b)}" for a, b in zip(src, dst, strict=True))
            conds.append(f"NOT EXISTS (SELECT 1 FROM {qi(child)} AS c WHERE {on})")
        return " AND ".join(conds)

    def delete(self) -> Made | None:
        if not self.keyed():
            return None
        t, k = self.rng.choice(self.keyed())
        if feeds_total(t.name, self.derived(), self.references()):
            return None  # an invoice line deleted leaves its invoice's total wrong
        row = self.pick_row(t, k, self.unreferenced(t))
        if row is None:
            return None
        act = f"DELETE FROM {qi(t.name)} WHERE {qi(k.name)} = {sql_lit(row[0])}"
        text = self.rng.choice(_DELETE).format(row=_row(t.name), k=human(k.name), kv=_q(row[0]))
        if not self.check([act], None):
            return None
        return _made(text, [act], None, [], t, [k], "delete", "simple")

    def insert_sql(self, t: str, cols: list[ColumnProfile], vals: list[Any]) -> str:
        names = ", ".join(qi(c.name) for c in cols)
        return f"INSERT INTO {qi(t)} ({names}) VALUES ({', '.join(sql_lit(x) for x in vals)})"

    def new_row(
        self, t: TableProfile, k: ColumnProfile | None
    ) -> tuple[list[ColumnProfile], list[Any]] | None:
        """A copy of an existing row with a new key and a changed measure (non-NULL values only);
        ``None`` for a table whose rows have a unique or nearly unique name, reference or moment
        (:func:`_names_a_row`: the copy would be a second one), and when some row already holds
        every stated value besides the key."""
        if any(c.name != (k.name if k else None) for c in natural_keys(t)):
            return None
        if any(x == t.name for x, _ in self.derived()):
            return None  # a new row would leave a total of other rows (or its own) wrong
        row = self.pick_row(t, k or t.columns[0])
        if row is None:
            return None
        cols, vals = [], []
        for c, x in zip(t.columns, row, strict=True):
            if is_missing(x) or isinstance(x, bytes):
                continue  # a missing value is not stated ("details ''")
            if c.name.lower() in DEFAULT_VOLATILE_COLUMNS:
                continue  # set by the database (last_update): no user states it
            if c.unique and c.kind == "text" and (k is None or c.name != k.name):
                continue  # another row's e-mail, phone or address is not this one's
            if isinstance(x, str) and len(x) > 80:
                return None  # a paragraph does not belong in a spoken request
            if not _writable(c):
                return None
            if (k is None or c.name != k.name) and c not in measures(t) and _names_a_row(c):
                # a second row with this name, rental or moment is a near-duplicate; a moment
                # can be a new one (after the latest), a name or a reference cannot
                x = self.later_moment(t, c)
                if x is None:
                    return None
                if k is None:
                    continue  # a family's row: a later moment could fall in another table's range
            if k is not None and c.name == k.name:
                top = self.v.rows(f"SELECT MAX({qi(k.name)}) FROM {qi(t.name)}")
                if not top or not isinstance(top[0][0], int):
                    return None
                x = top[0][0] + 1
            cols.append(c)
            vals.append(x)
        if len(cols) > MAX_INSERT_COLUMNS:
            return None
        if sum(k is None or c.name != k.name for c in cols) < 2:
            return None  # a key and a copied name ("a new playlist Music") is a duplicate
        # a new row, not a copy: a measure takes a new value, and the row must then differ from
        # every existing row in a stated value besides the key (checked on the data)
        ms = [i for i, c in enumerate(cols) if c in measures(t) and (k is None or c.name != k.name)]
        if ms:
            i = self.rng.choice(ms)
            vals[i] = self.new_number(cols[i], vals[i])
        if self.copies_a_row(t, k, cols, vals):
            return None
        return cols, vals

    def later_moment(self, t: TableProfile, c: ColumnProfile) -> str | None:
        """A moment after every value of ``c`` (1 to 30 days after the latest, written the same
        way: a date, or a date and a time); ``None`` when ``c`` holds no dates."""
        top = self.v.rows(f"SELECT MAX({qi(c.name)}) FROM {qi(t.name)}")
        x = top[0][0] if top else None
        if not isinstance(x, str) or not _day_like(x) or len(x) not in (10, 16, 19):
            return None
        try:
            when = datetime.fromisoformat(x)
        except ValueError:
            return None
        new = when + timedelta(days=self.rng.randint(1, 30))
        return new.isoformat(sep=" ")[: len(x)]

    def copies_a_row(
        self, t: TableProfile, k: ColumnProfile | None, cols: list[ColumnProfile], vals: list[Any]
    ) -> bool:
        """Some existing row holds every stated value besides the key: the new row would be a
        duplicate no user asks for."""
        same = [
            f"{qi(c.name)} IS {sql_lit(x)}"
            for c, x in zip(cols, vals, strict=True)
            if k is None or c.name != k.name
        ]
        n = self.v.rows(f"SELECT COUNT(*) FROM {qi(t.name)} WHERE {' AND '.join(same)}")
        return n is None or bool(n[0][0])

    def insert(self) -> Made | None:
        pairs = [
            (t, k)
            for t, k in self.keyed()
            if k.kind == "integer" and len(t.columns) <= MAX_INSERT_COLUMNS
        ]
        if not pairs:
            return None
        t, k = self.rng.choice(pairs)
        got = self.new_row(t, k)
        if got is None:
            return None
        cols, vals = got
        act = self.insert_sql(t.name, cols, vals)
        listed = ", ".join(f"{human(c.name)} {_q(x)}" for c, x in zip(cols, vals, strict=True))
        text = self.rng.choice(_INSERT).format(row=_row(t.name), vals=listed)
        if not self.check([act], None):
            return None
        return _made(text, [act], None, [], t, cols, "insert", "moderate")

    # --- underspecified --------------------------------------------------------------------------
    def update_by_name(self) -> Made | None:
        rng = self.rng
        cands = [
            t
            for t in self.tables
            if natural_keys(t) and any(_writable(m) for m in self.free(t, measures(t)))
        ]
        if not cands:
            return None
        t = rng.choice(cands)
        e = rng.choice(natural_keys(t))
        got = self.names.entity_part(t.name, e, None)
        if got is None:
            return None
        gold, surface, _ = got
        values = self.v.rows(
            f"SELECT DISTINCT CAST({qi(e.name)} AS TEXT) FROM {qi(t.name)} "
            f"WHERE {qi(e.name)} IS NOT NULL LIMIT 5000"
        )
        if values is None or unique_nearest(surface, gold, [r[0] for r in values]):
            return None
        ms = [
            m for m in self.free(t, measures(t)) if _writable(m) and not self.deps.tied(t, m.name)
        ]
        if not ms:
            return None
        m = rng.choice(ms)
        old = self.v.rows(
            f"SELECT MAX({qi(m.name)}) FROM {qi(t.name)} WHERE {qi(e.name)} = {sql_lit(gold)}"
        )
        new = self.new_number(m, old[0][0] if old else None)
        head = f"UPDATE {qi(t.name)} SET {qi(m.name)} = {sql_lit(new)} WHERE {qi(e.name)} = "
        gold_a, naive_a = [head + sql_lit(gold)], [head + sql_lit(surface)]
        text = rng.choice(_NAME_UPDATE).format(
            c=human(m.name), row=_row(t.name), rows=_rows(t.name), name=_q(surface), new=_q(new)
        )
        if not self.check(gold_a, naive_a):
            return None
        us = Underspec(Label("not-exist", surface, e.name), gold)
        fact = f'aware that by "{surface}" you mean the {human(e.name)} "{gold}".'
        return _made(text, gold_a, naive_a, [us], t, [e, m], "update", "moderate", fact)

    def scope_write(self) -> Made | None:
        """Every row of one scope value: ``Missing`` (which one is not said) or, for a year,
        ``Unmatch`` (a year outside the data; the literal reading takes the nearest one)."""
        rng = self.rng
        cands = [t for t in self.tables if _managed(t) and self.free(t, measures(t))]
        if not cands:
            return None
        t = rng.choice(cands)
        d = rng.choice(_managed(t))
        vals = [x for x, _ in scope_values(self.v, t.name, d)]
        if len(vals) < 2:
            return None
        nums = sorted(x for x in vals if isinstance(x, int))
        unmatch = is_year_like(d) and len(nums) >= 2 and rng.random() < 0.5
        if unmatch:
            u = nums[-1] + rng.randint(1, 4)
            naive_v = nums[-1]  # the nearest year that has rows
            gold_v = rng.choice(nums[:-1])
            pre = f"For {human(d.name)} {u}, "
        else:
            naive_v = vals[0]  # the commonest value: what a literal reader assumes
            gold_v = rng.choice(vals[1:])
            pre = rng.choice(_SCOPE_PRE).format(slot=human(d.name))
        ms = [m for m in self.free(t, measures(t)) if _writable(m)]
        if not ms:
            return None
        m = rng.choice(ms)
        got = self.scope_action(t, d, m, gold_v, pre)
        if got is None:
            return None
        text, make, op = got
        gold_a, naive_a = [make(gold_v)], [make(naive_v)]
        if not self.check(gold_a, naive_a):
            return None
        if unmatch:
            us = Underspec(Label("Unmatch", show(u), d.name), show(gold_v))
            h = human(d.name)
            fact = f"aware that you mixed up the {h}: the {h} you mean is {show(gold_v)}."
        else:
            us = Underspec(Label("Missing", "", d.name), show(gold_v))
            h = human(d.name)
            fact = f"thinking of the {h} {_q(gold_v)}, which is the {h} you mean."
        return _made(text, gold_a, naive_a, [us], t, [d, m], op, "moderate", fact)

    def scope_action(
        self, t: TableProfile, d: ColumnProfile, m: ColumnProfile, gold_v: Any, pre: str
    ) -> tuple[str, Callable[[Any], str], str] | None:
        """(request text, scope value -> statement, operation) for a write over the rows of one
        scope value: a price-like measure (:func:`priced`) raised or lowered by a share over a
        few rows (at most :data:`MAX_SCOPE_ROWS`: the digest of a write that touches half a
        table would cost every episode a full rehash), or a delete of the few rows whose
        measure is below a bound. Never one arbitrary number written over a range of rows."""
        rng = self.rng
        tq, dq, mq = qi(t.name), qi(d.name), qi(m.name)
        update = rng.random() < 0.6 and priced(m)
        c, row, rows = human(m.name), _row(t.name), _rows(t.name)
        if update:
            n = self.v.rows(f"SELECT COUNT(*) FROM {tq} WHERE {dq} = {sql_lit(gold_v)}")
            if not n or not 2 <= n[0][0] <= MAX_SCOPE_ROWS:
                return None
            pct = rng.choice((5, 10, 15, 20, 25))
            up = rng.random() < 0.5
            factor = f"{1 + pct / 100 if up else 1 - pct / 100:.2f}"
            value = (
                f"CAST(ROUND({mq} * {factor}) AS INTEGER)"
                if m.kind == "integer"
                else f"ROUND({mq} * {factor}, 2)"
            )
            text = rng.choice(_SCOPE_UPDATE).format(
                pre=pre, c=c, row=row, rows=rows, pct=pct, verb="raise" if up else "lower"
            )
            return (
                text,
                lambda x: f"UPDATE {tq} SET {mq} = {value} WHERE {dq} = {sql_lit(x)}",
                "update",
            )
        low = self.v.rows(
            f"SELECT {mq} FROM {tq} WHERE {dq} = {sql_lit(gold_v)} "
            f"AND {present_sql(m, mq)} ORDER BY 1 LIMIT 1 OFFSET 1"
        )
        if not low or low[0][0] is None:
            return None
        lim, shown = sql_lit(low[0][0]), _q(low[0][0])
        held = self.v.rows(
            f"SELECT COUNT(*) FROM {tq} WHERE {dq} = {sql_lit(gold_v)} AND {mq} < {lim} "
            f"AND NOT ({self.unreferenced(t)})"
        )
        if not held or held[0][0]:
            return None  # a row another row still refers to would be left an orphan
        text = rng.choice(_SCOPE_DELETE).format(pre=pre, c=c, row=row, rows=rows, x=shown)
        return (
            text,
            lambda x: f"DELETE FROM {tq} WHERE {dq} = {sql_lit(x)} AND {mq} < {lim}",
            "delete",
        )

    def groups(self, t: TableProfile, k: ColumnProfile) -> list[ColumnProfile]:
        """The columns that put rows of ``t`` together: a reference to a parent row (a declared
        foreign key or a discovered join, :meth:`references`) or a scope (a region, a
        category), not unique, never the key."""
        refs = {
            src[0] for child, src, _, _ in self.references() if child == t.name and len(src) == 1
        }
        out = [
            c
            for c in t.columns
            if c.name != k.name
            and not c.unique
            and not c.needs_cast
            and c.distinct >= 2
            and speakable(c.name)  # (the request names the group)
            and (c.name in refs or c in scopes(t))
        ]
        parents = [c for c in out if c.name in refs]
        if parents:  # rows of one parent belong together more than rows of one scope, and the
            top = max(c.distinct for c in parents)  # smallest groups most (an album, not a
            return [c for c in parents if c.distinct == top]  # media type)
        return out

    def swap(self) -> Made | None:
        """Two rows of one group (the same parent row or scope value: :meth:`groups`),
        neighbours by key, exchange a name, date or position (:data:`SWAPPABLE` roles) that
        was entered the wrong way round: a two-statement golden list. Never a measure (two
        tracks' sizes), never rows that have nothing to do with each other."""
        rng = self.rng
        pairs = [(t, k) for t, k in self.keyed() if self.groups(t, k)]
        if not pairs:
            return None
        t, k = rng.choice(pairs)
        g = rng.choice(self.groups(t, k))
        cols = [
            c
            for c in self.free(t, list(t.columns))
            if c.name not in (k.name, g.name)
            and speakable(c.name)
            and _writable(c)
            and not c.free_text
            and column_role(c) in SWAPPABLE
        ]
        if not cols:
            return None
        c = rng.choice(cols)
        tq, cq, kq, gq = qi(t.name), qi(c.name), qi(k.name), qi(g.name)
        if not varies_within(self.v, t.name, g.name, c.name):
            return None  # the group's own value: rows that differ in it are a data error
        held = self.v.rows(
            f"SELECT {gq} FROM {tq} WHERE {gq} IS NOT NULL AND {cq} IS NOT NULL GROUP BY 1 "
            f"HAVING COUNT(DISTINCT {cq}) >= 2 ORDER BY 1 LIMIT 200"
        )
        if not held:
            return None
        gv = rng.choice(held)[0]
        members = self.v.rows(
            f"SELECT {kq}, {cq} FROM {tq} WHERE {gq} = {sql_lit(gv)} AND {cq} IS NOT NULL "
            f"ORDER BY {kq} LIMIT 50"
        )
        steps = [j for j in range(len(members or []) - 1) if members[j][1] != members[j + 1][1]]
        if not steps:
            return None
        j = rng.choice(steps)
        (ka, va), (kb, vb) = members[j], members[j + 1]
        if not self.consistent_swap(t, k, c, ka, kb):
            return None
        grp = self.group_words(t, g, gv)
        if grp is None:
            return None  # a group no user can name ("the rentals of inventory 124")
        key = (t.name, c.name, ka, kb)
        if key in self._swapped:
            return None  # one task per gold: the same swap in other words is no new task
        self._swapped.add(key)
        acts = [
            f"UPDATE {tq} SET {cq} = {sql_lit(vb)} WHERE {kq} = {sql_lit(ka)}",
            f"UPDATE {tq} SET {cq} = {sql_lit(va)} WHERE {kq} = {sql_lit(kb)}",
        ]
        text = rng.choice(_SWAP).format(
            c=key_words(human(c.name), _row(t.name)),  # (a city's "city" is its name)
            row=_row(t.name),
            k=human(k.name),
            a=_q(ka),
            b=_q(kb),
            grp=grp,
        )
        if not self.check(acts, None):
            return None
        return _made(text, acts, None, [], t, [k, g, c], "update", "moderate")

    def group_words(self, t: TableProfile, g: ColumnProfile, gv: Any) -> str | None:
        """The rows of ``t`` whose ``g`` is ``gv``, as a user names them: by the parent row's
        name where it has one that no other parent row shares ("the tracks of the album
        \"Jagged Little Pill\""; never "the addresses of the city \"London\"" where two cities
        are London), a scope by its value ("the films whose rating is \"PG\""); ``None`` for a
        parent with no such name (a number is no name: never "the rentals of inventory 124")
        and for a reference of a table to itself ("the employees of the employee ...")."""
        rows = _rows(t.name)
        for child, src, parent, dst in self.references():
            if child != t.name or src != [g.name] or len(dst) != 1:
                continue
            if parent == t.name:
                return None
            try:
                pt = self.lake.table(parent)
            except KeyError:
                return None
            nk = natural_keys(pt)  # a name unique on the data first ("title"), then a name that
            named = nk + [  # names this parent alone (no other city is "Thailand")
                x
                for x in sorted(pt.columns, key=lambda x: not set(name_words(x.name)) & _NAMING)
                if x not in nk
                and x.kind == "text"
                and speakable(x.name)
                and column_role(x) in ("name", "identifier")
                and x.distinct >= 0.5 * max(1, pt.rows)
            ]
            for n in named:
                got = self.v.rows(
                    f"SELECT {qi(n.name)}, (SELECT COUNT(*) FROM {qi(parent)} AS o "
                    f"WHERE o.{qi(n.name)} = p.{qi(n.name)}) FROM {qi(parent)} AS p "
                    f"WHERE p.{qi(dst[0])} = {sql_lit(gv)}"
                )
                if got and len(got) == 1 and isinstance(got[0][0], str) and got[0][0].strip():
                    if got[0][1] == 1:
                        return f"the {rows} of the {_row(parent)} {_q(got[0][0])}"
            return None
        return f"the {rows} whose {human(g.name)} is {_q(gv)}"

    def consistent_swap(self, t: TableProfile, k: ColumnProfile, c: ColumnProfile, ka, kb) -> bool:
        """Whether swapping ``c`` between the rows keyed ``ka`` and ``kb`` leaves each row
        agreeing with itself and the data: no value another column of its row spells (a first
        name inside the e-mail) or a row referring to it spells (an album's title track, a
        city's name as its addresses' district), no names of two whole things (rows other
        rows describe with text of their own: two albums, two cities) unless they differ in a
        number alone ("Disc 1", "Disc 2"), no dependency on the data broken (a state swapped
        between customers of two countries), no order with a key reversed (invoices numbered
        in date order): :mod:`~clarisql.envs.synth.consistency`."""
        names = [x.name for x in t.columns]
        got = self.v.rows(
            f"SELECT {', '.join(qi(n) for n in names)} FROM {qi(t.name)} "
            f"WHERE {qi(k.name)} IN ({sql_lit(ka)}, {sql_lit(kb)})"
        )
        if not got or len(got) != 2:
            return False
        a, b = (dict(zip(names, r, strict=True)) for r in got)
        if self.deps.swap_breaks_order(t, a, b, c.name):
            return False  # (invoices numbered in date order: swapped dates reverse them)
        refs = self.references()
        if whole_things_swapped(self.v, refs, t, c, a, b):
            return False  # two albums' (two cities') names: no clerk mixes them up
        for me, other in ((a, b), (b, a)):
            if spelled_in_row(me, c.name):
                return False
            if spelled_in_children(self.v, refs, t.name, me, c.name):
                return False  # (the album's title track, the district of the city's address)
            if self.deps.breaks_dependency(
                t, me, c.name, other[c.name], k.name, exclude=[other[k.name]], alone=False
            ):
                return False
            if self.deps.breaks_order(t, me, c.name, other[c.name]):
                return False  # (a rental returned before it was rented)
        return True

    def family_insert(self) -> Made | None:
        fams = [
            f
            for f in families(self.lake)
            if len(self.lake.table(f[0]).columns) <= MAX_INSERT_COLUMNS
        ]
        if not fams:
            return None
        fam = self.rng.choice(fams)
        gold_t = self.rng.choice(fam[:-1])
        naive_t = fam[-1]  # the last of the family (the latest, for yearly tables)
        got = self.hidden_row(self.lake.table(gold_t), [x for x in fam if x != gold_t])
        if got is None:
            return None
        cols, vals = got
        gold_a = [self.insert_sql(gold_t, cols, vals)]
        naive_a = [self.insert_sql(naive_t, cols, vals)]
        listed = ", ".join(f"{human(c.name)} {_q(x)}" for c, x in zip(cols, vals, strict=True))
        # the row is named after no table: the gold table's name would give the answer away
        text = f"There are several tables like {naive_t}; add this new row to the one I mean: {listed}."
        if not self.check(gold_a, naive_a):
            return None
        us = Underspec(Label("Missing", "", "table"), gold_t)
        fact = f"working on the table {gold_t}, which is the table you mean."
        return _made(
            text, gold_a, naive_a, [us], self.lake.table(gold_t), cols, "insert", "moderate", fact
        )

    def hidden_row(
        self, t: TableProfile, others: list[str]
    ) -> tuple[list[ColumnProfile], list[Any]] | None:
        """A new row for ``t`` whose stated values do not tell ``t`` from ``others``
        (:func:`reveals_table`): a unique integer gets a value new to the whole family, a
        measure another nearby value, any other revealing value is left out. ``None`` when
        fewer than two values remain to state."""
        got = self.new_row(t, None)
        if got is None:
            return None
        cols, vals = [], []
        for c, x in zip(*got, strict=True):
            if c.unique and c.kind == "integer":  # a key: a value no table of the family has
                tops = [
                    self.v.rows(f"SELECT MAX({qi(c.name)}) FROM {qi(n)}") for n in [t.name, *others]
                ]
                ints = [r[0][0] for r in tops if r and isinstance(r[0][0], int)]
                if not ints:
                    return None
                x = max(ints) + 1
            if reveals_table(self.v, t.name, others, c.name, x):
                if c in measures(t):
                    x = self.new_number(c, x)
                if reveals_table(self.v, t.name, others, c.name, x):
                    continue
            cols.append(c)
            vals.append(x)
        return (cols, vals) if len(cols) >= 2 else None


def _made(
    text: str,
    gold: list[str],
    naive: list[str] | None,
    uss: list[Underspec],
    t: TableProfile,
    cols: list[ColumnProfile],
    op: str,
    difficulty: str,
    fact: str | None = None,
) -> Made:
    utterance = tidy(text)
    # DySQL-Bench's second person; the detail the user keeps back is an "I am ..." sentence, which
    # the offline instruction-following user holds back from its opening (identity) until asked.
    instruction = f"You need this done: {utterance}"
    if fact:
        instruction += f" You are {fact}"
    return Made(
        utterance=utterance,
        category="write",
        gold_actions=gold,
        naive_actions=list(naive) if naive is not None else [],
        underspecs=uss,
        instruction=instruction,
        meta={
            "layer": "writes",
            "write": op,
            "difficulty": difficulty,
            "qtype": "single",
            "tables": [t.name],
            "columns": [f"{t.name}.{c.name}" for c in cols],
            "operations": [op] + ["filter"] * (op != "insert"),
        },
    )


def write_tasks(
    lake: LakeProfile, drafts: list[Draft], v: Verifier, rng: random.Random, n: int
) -> list[Task]:
    """At most ``n`` write tasks: about two thirds well-specified (update / delete / insert by
    key), one third underspecified (a name that does not exist as written, a missing scope value,
    a missing family table). Fewer when the lake has no keyed table, no name or scope column.
    ``drafts`` is accepted for the shared layer signature."""
    gen = _WriteGen(lake, v, rng)
    if not gen.tables or n <= 0:
        return []
    plain = [gen.update, gen.delete, gen.insert, gen.swap]
    under = [gen.update_by_name, gen.scope_write, gen.family_insert]
    n_under = n // 3
    seen: set[str] = set()
    out: list[Made] = []
    for make, k in zip(under, spread(n_under, len(under)), strict=True):
        out += fill(k, [make], seen)
    for make, k in zip(plain, spread(n - len(out), len(plain)), strict=True):
        out += fill(k, [make], seen)
    top_up(out, [*plain, *under], n, seen)
    return [m.task(lake, f"synth-write/{i:04d}") for i, m in enumerate(out)]


__all__ = ["write_tasks"]
