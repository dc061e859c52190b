"""Canonical final-state digest of an SQLite database.

Contract
- Order-insensitive over rows: each row is rendered by SQLite's ``quote()`` (so the storage
  types differ: ``1``, ``1.0`` and ``'1'`` give different rows), hashed with BLAKE2b, and a
  table's digest is its row count plus the sum of its row hashes modulo 2**128 (a multiset hash:
  duplicates count, order does not).
- Tables in a canonical order (``table_order`` first, then the rest by name); views are not
  state; ``sqlite_stat*`` tables are skipped; a table's column list (less volatile columns) is
  part of its digest so schema changes show.
- Volatile columns (timestamps the database sets itself) are left out by name, case-insensitive.
- ``count_only_tables`` contribute only their row count.
- Cost: one pass over the rows of each table the session may have changed; every other table
  is served from a per-image cache filled once (see :func:`session_digest`). No sorting.

:func:`sorted_state_hash` is the naive reference (sort every table, hash it all), kept for tests
and benchmarks that check both make the same match decisions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import apsw

if TYPE_CHECKING:
    from clarisql.envs.database import DatabaseImage, Session

#: DySQL-Bench's volatile columns: values SQLite or triggers set from the clock.
DEFAULT_VOLATILE_COLUMNS: tuple[str, ...] = ("last_update", "updated_at", "created_at", "timestamp")
_MOD = 1 << 128


@dataclass(frozen=True)
class DigestConfig:
    """How a state digest is taken (hashable: used as a cache key).

    - ``volatile_columns``: column names left out of every table (case-insensitive).
    - ``table_order``: tables hashed first, in this order (DySQL-Bench's ``TABLE_NAMES``).
    - ``only_tables``: when set, hash just these tables (missing ones count as absent).
    - ``count_only_tables``: tables that contribute only their row count.
    """

    volatile_columns: tuple[str, ...] = DEFAULT_VOLATILE_COLUMNS
    table_order: tuple[str, ...] = ()
    only_tables: tuple[str, ...] | None = None
    count_only_tables: tuple[str, ...] = ()

    def key(self) -> tuple[Any, ...]:
        return (
            tuple(sorted(c.lower() for c in self.volatile_columns)),
            self.table_order,
            self.only_tables,
            tuple(sorted(self.count_only_tables)),
        )


@dataclass(frozen=True)
class TableDigest:
    columns: tuple[str, ...]
    count: int
    total: int  # sum of row hashes mod 2**128 (0 for count-only tables)


def _qi(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def list_tables(conn: apsw.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_stat%'"
        )
    ]


def table_digest(conn: apsw.Connection, table: str, config: DigestConfig) -> TableDigest:
    """One pass over ``table``'s rows."""
    volatile = {c.lower() for c in config.volatile_columns}
    cols = tuple(
        r[1]
        for r in conn.execute(f"SELECT * FROM pragma_table_info({_sql_str(table)})")
        if r[1].lower() not in volatile
    )
    if table in config.count_only_tables or not cols:
        (count,) = conn.execute(f"SELECT count(*) FROM {_qi(table)}").fetchone()
        return TableDigest(cols, count, 0)
    expr = " || char(31) || ".join(f"quote({_qi(c)})" for c in cols)
    total = 0
    count = 0
    blake = hashlib.blake2b
    for (s,) in conn.execute(f"SELECT {expr} FROM {_qi(table)}"):
        total += int.from_bytes(
            blake(s.encode("utf-8", "surrogatepass"), digest_size=16).digest(), "little"
        )
        count += 1
    return TableDigest(cols, count, total % _MOD)


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _ordered(tables: list[str], config: DigestConfig) -> list[str]:
    present = set(tables)
    if config.only_tables is not None:
        present &= set(config.only_tables)
    first = [t for t in config.table_order if t in present]
    rest = sorted(present - set(first))
    return first + rest


def combine(digests: dict[str, TableDigest], config: DigestConfig) -> str:
    """Fold per-table digests into one hex string, tables in canonical order."""
    h = hashlib.sha256()
    for t in _ordered(list(digests), config):
        d = digests[t]
        h.update(
            f"{t}\x1f{','.join(d.columns)}\x1f{d.count}\x1f{d.total:032x}\n".encode(
                "utf-8", "surrogatepass"
            )
        )
    if config.only_tables is not None:
        missing = sorted(set(config.only_tables) - set(digests))
        h.update(("absent:" + ",".join(missing)).encode())
    return h.hexdigest()


def connection_digest(conn: apsw.Connection, config: DigestConfig | None = None) -> str:
    """Digest every table of ``conn`` (no cache)."""
    config = config or DigestConfig()
    tables = _ordered(list_tables(conn), config)
    return combine({t: table_digest(conn, t, config) for t in tables}, config)


def _image_table_digests(image: DatabaseImage, config: DigestConfig) -> dict[str, TableDigest]:
    cache = image.digest_cache.setdefault(config.key(), {})
    return cache


def image_table_digest(image: DatabaseImage, table: str, config: DigestConfig) -> TableDigest:
    cache = _image_table_digests(image, config)
    d = cache.get(table)
    if d is None:
        with image.reading() as master:
            d = cache[table] = table_digest(master, table, config)
    return d


def image_digest(image: DatabaseImage, config: DigestConfig | None = None) -> str:
    """Digest of the untouched image (cached per table)."""
    config = config or DigestConfig()
    with image.reading() as master:
        tables = _ordered(list_tables(master), config)
    return combine({t: image_table_digest(image, t, config) for t in tables}, config)


def session_digest(session: Session, config: DigestConfig | None = None) -> str:
    """Digest of a session's current state.

    Tables in ``session.dirty_tables`` (and any table the session created) are hashed in one
    pass over their rows; every other table is served from the image's cache.
    """
    config = config or DigestConfig()
    digests: dict[str, TableDigest] = {}
    with session.trusted() as conn:
        if session.schema_changed:
            source_tables = list_tables(conn)
        else:
            with session.image.reading() as master:
                source_tables = list_tables(master)
        image_tables = None
        if session.schema_changed:
            with session.image.reading() as master:
                image_tables = set(list_tables(master))
        for t in _ordered(source_tables, config):
            if session.is_dirty(t) or (image_tables is not None and t not in image_tables):
                digests[t] = table_digest(conn, t, config)
            else:
                digests[t] = image_table_digest(session.image, t, config)
    return combine(digests, config)


def sorted_state_hash(conn: apsw.Connection, config: DigestConfig | None = None) -> str:
    """Naive reference: read every table, sort its rows, hash everything (DySQL-Bench's way)."""
    config = config or DigestConfig()
    volatile = {c.lower() for c in config.volatile_columns}
    h = hashlib.sha256()
    for t in _ordered(list_tables(conn), config):
        cols = [
            r[1]
            for r in conn.execute(f"SELECT * FROM pragma_table_info({_sql_str(t)})")
            if r[1].lower() not in volatile
        ]
        h.update(f"{t}:{','.join(cols)}\n".encode())
        if t in config.count_only_tables or not cols:
            h.update(str(conn.execute(f"SELECT count(*) FROM {_qi(t)}").fetchone()[0]).encode())
            continue
        rows = conn.execute(f"SELECT {', '.join(_qi(c) for c in cols)} FROM {_qi(t)}").fetchall()
        rows.sort(key=lambda r: tuple((type(v).__name__, repr(v)) for v in r))
        for r in rows:
            h.update(repr(tuple((type(v).__name__, v) for v in r)).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


__all__ = [
    "DEFAULT_VOLATILE_COLUMNS",
    "DigestConfig",
    "TableDigest",
    "combine",
    "connection_digest",
    "image_digest",
    "session_digest",
    "sorted_state_hash",
    "table_digest",
]
