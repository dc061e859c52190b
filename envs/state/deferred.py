"""Deferred final-state digests: a database state as its image plus what changed, per table.

Contract
- :func:`session_state` describes a session's state without reading the image's unchanged
  rows: per table it is *unchanged* (no entry), a :class:`TableDelta` (row count and multiset
  hash of the rows the session added minus those it removed: SQLite's session extension lists
  them, both sides are read by key) or an absolute :class:`~clarisql.envs.state.digest.TableDigest`
  (a full pass over the session's table: new tables, schema changes, keys that may hold NULL,
  many changed rows).
- Two states of the same image are equal iff, table by table, their changes are equal: with the
  additive multiset hash, ``image + Δa == image + Δg`` iff ``Δa == Δg``, and a table neither
  side wrote is equal without hashing it. :meth:`StateDigest.entry` is a table's canonical
  change (``None`` when unchanged); :meth:`StateDigest.key` folds the entries into one string,
  ``"delta:<sha256>"``, equal for two states of one image iff their absolute digests are equal
  (up to hash collisions), in any process and run. It names a state relative to its image: the
  records store it beside the task and database it belongs to.
- The image's digest of a table is read (from the per-image cache, on disk; computed once per
  database content when missing) only when really needed: a table hashed in full whose columns
  are the image's (its change is the difference), or :meth:`StateDigest.absolute` /
  :meth:`StateDigest.table_digests`, the absolute values (what
  :func:`session_digest` returns, equal to a full recompute).
- Row counts (:meth:`StateDigest.row_count`) take the image's count from the digest cache or
  ``SELECT count(*)`` (C speed, cached per image, and on disk for large tables), never a hash
  pass.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import apsw

from clarisql.envs.sandbox.database import DatabaseImage, Session
from clarisql.envs.state import (
    digest as _dg,  # table_digest looked up at call time (tests count passes)
)
from clarisql.envs.state import digest_cache
from clarisql.envs.state.digest import (
    _MOD,
    DigestConfig,
    TableDigest,
    _change_list_is_complete,
    _digest_columns,
    _image_table_digests,
    _is_utf8,
    _ordered,
    _qi,
    _row_expr,
    _RowHasher,
    changed_rows,
    combine,
    image_table_digest,
    list_tables,
)

_KEY_VERSION = b"clarisql-state-delta-v1\n"


_COUNT_ON_DISK_ROWS = 100_000


@dataclass
class _ImageFacts:
    """What the digests learn about an image once (it never changes): cheap schema facts."""

    utf8: bool | None = None
    tables: list[str] | None = None
    ordered: dict[tuple[Any, ...], list[str]] = field(default_factory=dict)
    complete: dict[str, bool] = field(default_factory=dict)
    columns: dict[tuple[Any, ...], tuple[str, ...]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)


_FACTS: weakref.WeakKeyDictionary[DatabaseImage, _ImageFacts] = weakref.WeakKeyDictionary()
_FACTS_LOCK = threading.Lock()


def _facts(image: DatabaseImage) -> _ImageFacts:
    with _FACTS_LOCK:
        f = _FACTS.get(image)
        if f is None:
            f = _FACTS[image] = _ImageFacts()
        return f


@dataclass(frozen=True)
class TableDelta:
    """A written table relative to the image's table of the same name and columns."""

    columns: tuple[str, ...]
    count: int  # rows added minus rows removed
    total: int  # their hashes' sum, added minus removed, mod 2**128

    @property
    def is_zero(self) -> bool:
        return self.count == 0 and self.total == 0


Part = TableDigest | TableDelta


def _image_table_names(image: DatabaseImage) -> list[str]:
    f = _facts(image)
    if f.tables is None:
        with image.reading() as master:
            f.tables = list_tables(master)
    return f.tables


def image_tables(image: DatabaseImage, config: DigestConfig) -> list[str]:
    """The image's tables the digest covers, in canonical order (a schema read, cached)."""
    ordered = _facts(image).ordered
    got = ordered.get(config.key())
    if got is None:
        got = ordered[config.key()] = _ordered(_image_table_names(image), config)
    return list(got)


def _image_change_list_is_complete(image: DatabaseImage, table: str) -> bool:
    """:func:`~clarisql.envs.state.digest._change_list_is_complete` on the image's schema (cached;
    a session that changed no schema has the image's)."""
    complete = _facts(image).complete
    got = complete.get(table)
    if got is None:
        with image.reading() as master:
            got = complete[table] = _change_list_is_complete(master, table)
    return got


def image_columns(image: DatabaseImage, table: str, config: DigestConfig) -> tuple[str, ...]:
    """The columns an image table's digest covers (a schema read, cached per image)."""
    cols = _facts(image).columns
    got = cols.get((config.key(), table))
    if got is None:
        with image.reading() as master:
            got = cols[(config.key(), table)] = _digest_columns(master, table, config)
    return got


def _image_utf8(image: DatabaseImage) -> bool:
    f = _facts(image)
    if f.utf8 is None:
        with image.reading() as master:
            f.utf8 = _is_utf8(master)
    return f.utf8


def image_row_count(image: DatabaseImage, table: str) -> int:
    """Rows of an image table: from any cached digest, else ``SELECT count(*)`` (cached)."""
    counts = _facts(image).rows
    n = counts.get(table)
    if n is not None:
        return n
    for cached in list(image.digest_cache.values()):
        d = cached.get(table)
        if isinstance(d, TableDigest):
            n = d.count
            break
    if n is None:
        if not counts:  # first count in this process: what any process stored on disk
            counts.update(digest_cache.load_counts(image.content_key))
            n = counts.get(table)
        if n is None:
            with image.reading() as master:
                (n,) = master.execute(f"SELECT count(*) FROM {_qi(table)}").fetchone()
            if n > _COUNT_ON_DISK_ROWS:  # worth keeping: count(*) reads the whole table
                digest_cache.save_counts(image.content_key, {table: n})
    counts[table] = n
    return n


@dataclass
class StateDigest:
    """A database state: its image, the tables it has, and the parts that changed.

    ``tables``: the state's tables the digest covers, in canonical order. ``parts``: for written
    tables, a :class:`TableDelta` or an absolute :class:`TableDigest`; a table of ``tables``
    without a part is the image's, unchanged.
    """

    image: DatabaseImage
    config: DigestConfig
    tables: tuple[str, ...]
    parts: dict[str, Part] = field(default_factory=dict)
    _entries: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _image: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def entry(self, table: str) -> tuple[Any, ...] | None:
        """The canonical change of ``table`` against the image: ``None`` (unchanged), ``("delta",
        count, total)`` (same columns as the image), ``("table", columns, count, total)`` (a table
        the image lacks or whose columns changed) or ``("absent",)`` (the image has it, the state
        does not). Reads the image's digest of the table only for a table hashed in full whose
        columns are the image's."""
        if table in self._entries:
            return self._entries[table]
        e = self._entry(table)
        self._entries[table] = e
        return e

    def _entry(self, table: str) -> tuple[Any, ...] | None:
        in_image = table in self._image_set
        if table not in self.tables:
            return ("absent",) if in_image else None
        p = self.parts.get(table)
        if p is None:
            return None
        if isinstance(p, TableDelta):
            return None if p.is_zero else ("delta", p.count, p.total)
        if in_image and p.columns == image_columns(self.image, table, self.config):
            base = image_table_digest(self.image, table, self.config)
            d = TableDelta(p.columns, p.count - base.count, (p.total - base.total) % _MOD)
            return None if d.is_zero else ("delta", d.count, d.total)
        return ("table", p.columns, p.count, p.total)

    @property
    def _image_set(self) -> frozenset[str]:
        if self._image is None:
            self._image = frozenset(image_tables(self.image, self.config))
        return self._image

    def changed(self) -> list[str]:
        """Tables whose canonical change is not ``None``, in canonical order."""
        names = _ordered(list(set(self.tables) | self._image_set), self.config)
        return [t for t in names if self.entry(t) is not None]

    def key(self) -> str:
        """``"delta:<sha256>"`` of the canonical changes (module docstring)."""
        h = hashlib.sha256(_KEY_VERSION)
        for t in self.changed():
            h.update(repr((t, self.entry(t))).encode("utf-8", "surrogatepass") + b"\n")
        return "delta:" + h.hexdigest()

    def table_digest(self, table: str, cache: dict[str, TableDigest] | None = None) -> TableDigest:
        """The absolute digest of one of ``tables`` (the image's own object when unchanged)."""
        p = self.parts.get(table)
        if isinstance(p, TableDigest):
            return p
        base = cache.get(table) if cache is not None else None
        if base is None:
            base = image_table_digest(self.image, table, self.config)
        if p is None:
            return base
        return TableDigest(base.columns, base.count + p.count, (base.total + p.total) % _MOD)

    def table_digests(self) -> dict[str, TableDigest]:
        """Absolute per-table digests (hashes every image table not yet in the cache)."""
        cache = _image_table_digests(self.image, self.config)
        return {t: self.table_digest(t, cache) for t in self.tables}

    def absolute(self) -> str:
        """The absolute digest (:func:`~clarisql.envs.state.digest.combine` of :meth:`table_digests`)."""
        return combine(self.table_digests(), self.config)

    def row_count(self, table: str) -> int | None:
        """Rows of ``table`` in this state (``None`` when it has no such table); no hashing."""
        if table not in self.tables:
            return None
        p = self.parts.get(table)
        if isinstance(p, TableDigest):
            return p.count
        base = image_row_count(self.image, table)
        return base if p is None else base + p.count


def image_state(image: DatabaseImage, config: DigestConfig) -> StateDigest:
    """The untouched image as a state (no part; its key is that of "nothing changed")."""
    return StateDigest(image, config, tuple(image_tables(image, config)))


def _delta(
    session: Session,
    conn: apsw.Connection,
    table: str,
    config: DigestConfig,
    change: tuple[tuple[str, ...], set[tuple], set[tuple]],
) -> TableDelta | None:
    """The change of ``table`` from its changed rows alone (read by key on the image and in the
    session), or ``None`` when a full pass is cheaper (more than a quarter of the rows)."""
    key_cols, old_keys, new_keys = change
    if not key_cols:  # no usable key list (digest.changed_rows)
        return None
    n_keys = len(old_keys) + len(new_keys)
    if n_keys > 64 and n_keys > image_row_count(session.image, table) // 4:
        return None
    cols = image_columns(session.image, table, config)
    expr = _row_expr(cols) if cols and table not in config.count_only_tables else "1"
    where = " AND ".join(f"{_qi(c) if c != 'rowid' else 'rowid'} IS ?" for c in key_cols)
    tail = f"FROM {_qi(table)} WHERE {where}"
    utf8 = _image_utf8(session.image)  # a copy-on-write session shares the image's encoding
    with session.image.reading() as master:
        old = _RowHasher(master, expr, utf8)
        old.add_keys(tail, old_keys)
    new = _RowHasher(conn, expr, utf8)
    new.add_keys(tail, new_keys)
    total = 0 if expr == "1" else (new.total - old.total) % _MOD
    return TableDelta(cols, new.count - old.count, total)


def session_state(session: Session, config: DigestConfig | None = None) -> StateDigest:
    """A session's current state, deferred (module docstring); never hashes an image table.

    Tables the session never wrote get no part. A written table with a complete change list
    (and no schema change in the session) gets a :class:`TableDelta` from the rows it changed;
    otherwise (new tables, any schema change, keys that may hold NULL, ``sqlite_sequence``,
    more than a quarter of the rows changed) it is hashed in one pass over the session's rows.
    """
    config = config or DigestConfig()
    parts: dict[str, Part] = {}
    with session.trusted() as conn:
        image_names = _image_table_names(session.image)
        if session.schema_changed:
            names = list_tables(conn)
            new_tables = set(names) - set(image_names)
            changes: dict[str, tuple[tuple[str, ...], set[tuple], set[tuple]]] = {}
        else:
            names, new_tables = image_names, set()
            changes = changed_rows(session) if session.dirty_tables else {}
        tables = _ordered(names, config)
        for t in tables:
            if t not in new_tables and not session.is_dirty(t):
                continue
            d: Part | None = None
            if (
                not session.schema_changed
                and session.changes is not None
                and t.lower() != "sqlite_sequence"
                and _image_change_list_is_complete(session.image, t)
            ):
                change = changes.get(t.lower())
                if change is None:  # written to, but no row is listed as changed
                    continue
                d = _delta(session, conn, t, config, change)
            parts[t] = d if d is not None else _dg.table_digest(conn, t, config)
    return StateDigest(session.image, config, tuple(tables), parts)


__all__ = [
    "StateDigest",
    "TableDelta",
    "image_row_count",
    "image_state",
    "image_tables",
    "session_state",
]


def session_digest(session: Session, config: DigestConfig | None = None) -> str:
    """Absolute digest of a session's current state (hashes every image table not yet cached;
    the environment compares :meth:`StateDigest.key` instead)."""
    return session_state(session, config or DigestConfig()).absolute()


def session_table_digests(
    session: Session, config: DigestConfig | None = None
) -> dict[str, TableDigest]:
    """Absolute per-table digests of a session's current state
    (:func:`session_state`, resolved against the image's cache)."""
    return session_state(session, config or DigestConfig()).table_digests()
