"""Per-column profiles of a lake (:class:`~.types.LakeProfile`, without discovered pairs).

Contract
- :func:`profile_lake` reads every user table of an SQLite file (read-only) and returns one
  :class:`~.types.TableProfile` per table, tables and columns in a deterministic order (tables by
  name, columns in table order). One ``GROUP BY`` per column gives every distinct value with its
  storage type and count; everything else is computed from that list.
- Missing values: ``NULL`` and the text markers in :data:`MISSING_MARKERS` (compared after
  trimming, case-insensitively). :func:`present_sql` renders the same test in SQL, so the SQL the
  synthesizer writes agrees with the profile.
- Kind inference: ``integer`` / ``real`` when every present value is a number (stored as a number
  or as numeric text), ``date`` when every present value is ISO ``YYYY-MM-DD`` (optionally with a
  time), ``boolean`` for true/false/yes/no text, else ``text``. ``needs_cast`` marks numbers stored
  as text and dates next to text missing markers.
- OrQA's low-information rule: ``(distinct < 10 and rows < 30) or missing > 0.8``; a column with no
  present value at all is low-information too.
- Free text (``free_text``, :func:`is_free_text`): a text column whose present values are
  mostly unique (distinct >= 80 % of them), at least 5, and long (on average >= 30 characters
  and >= 6 words): reviews, descriptions, notes, which the free-text layer asks SUQL's ANSWER
  about.
- Views, ``sqlite_*`` tables, virtual tables and their shadow tables are skipped; a table whose
  columns are all low-information is kept (with ``usable() == ()``) so the pipeline can report it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import apsw

from clarisql.envs.synth.types import ColumnProfile, LakeProfile, TableProfile, quote_ident

MISSING_MARKERS = ("", "NA", "N/A", "NAN", "NULL", "NONE", "-", "?", "#N/A", "..")
_BOOL = {"true", "false", "yes", "no", "t", "f", "y", "n"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")
_INT = re.compile(r"^[+-]?\d+$")
_REAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
N_SAMPLES = 20


def is_missing(v: Any) -> bool:
    """NULL or a missing marker (see :data:`MISSING_MARKERS`)."""
    return v is None or (isinstance(v, str) and v.strip().upper() in MISSING_MARKERS)


def present_sql(col: ColumnProfile, expr: str | None = None) -> str:
    """SQL that is true where ``col`` (or ``expr``) holds a present (non-missing) value."""
    e = expr or col.ref()
    if col.kind in ("integer", "real") and not col.needs_cast:
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


def _kind(values: list[tuple[Any, str, int]]) -> tuple[str, bool]:
    """(kind, needs_cast) from the present values ``(value, storage type, count)``."""
    if not values:
        return "text", False
    nums = [_number(v) for v, _, _ in values]
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


def profile_column(
    conn: apsw.Connection, table: str, name: str, declared: str, rows: int
) -> ColumnProfile:
    """Profile one column (see the module docstring)."""
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
    kind, needs_cast = _kind(present)
    if kind == "date":
        needs_cast = n_missing > 0
    missing = n_missing / rows if rows else 1.0
    distinct_vals = {(_number(v) if kind in ("integer", "real") else v) for v, _, _ in present}
    distinct = len(distinct_vals)
    ranked = sorted(present, key=lambda x: (-x[2], _sort_key(x[0])))
    samples: list[Any] = []
    seen: set[Any] = set()
    for v, _, _ in ranked:
        val = _number(v) if kind in ("integer", "real") else v
        if val in seen:
            continue
        seen.add(val)
        samples.append(val)
        if len(samples) == N_SAMPLES:
            break
    lo = hi = None
    if kind in ("integer", "real"):
        nums = [_number(v) for v, _, _ in present]
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
        low_information=(distinct < 10 and rows < 30) or missing > 0.8 or distinct == 0,
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


def profile_tables(db_path: str | Path, only: Iterable[str] | None = None) -> list[TableProfile]:
    """Profiles of the lake's tables (all, or those named in ``only``), by table name."""
    conn = apsw.Connection(
        f"file:{Path(db_path)}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    try:
        names = _tables(conn)
        if only is not None:
            wanted = set(only)
            names = [n for n in names if n in wanted]
        out = []
        for t in names:
            (rows,) = conn.execute(f"SELECT COUNT(*) FROM {quote_ident(t)}").fetchone()
            info = conn.execute(f"PRAGMA table_info({quote_ident(t)})").fetchall()
            cols = tuple(profile_column(conn, t, c[1], c[2], rows) for c in info)
            out.append(TableProfile(t, rows, cols))
        return out
    finally:
        conn.close()


def profile_lake(db_path: str | Path) -> LakeProfile:
    """The lake's :class:`~.types.LakeProfile` (no joins/unions yet: see :mod:`.discover`)."""
    return LakeProfile(Path(db_path), tuple(profile_tables(db_path)))


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
