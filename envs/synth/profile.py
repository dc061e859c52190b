"""Per-column profiles of a lake (:class:`~.types.LakeProfile`, without discovered pairs).

Contract
- :func:`profile_lake` reads every user table of an SQLite file (read-only) and returns one
  :class:`~.types.TableProfile` per table, tables and columns in a deterministic order (tables by
  name, columns in table order). One ``GROUP BY`` per column gives every distinct value with its
  storage type and count; everything else is computed from that list. A column stored as
  numbers only is profiled inside SQLite instead (distinct count, range, most frequent values),
  with the same result.
- Missing values: ``NULL`` and the text markers in :data:`MISSING_MARKERS` (compared after
  trimming, case-insensitively). :func:`present_sql` renders the same test in SQL, so the SQL the
  synthesizer writes agrees with the profile.
- Kind inference: ``integer`` / ``real`` when every present value is a number (stored as a number
  or as numeric text), ``date`` when every present value is ISO ``YYYY-MM-DD`` (optionally with a
  time), ``boolean`` for true/false/yes/no text, else ``text``. ``needs_cast`` marks numbers stored
  as text and dates next to text missing markers.
- OrQA's low-information rule: ``(distinct < 10 and rows < 30) or missing > 0.8``; a column with no
  present value at all is low-information too. One exception (:func:`low_information`): in a
  small table of at least :data:`MIN_NAMED_ROWS` rows, a column whose every row holds its own
  value (eight employees' names, five media types) names the rows and is informative: OrQA's
  rule is meant for junk columns of open-data tables, not a relational database's lookup tables.
- Free text (``free_text``, :func:`is_free_text`): a text column whose present values are
  mostly unique (distinct >= 80 % of them), at least 5, and long (on average >= 30 characters
  and >= 6 words): reviews, descriptions, notes, which the free-text layer asks SUQL's ANSWER
  about.
- Views, ``sqlite_*`` tables, virtual tables and their shadow tables are skipped; a table whose
  columns are all low-information is kept (with ``usable() == ()``) so the pipeline can report it.
"""

from __future__ import annotations

import heapq
import os
import re
import threading
from collections.abc import Iterable
from concurrent.futures import BrokenExecutor, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw

from clarisql.envs.synth.forked import fork_pool
from clarisql.envs.synth.types import ColumnProfile, LakeProfile, TableProfile, quote_ident

MISSING_MARKERS = ("", "NA", "N/A", "NAN", "NULL", "NONE", "-", "?", "#N/A", "..")
_BOOL = {"true", "false", "yes", "no", "t", "f", "y", "n"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")
_INT = re.compile(r"^[+-]?\d+$")
_REAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
N_SAMPLES = 20
# SQLite's rule for a declared type with TEXT affinity
_TEXT_AFFINITY = re.compile(r"CHAR|CLOB|TEXT", re.IGNORECASE)


def is_missing(v: Any) -> bool:
    """NULL or a missing marker (see :data:`MISSING_MARKERS`)."""
    return v is None or (isinstance(v, str) and v.strip().upper() in MISSING_MARKERS)


def present_sql(col: ColumnProfile, expr: str | None = None) -> str:
    """SQL that is true where ``col`` (or ``expr``) holds a present (non-missing) value."""
    e = expr or col.ref()
    if col.kind in ("integer", "real") and not col.needs_cast:
        if col.missing > 0:  # a REAL column may still hold '' or 'NA' as text: not a number
            return f"{e} IS NOT NULL AND typeof({e}) IN ('integer', 'real')"
        return f"{e} IS NOT NULL"
    markers = ", ".join("'" + m.replace("'", "''") + "'" for m in MISSING_MARKERS)
    return f"{e} IS NOT NULL AND UPPER(TRIM({e})) NOT IN ({markers})"


def value_sql(col: ColumnProfile, expr: str | None = None) -> str:
    """SQL for the column's value in its kind: ``CAST(... AS REAL|INTEGER)`` when it needs one."""
    e = expr or col.ref()
    if col.needs_cast and col.kind == "integer":
        return f"CAST({e} AS INTEGER)"
    if col.needs_cast and col.kind == "real":
        return f"CAST({e} AS REAL)"
    return e


def _number(v: Any) -> float | int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        s = v.strip()
        if _INT.match(s):
            return int(s)
        if _REAL.match(s):
            return float(s)
    return None


def _kind(
    values: list[tuple[Any, str, int]], nums: list[float | int | None] | None = None
) -> tuple[str, bool]:
    """(kind, needs_cast) from the present values ``(value, storage type, count)`` (``nums``:
    their :func:`_number` values, when the caller has them)."""
    if not values:
        return "text", False
    nums = [_number(v) for v, _, _ in values] if nums is None else nums
    as_text = any(t == "text" for _, t, _ in values)
    if all(n is not None for n in nums):
        integral = all(isinstance(n, int) for n in nums)
        return ("integer" if integral else "real"), as_text
    strs = [v for v, t, _ in values if t == "text"]
    if len(strs) == len(values):
        if all(_DATE.match(s.strip()) for s in strs):
            return "date", False
        if {s.strip().lower() for s in strs} <= _BOOL and len(values) <= 2:
            return "boolean", False
    return "text", False


def is_free_text(values: list[tuple[Any, str, int]]) -> bool:
    """Whether present text values ``(value, storage type, count)`` are prose (module doc)."""
    texts = [(v, n) for v, t, n in values if t == "text"]
    total = sum(n for _, _, n in values)
    if len(texts) < 5 or len(texts) < 0.8 * total:
        return False
    chars = sum(len(v) * n for v, n in texts) / total
    words = sum(len(v.split()) * n for v, n in texts) / total
    return chars >= 30 and words >= 6


def _sort_key(v: Any) -> tuple[int, Any]:
    if isinstance(v, (int, float)):
        return (0, v)
    if isinstance(v, str):
        return (1, v)
    return (2, repr(v))


def _numeric_column(
    conn: apsw.Connection, table: str, name: str, declared: str, rows: int
) -> ColumnProfile | None:
    """The profile of a column stored as numbers only (all INTEGER or all REAL, and NULL),
    computed inside SQLite; ``None`` for any other column (:func:`profile_column` then reads
    every distinct value). Gives exactly what the general path gives for such a column."""
    if _TEXT_AFFINITY.search(declared or ""):
        return None  # SQLite stores every value of a TEXT column as text
    ref, qt = f"{quote_ident(table)}.{quote_ident(name)}", quote_ident(table)
    types = dict(conn.execute(f"SELECT typeof({ref}), COUNT(*) FROM {qt} GROUP BY 1").fetchall())
    n_missing = types.pop("null", 0)
    if set(types) not in ({"integer"}, {"real"}):
        return None
    distinct, lo, hi = conn.execute(
        f"SELECT COUNT(DISTINCT {ref}), MIN({ref}), MAX({ref}) FROM {qt}"
    ).fetchone()
    samples = conn.execute(
        f"SELECT {ref}, COUNT(*) AS n FROM {qt} WHERE {ref} IS NOT NULL GROUP BY 1 "
        f"ORDER BY n DESC, 1 LIMIT {N_SAMPLES}"
    ).fetchall()
    missing = n_missing / rows if rows else 1.0
    return ColumnProfile(
        table=table,
        name=name,
        declared=declared or "",
        kind="integer" if "integer" in types else "real",
        needs_cast=False,
        rows=rows,
        distinct=distinct,
        missing=round(missing, 6),
        samples=tuple(v for v, _ in samples),
        min=lo,
        max=hi,
        unique=rows > 0 and n_missing == 0 and distinct == rows,
        low_information=low_information(distinct, rows, missing),
    )


#: a small table needs this many rows for its all-distinct columns to count as informative
MIN_NAMED_ROWS = 5


def low_information(distinct: int, rows: int, missing: float) -> bool:
    """OrQA's rule (see the module docstring), except for a column of a small table that holds
    a different value in each of its >= :data:`MIN_NAMED_ROWS` rows (none missing)."""
    if missing > 0.8 or distinct == 0:
        return True
    if distinct < 10 and rows < 30:
        return not (rows >= MIN_NAMED_ROWS and missing == 0 and distinct == rows)
    return False


def profile_column(
    conn: apsw.Connection, table: str, name: str, declared: str, rows: int
) -> ColumnProfile:
    """Profile one column (see the module docstring)."""
    fast = _numeric_column(conn, table, name, declared, rows)
    if fast is not None:
        return fast
    ref = f"{quote_ident(table)}.{quote_ident(name)}"
    q = f"SELECT {ref}, typeof({ref}), COUNT(*) FROM {quote_ident(table)} GROUP BY 1, 2"
    present: list[tuple[Any, str, int]] = []
    n_missing = 0
    for v, t, n in conn.execute(q):
        if t == "blob":
            n_missing += n
        elif is_missing(v):
            n_missing += n
        else:
            present.append((v, t, n))
    nums = [_number(v) for v, _, _ in present]
    kind, needs_cast = _kind(present, nums)
    if kind == "date":
        needs_cast = n_missing > 0
    missing = n_missing / rows if rows else 1.0
    numeric = kind in ("integer", "real")
    vals = nums if numeric else [v for v, _, _ in present]
    distinct = len(set(vals))
    # the N_SAMPLES most frequent values: at most len(present) - distinct entries repeat a value
    k = N_SAMPLES + len(present) - distinct
    ranked = heapq.nsmallest(
        k, range(len(present)), key=lambda i: (-present[i][2], _sort_key(present[i][0]))
    )
    samples: list[Any] = []
    seen: set[Any] = set()
    for i in ranked:
        val = vals[i]
        if val in seen:
            continue
        seen.add(val)
        samples.append(val)
        if len(samples) == N_SAMPLES:
            break
    lo = hi = None
    if numeric:
        lo, hi = min(nums), max(nums)
    elif kind == "date":
        strs = [v.strip() for v, _, _ in present]
        lo, hi = min(strs), max(strs)
    return ColumnProfile(
        table=table,
        name=name,
        declared=declared or "",
        kind=kind,
        needs_cast=needs_cast,
        rows=rows,
        distinct=distinct,
        missing=round(missing, 6),
        samples=tuple(samples),
        min=lo,
        max=hi,
        unique=rows > 0 and n_missing == 0 and distinct == rows,
        low_information=low_information(distinct, rows, missing),
        free_text=kind == "text" and is_free_text(present),
    )


def _tables(conn: apsw.Connection) -> list[str]:
    # pragma_table_list says 'table' only for ordinary tables: not views, virtual tables, nor
    # the shadow tables behind them (an FTS index's notes_fts_data, an R*Tree's boxes_node)
    q = (
        "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' "
        "AND name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    return [r[0] for r in conn.execute(q)]


def _open(db_path: str | Path) -> apsw.Connection:
    return apsw.Connection(
        f"file:{Path(db_path)}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )


#: a forked profiling worker's read-only connection per lake (:func:`_column_job`)
_WORKER_CONNS: dict[tuple[int, str], apsw.Connection] = {}


def _column_job(job: tuple[str, str, str, str, int]) -> ColumnProfile:
    """In a forked worker of :func:`profile_tables`: one column's profile."""
    db_path, *rest = job
    key = (os.getpid(), db_path)
    if key not in _WORKER_CONNS:
        _WORKER_CONNS[key] = _open(db_path)
    return profile_column(_WORKER_CONNS[key], *rest)


def profile_tables(
    db_path: str | Path, only: Iterable[str] | None = None, workers: int = 1
) -> list[TableProfile]:
    """Profiles of the lake's tables (all, or those named in ``only``), by table name.

    With ``workers > 1`` columns are profiled on that many forked processes where forking is
    safe (:func:`~.forked.fork_pool`: the profiling is half Python, which threads would share),
    else threads (SQLite's grouping runs without the GIL), one read-only connection each; the
    result is the same.
    """
    conn = _open(db_path)
    conns: list[apsw.Connection] = [conn]
    local = threading.local()

    def column(job: tuple[str, str, str, int]) -> ColumnProfile:
        c = getattr(local, "conn", None)
        if c is None:
            c = local.conn = _open(db_path)
            conns.append(c)
        return profile_column(c, *job)

    try:
        names = _tables(conn)
        if only is not None:
            wanted = set(only)
            names = [n for n in names if n in wanted]
        shapes = []
        keyed: dict[str, set[str]] = {}
        for t in names:
            (rows,) = conn.execute(f"SELECT COUNT(*) FROM {quote_ident(t)}").fetchone()
            info = conn.execute(f"PRAGMA table_info({quote_ident(t)})").fetchall()
            shapes.append((t, rows, [(t, c[1], c[2], rows) for c in info]))
            fk = conn.execute(f"PRAGMA foreign_key_list({quote_ident(t)})").fetchall()
            keyed[t] = {c[1] for c in info if c[5]} | {r[3] for r in fk}
        jobs = [job for _, _, js in shapes for job in js]
        n = min(workers, len(jobs))
        procs = fork_pool(n) if n > 1 else None  # (the columns' Python runs side by side too)
        got: list[ColumnProfile] | None = None
        if procs is not None:
            try:
                with procs:
                    got = list(procs.map(_column_job, [(str(db_path), *j) for j in jobs]))
            except BrokenExecutor:  # (a worker died: the threads below do it again)
                got = None
        if got is not None:
            done = iter(got)
        elif workers > 1 and len(jobs) > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="synth-profile") as ex:
                done = iter(list(ex.map(column, jobs)))
        else:
            done = iter([profile_column(conn, *job) for job in jobs])
        tables = [TableProfile(t, rows, tuple(next(done) for _ in js)) for t, rows, js in shapes]
        return [
            replace(
                tp,
                columns=tuple(
                    replace(c, key_part=True) if c.name in keyed[tp.name] else c for c in tp.columns
                ),
            )
            for tp in tables
        ]
    finally:
        for c in conns:
            c.close()


def profile_lake(db_path: str | Path, workers: int = 1) -> LakeProfile:
    """The lake's :class:`~.types.LakeProfile` (no joins/unions yet: see :mod:`.discover`);
    ``workers``: see :func:`profile_tables`."""
    return LakeProfile(Path(db_path), tuple(profile_tables(db_path, workers=workers)))


__all__ = [
    "MISSING_MARKERS",
    "is_free_text",
    "is_missing",
    "present_sql",
    "profile_column",
    "profile_lake",
    "profile_tables",
    "value_sql",
]
