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
- Cost: a written table is described by the rows that changed (SQLite's session extension
  lists their keys: the image's hashes of those rows leave the sum, the session's enter it), so
  a one-row UPDATE costs two keyed lookups; a full pass over a written table's rows is the
  fallback (schema changes, keys that may hold NULL, many changed rows). No sorting. The
  environment compares those changes without the image's totals
  (:mod:`clarisql.envs.state.deferred`); an image table's digest, needed only for absolute values
  (:func:`image_digest`, :func:`session_digest`) or after a full pass, is computed once per
  database content and table and cached on disk (:mod:`clarisql.envs.state.digest_cache`). A full
  pass renders rows in SQL, hashes their bytes and sums the hashes vectorised (numpy).

:func:`sorted_state_hash` is the naive reference (sort every table, hash it all), kept for tests
and benchmarks that check both make the same match decisions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from clarisql.envs.state import digest_cache

if TYPE_CHECKING:
    from clarisql.envs.sandbox.database import DatabaseImage, Session

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


_CHUNK = 1 << 16


def _is_utf8(conn: apsw.Connection) -> bool:
    (enc,) = conn.execute("PRAGMA encoding").fetchone()
    return str(enc).upper() == "UTF-8"


class _RowHasher:
    """Sums BLAKE2b-128 hashes of rows rendered as text (their UTF-8 bytes), mod 2**128.

    In a UTF-8 database the rendering is wrapped in ``CAST(... AS BLOB)``, so SQLite hands over
    the bytes as they are (no decoding to ``str`` and re-encoding; exact for invalid UTF-8 too,
    which would not decode). The 128-bit sum is vectorised: a chunk of digests is summed as four
    32-bit limbs in numpy, no Python integer per row. (No library sums a multiset hash; SQLite
    has no BLAKE2b, so the per-row hash is Python's ``hashlib``.)
    """

    def __init__(self, conn: apsw.Connection, expr: str, utf8: bool | None = None):
        self.conn = conn
        self.utf8 = _is_utf8(conn) if utf8 is None else utf8
        self.select = f"SELECT CAST(({expr}) AS BLOB)" if self.utf8 else f"SELECT {expr}"
        self.limbs = np.zeros(4, dtype=np.uint64)
        self.small = 0
        self.count = 0

    def add(self, tail: str, bindings: Any = None) -> None:
        """Hash every row of ``SELECT <expr> <tail>``."""
        cur = self.conn.execute(f"{self.select} {tail}", bindings)
        blake = hashlib.blake2b
        while True:
            if self.utf8:
                chunk = [blake(b, digest_size=16).digest() for (b,) in islice(cur, _CHUNK)]
            else:
                chunk = [
                    blake(s.encode("utf-8", "surrogatepass"), digest_size=16).digest()
                    for (s,) in islice(cur, _CHUNK)
                ]
            if not chunk:
                return
            self._sum(chunk)

    def add_keys(self, tail: str, keys: Iterable[tuple]) -> None:
        """Hash the rows of ``SELECT <expr> <tail>`` bound to each key in turn."""
        blake = hashlib.blake2b
        chunk = []
        for key in keys:
            for (v,) in self.conn.execute(f"{self.select} {tail}", key):
                b = v if self.utf8 else v.encode("utf-8", "surrogatepass")
                chunk.append(blake(b, digest_size=16).digest())
        if chunk:
            self._sum(chunk)

    def _sum(self, chunk: list[bytes]) -> None:
        self.count += len(chunk)
        if len(chunk) < 256:  # a few keyed rows: Python integers beat numpy's call overhead
            self.small += sum(int.from_bytes(d, "little") for d in chunk)
            return
        digests = np.frombuffer(b"".join(chunk), dtype="<u4").reshape(-1, 4)
        self.limbs += digests.sum(axis=0, dtype=np.uint64)

    @property
    def total(self) -> int:
        big = sum(int(v) << (32 * i) for i, v in enumerate(self.limbs.tolist()))
        return (big + self.small) % _MOD


def _digest_columns(conn: apsw.Connection, table: str, config: DigestConfig) -> tuple[str, ...]:
    volatile = {c.lower() for c in config.volatile_columns}
    return tuple(
        r[1]
        for r in conn.execute(f"SELECT * FROM pragma_table_info({_sql_str(table)})")
        if r[1].lower() not in volatile
    )


def _row_expr(cols: tuple[str, ...]) -> str:
    """SQL rendering one row as text: ``quote()`` keeps storage types apart (1, 1.0, '1')."""
    return " || char(31) || ".join(f"quote({_qi(c)})" for c in cols)


def table_digest(conn: apsw.Connection, table: str, config: DigestConfig) -> TableDigest:
    """One pass over ``table``'s rows."""
    cols = _digest_columns(conn, table, config)
    if table in config.count_only_tables or not cols:
        (count,) = conn.execute(f"SELECT count(*) FROM {_qi(table)}").fetchone()
        return TableDigest(cols, count, 0)
    h = _RowHasher(conn, _row_expr(cols))
    h.add(f"FROM {_qi(table)}")
    return TableDigest(cols, h.count, h.total)


def changed_rows(session: Session) -> dict[str, tuple[tuple[str, ...], set[tuple], set[tuple]]]:
    """Per table (lower-cased): key columns, keys of image rows that may have changed or gone,
    and keys of session rows that may be new or changed — from SQLite's session extension.

    Key columns are the primary key, or ``("rowid",)`` for tables without one; ``()`` when the
    change list holds text that is not valid UTF-8 (Python cannot read it: hash the table in
    full). The key sets are a superset of the truly changed rows (a change that was later undone
    may still be listed); callers re-read both sides, so a listed but unchanged row cancels out.
    """
    out: dict[str, tuple[tuple[str, ...], set[tuple], set[tuple]]] = {}
    if session.changes is None:
        return out
    cols_cache: dict[str, list[str]] = {}
    conn = session.connection
    for ch in apsw.Changeset.iter(session.changes.changeset()):
        name = ch.name
        cols = cols_cache.get(name)
        if cols is None:
            cols = cols_cache[name] = [
                r[1] for r in conn.execute(f"SELECT * FROM pragma_table_info({_sql_str(name)})")
            ]
        if ch.column_count == len(cols) + 1:  # implicit rowid in front (no declared key)
            idx, key_cols = (0,), ("rowid",)
        else:
            idx = tuple(sorted(ch.pk_columns))
            key_cols = tuple(cols[i] for i in idx)
        entry = out.setdefault(name.lower(), (key_cols, set(), set()))
        if not entry[0]:
            continue
        try:
            if ch.op != "INSERT":
                old_key = tuple(ch.old[i] for i in idx)
                entry[1].add(old_key)
                if ch.op == "UPDATE":  # an UPDATE keeps its key (a key change is DELETE + INSERT)
                    entry[2].add(old_key)
            else:
                entry[2].add(tuple(ch.new[i] for i in idx))
        except UnicodeDecodeError:  # text that is not valid UTF-8: no usable key list
            out[name.lower()] = ((), set(), set())
    return out


def _change_list_is_complete(conn: apsw.Connection, table: str) -> bool:
    """Whether the session extension records every change to ``table``.

    It skips rows with NULL in a primary-key column, which SQLite allows for a declared key
    that is neither an INTEGER PRIMARY KEY nor NOT NULL in an ordinary (rowid) table.
    """
    info = conn.execute(
        f'SELECT type, "notnull", pk FROM pragma_table_info({_sql_str(table)})'
    ).fetchall()
    pk = [(typ, notnull) for typ, notnull, k in info if k]
    if not pk:
        return True  # tracked by rowid
    if len(pk) == 1 and pk[0][0].upper() == "INTEGER":
        return True  # the rowid itself
    if all(notnull for _, notnull in pk):
        return True
    row = conn.execute(
        "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?", (table,)
    ).fetchone()
    return bool(row and row[0])  # WITHOUT ROWID tables forbid NULL keys


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
    key = config.key()
    cache = image.digest_cache.get(key)
    if cache is None:  # first use in this process: what any process already stored on disk
        stored = digest_cache.load(image.content_key, key)
        cache = image.digest_cache.setdefault(key, {t: TableDigest(*v) for t, v in stored.items()})
    return cache


def image_table_digest(image: DatabaseImage, table: str, config: DigestConfig) -> TableDigest:
    cache = _image_table_digests(image, config)
    d = cache.get(table)
    if d is None:
        with image.reading() as master:
            d = cache[table] = table_digest(master, table, config)
        digest_cache.save(image.content_key, config.key(), {table: d})
    return d


def image_digest(image: DatabaseImage, config: DigestConfig | None = None) -> str:
    """Digest of the untouched image (cached per table)."""
    config = config or DigestConfig()
    with image.reading() as master:
        tables = _ordered(list_tables(master), config)
    return combine({t: image_table_digest(image, t, config) for t in tables}, config)


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
    "sorted_state_hash",
    "table_digest",
]
