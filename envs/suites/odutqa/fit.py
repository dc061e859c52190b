"""Fitting the planned ODUTQA-MDC rows to the gold answers, and writing the database file.

:func:`build_full_database` inserts the rows :func:`clarisql.envs.suites.odutqa.db.plan_rows`
plans, then, for every record whose gold SQL ranks rows (ORDER BY, MAX, MIN):

- **spread**: rows an agent would reach by exploring instead of asking are made to outrank the
  gold winner: one row of the gold table outside the query's WHERE slice (so the query without
  its WHERE picks another row), the rows matching the slice in up to three other tables of the
  domain (so widening the scope picks another), and the look-alike names' rows (so matching the
  abbreviation picks another). Values a gold row fixes are never changed.
- **repair**: a record whose gold SQL no longer returns its answer has the non-gold values of its
  slice ranked just after its winners, else its slice's non-gold rows deleted (three passes).

Records still wrong afterwards are returned (the suite leaves them out as not runnable).
"""

from __future__ import annotations

import math
import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import sqlglot
import sqlite_utils
from sqlglot import exp

from clarisql.envs.suites.odutqa.db import (
    COLUMNS,
    SEED,
    _conjuncts,
    caption_scope,
    plan_rows,
    store_shuffled,
    table_parts,
)


def _runs_right(conn: sqlite3.Connection, rec: dict[str, Any]) -> bool:
    from clarisql.rewards.match import execution_match

    try:
        rows = conn.execute(rec["SQL"]).fetchall()
    except sqlite3.Error:
        return False
    ordered = "order by" in rec["SQL"].lower()
    return execution_match([list(r) for r in rows], rec["SQL_answer"], ordered=ordered)


def rank_keys(tree: exp.Expression) -> list[tuple[str, bool]]:
    """(column, descending) of every ORDER BY term and MAX/MIN aggregate in the statement."""
    keys = []
    for o in tree.find_all(exp.Ordered):
        if isinstance(o.this, exp.Column):
            keys.append((o.this.name, bool(o.args.get("desc"))))
    for f in tree.find_all(exp.Max, exp.Min):
        if isinstance(f.this, exp.Column):
            keys.append((f.this.name, isinstance(f, exp.Max)))
    return list(dict.fromkeys(keys))


def _after(value: Any, desc: bool, rng: random.Random) -> Any:
    """A value ranked strictly after ``value`` (below it when ``desc``); ``None`` if none fits."""
    step = (abs(float(value)) + 1.0) * rng.uniform(0.05, 0.5)
    new = float(value) - step if desc else float(value) + step
    if isinstance(value, int):
        new = min(math.floor(new), value - 1) if desc else max(math.ceil(new), value + 1)
        return new if new >= 0 else None
    return round(new, 2)


def _holds(row: dict[str, Any], answer: list[Any]) -> bool:
    """Whether every value of an answer row is one of the row's values (numbers as numbers)."""
    have = {float(v) if isinstance(v, (int, float)) else v for v in row.values()}
    return all((float(v) if isinstance(v, (int, float)) else v) in have for v in answer)


def _where_sql(conds: list[exp.Expression]) -> str | None:
    return exp.and_(*[c.copy() for c in conds]).sql("sqlite") if conds else None


def _rows(conn: sqlite3.Connection, table: str, where: str | None) -> list[dict]:
    sql = f'SELECT rowid, * FROM "{table}"' + (f" WHERE {where}" if where else "")
    cur = conn.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _slices(conn: sqlite3.Connection, tree: exp.Expression) -> list[tuple[str, list, list]]:
    """(table, WHERE conjuncts without subqueries, rows matching them) per part of the query."""
    out = []
    for table, sel in table_parts(tree):
        conds = [c for c in _conjuncts(sel.args.get("where")) if not c.find(exp.Select)]
        out.append((table, conds, _rows(conn, table, _where_sql(conds))))
    return out


def _set(
    conn: sqlite3.Connection,
    table: str,
    rows: list[dict],
    keys: list[tuple[str, bool]],
    bounds: dict[str, Any],
    fixed: dict[str, list[set[str]]],
    rng: random.Random,
    better: bool,
) -> None:
    """Rank ``rows`` before (``better``) or after the bounds on every key they can change."""
    for r in rows:
        gold_cols = fixed[table][r["rowid"] - 1] if r["rowid"] <= len(fixed[table]) else set()
        for col, desc in keys:
            if col not in r or col in gold_cols or col not in bounds:
                continue
            new = _after(bounds[col], desc != better, rng)
            if new is not None:
                conn.execute(f'UPDATE "{table}" SET "{col}" = ? WHERE rowid = ?', (new, r["rowid"]))


def _bounds(win: list[dict], keys: list[tuple[str, bool]]) -> dict[str, Any]:
    return {c: (min if d else max)(r[c] for r in win) for c, d in keys if win and c in win[0]}


def spread(
    conn: sqlite3.Connection,
    rec: dict[str, Any],
    fixed: dict[str, list[set[str]]],
    surfaces: dict[str, str],
) -> None:
    """Make the rows exploration would reach outrank the record's winners (module docstring)."""
    from clarisql.envs.suites.odutqa.literal import relax_names

    tree = sqlglot.parse_one(rec["SQL"], read="sqlite")
    keys = rank_keys(tree)
    if not keys or not rec.get("SQL_answer"):
        return
    rng = random.Random(f"{SEED}|spread|{rec.get('uuid')}")
    tables = sorted(fixed)
    for table, conds, rows in _slices(conn, tree):
        bounds = _bounds([r for r in rows if any(_holds(r, a) for a in rec["SQL_answer"])], keys)
        if not bounds:
            continue
        inside = {r["rowid"] for r in rows}
        targets: list[tuple[str, list[dict]]] = []
        where = _where_sql(conds)
        if where:
            outside = _rows(conn, table, f"NOT ({where})")
            targets.append((table, rng.sample(outside, min(1, len(outside)))))
            holder = exp.Where(this=exp.and_(*[c.copy() for c in conds]))
            relax_names(holder, surfaces)
            near = [r for r in _rows(conn, table, holder.this.sql("sqlite"))]
            targets.append((table, [r for r in near if r["rowid"] not in inside]))
        domain, city = caption_scope(table)[:2]
        others = [t for t in tables if t != table and caption_scope(t)[0] == domain]
        rng.shuffle(others)
        others.sort(key=lambda t: caption_scope(t)[1] != city)
        found = 0
        for other in others:
            hit = _rows(conn, other, where)
            if hit:
                targets.append((other, rng.sample(hit, 1)))
                found += 1
            if found == 3:
                break
        for t, trows in targets:
            _set(conn, t, trows, keys, bounds, fixed, rng, better=True)


def repair(conn: sqlite3.Connection, rec: dict[str, Any], fixed: dict[str, list[set[str]]]) -> None:
    """Rank the rows of the record's slices after its winners (values no gold row fixes), else
    delete the slices' non-gold rows."""
    tree = sqlglot.parse_one(rec["SQL"], read="sqlite")
    keys = rank_keys(tree)
    rng = random.Random(f"{SEED}|repair|{rec.get('uuid')}")
    slices = _slices(conn, tree)
    for table, _, rows in slices:
        win = [r for r in rows if any(_holds(r, a) for a in rec["SQL_answer"] or [])]
        rest = [r for r in rows if r not in win]
        _set(conn, table, rest, keys, _bounds(win, keys), fixed, rng, better=False)
    if _runs_right(conn, rec):
        return
    for table, _, rows in slices:
        gone = [(r["rowid"],) for r in rows if r["rowid"] > len(fixed[table])]
        conn.executemany(f'DELETE FROM "{table}" WHERE rowid = ?', gone)


def build_full_database(
    records: list[dict[str, Any]],
    captions: dict[str, list[str]],
    pairs: list[tuple[str, str]],
    path: Path,
) -> list[int]:
    """Write the full database to ``path``; return the indices of the records whose gold SQL
    does not return their answer on it. ``pairs``: the (surface, full name) pairs of the
    records' WHERE conditions."""
    rows, fixed = plan_rows(records, captions, pairs)
    db = sqlite_utils.Database(memory=True)
    for table, trows in rows.items():
        db[table].create(COLUMNS[caption_scope(table)[0]])
        db[table].insert_all(trows, batch_size=2000)
    conn = db.conn
    checked = [i for i, r in enumerate(records) if r.get("SQL") and r.get("SQL_answer")]
    surfaces = {full: surface for surface, full in pairs}
    for i in checked:
        spread(conn, records[i], fixed, surfaces)
    for _ in range(3):
        failing = [i for i in checked if not _runs_right(conn, records[i])]
        for i in failing:
            repair(conn, records[i], fixed)
        if not failing:
            break
    store_shuffled(conn, sorted(rows))  # rowids independent of the gold (odutqa_db)
    conn.commit()
    failing = [i for i in checked if not _runs_right(conn, records[i])]
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    target = sqlite3.connect(tmp)
    conn.backup(target)
    target.close()
    os.replace(tmp, path)
    return failing
