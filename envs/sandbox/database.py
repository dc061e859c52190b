"""Sandboxed, per-episode SQLite sessions.

Why apsw and not the standard ``sqlite3`` module: SQLite silently reads a misspelled
double-quoted identifier (``SELECT "nosuchcol" FROM t``) as a string literal, and Python 3.11's
``sqlite3`` cannot switch that quirk off. apsw bundles a current SQLite and exposes
``SQLITE_DBCONFIG_DQS_DML/DDL``, so agent SQL with a bad quoted column fails as it would in
PostgreSQL. apsw also gives us the authorizer, progress handler, exec tracer and
serialize/deserialize that the sandbox needs.

Contract
- :class:`DatabaseImage` validates a source file once and serves it from a read-only base file
  (the source, or a cached copy with the suite's post-copy SQL applied); nothing is loaded into
  memory up front, and no file is ever written.
- :meth:`DatabaseImage.session` gives an episode its own state. A read-only session borrows a
  pooled read-only handle (no copy). A writable session gets a pooled copy-on-write connection
  over the base file (:mod:`clarisql.envs.sandbox.cow`): unchanged pages are shared through the OS page
  cache, the pages it writes stay private and are dropped when the episode ends; nothing it
  writes is visible to other sessions or to the file.
- :meth:`Session.execute` runs exactly one statement and never raises for bad SQL: every refusal
  (ATTACH/DETACH, VACUUM INTO, load_extension, state-changing PRAGMAs, transactions, writes in a
  read-only session, several statements, empty or non-UTF-8 SQL) and every failure (syntax error,
  time budget, constraint) comes back as an :class:`ExecResult` with ``ok=False`` and a message.
- Results are capped in rows and bytes (``truncated=True``). Each statement has a budget in
  SQLite VM steps (``max_vm_steps``, counted by the progress handler, so the verdict is the same
  on any machine under any load) and a larger wall-clock safety cap, enforced by the same
  handler and, for long single operations, by a watchdog thread that interrupts the connection.
- Resources (see :class:`SessionLimits` and :mod:`clarisql.envs.sandbox.limits`): no value or row is
  longer than ``max_value_bytes`` (``SQLITE_LIMIT_LENGTH``); a writable session's database grows
  by at most ``max_growth_bytes`` in ``main`` and again in ``temp`` (``max_page_count``); one
  statement may grow SQLite's heap by at most ``max_statement_memory_bytes``. So a session holds
  at most its changed pages + its page cache + 2 x ``max_growth_bytes`` +
  ``max_statement_memory_bytes`` (defaults: changed pages + 320 MB), and a connection that grew past its image is closed, not pooled, when the
  episode ends, its memory given back.
- What is known of a statement apart from running it (its text checks, the authorizer's tables,
  the results and error messages, fetching within the caps) lives in
  :mod:`clarisql.envs.sandbox.statements`; this module opens, pools and runs.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw

from clarisql.envs.sandbox.cow import database_bytes as cow_database_bytes
from clarisql.envs.sandbox.cow import open_cow, reset_cow
from clarisql.envs.sandbox.image_files import (
    DatabaseFileError,
    base_file,
    check_database_file,
    content_key,
)
from clarisql.envs.sandbox.limits import (
    WATCHDOG,
    SessionLimits,
    apply_connection_limits,
    ensure_soft_heap_limit,
    slice_guard,
    trim_heap,
)
from clarisql.envs.sandbox.statements import (
    ALWAYS_ALLOWED,
    DENIED_FUNCTIONS,
    FIRST_ITEM,
    INLINE_MAX_BYTES,
    INLINE_MAX_PATTERN,
    INLINE_MAX_ROWS,
    INLINE_MAX_VALUE,
    INLINE_WORDS,
    INTROSPECTION_PRAGMAS,
    READ_PRAGMAS,
    ROW_CHANGING,
    SCHEMA_TABLES,
    STATEMENT_ERRORS,
    TEMP_ACTIONS,
    WRITE_ACTIONS,
    ExecResult,
    Refusal,
    check_text,
    clean_error,
    error_result,
    first_word,
    only_comments,
    take_rows,
    words,
)

_INF = float("inf")
_SQLITE_OK = apsw.SQLITE_OK
# A writable copy that grew more than this past its image is closed, not pooled, at the end.
_POOL_SLACK_BYTES = 4_000_000

#: Session extensions: ``name -> factory(session)``, called when a session opens; a factory
#: returns an extension object or ``None``. Extensions live in ``session.extensions`` and may
#: define ``before(sql) -> sql`` (rewrite a statement before the sandbox runs it), ``after(res)``
#: and ``close()``. A factory with a ``needed(sql) -> bool`` attribute is called lazily instead:
#: before the session's first statement it returns true for, or when ``session.extensions`` is
#: read; one with ``setup(conn)`` is given each new connection before its first session. Used
#: by :mod:`clarisql.envs.suql` to register ANSWER/SUMMARY.
SESSION_EXTENSIONS: dict[str, Any] = {}


#: progress-handler calls allowed when a statement has no step budget (never reached)
_NO_STEP_CAP = 1 << 62

#: shared by sessions opened without limits (frozen; a pooled connection keeps them applied)
_DEFAULT_LIMITS = SessionLimits()


def _configure(conn: apsw.Connection) -> None:
    """Harden a connection: no DQS quirk, defensive mode, no extensions, no ATTACH."""
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    conn.config(apsw.SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
    conn.config(apsw.SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0)
    conn.limit(apsw.SQLITE_LIMIT_ATTACHED, 0)
    conn.execute("PRAGMA temp_store = MEMORY")


class DatabaseImage:
    """A source database as episodes see it: a read-only base file, pooled connections, caches.

    Nothing of the database is loaded into memory up front. Read-only sessions, digests and
    schema reads use read-only connections to the base file (one per thread for trusted reads,
    no global lock); writable sessions are copy-on-write connections over it
    (:mod:`clarisql.envs.sandbox.cow`): their memory grows with the pages they change, and resetting
    one drops those pages. The base file is the source file, or a derived copy with the suite's
    ``post_copy_sql`` applied (:func:`clarisql.envs.sandbox.image_files.base_file`). Idle pooled
    connections are bounded in bytes (:data:`POOL_MAX_BYTES` of SQLite page cache per image).

    Use :func:`get_image` to share images between environments in one process.
    """

    def __init__(self, path: str | Path, post_copy_sql: tuple[str, ...] | list[str] = ()):
        self.path = Path(path).resolve()
        if self.path.is_dir():
            raise DatabaseFileError(f"database path {self.path} is a directory, not a file")
        if self.path.exists() and not self.path.is_file():
            raise DatabaseFileError(
                f"database path {self.path} is not a regular file (a device, FIFO or socket)"
            )
        if not self.path.is_file():
            raise FileNotFoundError(f"database file {self.path} does not exist")
        self.post_copy_sql = tuple(post_copy_sql)
        check_database_file(self.path)
        st = self.path.stat()
        #: identifies this content in caches (gold answers, digests, schema summaries)
        self.key = f"{self.path}|{st.st_size}|{st.st_mtime_ns}|{self.post_copy_sql!r}"
        try:
            self.base_path = base_file(self.path, self.post_copy_sql)
        except apsw.Error as e:
            raise DatabaseFileError(
                f"{self.path}: post-copy SQL failed ({clean_error(e)})"
            ) from None
        #: names this content across processes (the on-disk digest cache)
        self.content_key = content_key(self.base_path, repr(self.post_copy_sql))
        self.page_size, pages = check_database_file(self.base_path)
        self.size_bytes = self.page_size * pages
        self._lock = threading.Lock()
        self._local = threading.local()
        #: idle connections as (connection, page-cache bytes, its empty change recorder or None,
        #: the SessionLimits last applied to it)
        self._ro_pool: list[tuple[apsw.Connection, int, None, Any]] = []
        self._rw_pool: list[tuple[apsw.Connection, int, apsw.Session | None, Any]] = []
        self._rw_idle_bytes = 0
        #: digest cache: config key -> {table: TableDigest}, filled lazily by clarisql.envs.state.digest
        self.digest_cache: dict[Any, dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"DatabaseImage({str(self.path)!r}, {self.size_bytes} bytes)"

    @property
    def image(self) -> bytes:
        """The image as SQLite file bytes (the base file's content)."""
        return self.base_path.read_bytes()

    # --- connections -----------------------------------------------------------------------
    def _open_readonly(self) -> apsw.Connection:
        conn = apsw.Connection(
            f"file:{self.base_path}?mode=ro&immutable=1",
            flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
        )
        _configure(conn)
        return conn

    @contextlib.contextmanager
    def reading(self) -> Iterator[apsw.Connection]:
        """A trusted read-only connection to the image (digests, schema reads), this thread's own.

        Never write to it (it is opened read-only). One per thread, so readers never wait on
        each other or on a copy.
        """
        conn = getattr(self._local, "reader", None)
        if conn is None:
            conn = self._local.reader = self._open_readonly()
        yield conn

    def _copy(self) -> apsw.Connection:
        # Copy-on-write over the base file, on the frozen clock (see clarisql.envs.sandbox.clock), so
        # golden replays are reproducible.
        conn = open_cow(self.base_path)
        _configure(conn)
        return conn

    def _acquire(self, writable: bool) -> tuple[apsw.Connection, apsw.Session | None, Any]:
        """A connection for a session, the empty change recorder it was pooled with (if any)
        and the :class:`SessionLimits` last applied to it (``None`` for a new connection)."""
        with self._lock:
            pool = self._rw_pool if writable else self._ro_pool
            entry = pool.pop() if pool else None
            if entry is not None and writable:
                self._rw_idle_bytes -= entry[1]
        if entry is not None:
            # Writable sessions run in autocommit mode (see Session): a pooled copy is back to
            # the image because _release drops the pages a session wrote.
            return entry[0], entry[2], entry[3]
        ensure_soft_heap_limit()
        conn = self._copy() if writable else self._open_readonly()
        for factory in list(SESSION_EXTENSIONS.values()):
            setup = getattr(factory, "setup", None)
            if setup is not None:
                setup(conn)
        return conn, None, None

    def _release(
        self,
        conn: apsw.Connection,
        writable: bool,
        reusable: bool,
        wrote: bool = True,
        changes: apsw.Session | None = None,
        applied: Any = None,
    ) -> None:
        """Pool ``conn`` (reset if it ``wrote``) or close it; an empty change recorder
        (``changes``, still attached) and the limits ``applied`` to it stay with a pooled
        connection for its next session."""
        if writable and reusable:
            try:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if wrote:
                    reset_cow(conn)
                reusable = not conn.in_transaction
            except (apsw.Error, RuntimeError, KeyError):
                reusable = False
        if reusable:
            if writable:
                nbytes = _cache_bytes(conn)
                with self._lock:
                    if self._rw_idle_bytes + nbytes <= POOL_MAX_BYTES:
                        self._rw_pool.append((conn, nbytes, changes, applied))
                        self._rw_idle_bytes += nbytes
                        return
            else:
                with self._lock:
                    if len(self._ro_pool) < 8:
                        self._ro_pool.append((conn, 0, None, applied))
                        return
        if changes is not None:
            changes.close()
        conn.close()

    def session(self, writable: bool, limits: SessionLimits | None = None) -> Session:
        """Open an episode's session (see the module docstring for the isolation contract)."""
        return Session(self, writable, limits or _DEFAULT_LIMITS)

    def fresh_copy(self) -> apsw.Connection:
        """A private, unsandboxed writable copy (copy-on-write; for replaying golden actions)."""
        return self._copy()


def _episode_counters(conn: apsw.Connection) -> None:
    """Make ``changes()``, ``total_changes()`` and ``last_insert_rowid()`` count from this
    session's start: a pooled connection carries SQLite's connection-level counters over from
    the episodes (and sessions) it served before, which would let one observe another.

    ``last_insert_rowid`` can be set; the other two cannot, so the SQL functions are replaced,
    for this connection, by ones relative to the counters at the session's start (a
    ``changes()`` is 0 until this session's own statements changed a row).
    """
    conn.set_last_insert_rowid(0)
    base = conn.total_changes()
    ref = weakref.ref(conn)  # (no cycle through the connection: it is freed when dropped)

    def total_changes() -> int:
        return ref().total_changes() - base  # type: ignore[union-attr]

    def changes() -> int:
        c = ref()
        return c.changes() if c.total_changes() != base else 0  # type: ignore[union-attr]

    conn.create_scalar_function("total_changes", total_changes, 0)
    conn.create_scalar_function("changes", changes, 0)


#: Idle writable connections kept per image, counted by the SQLite page cache they hold.
POOL_MAX_BYTES = 64 * 1024 * 1024


def _cache_bytes(conn: apsw.Connection) -> int:
    try:
        return int(conn.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0])
    except apsw.Error:
        return 0


_IMAGES: OrderedDict[tuple[Any, ...], DatabaseImage] = OrderedDict()
_IMAGES_LOCK = threading.Lock()
_MAX_IMAGES = 16


def _forget_images_after_fork() -> None:
    """In a forked child: start with no cached image (the parent's images and any connection
    they hold stay the parent's; the child opens its own on first use)."""
    global _IMAGES, _IMAGES_LOCK
    _IMAGES = OrderedDict()
    _IMAGES_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_images_after_fork)


def get_image(path: str | Path, post_copy_sql: tuple[str, ...] | list[str] = ()) -> DatabaseImage:
    """Return the process-wide cached image of ``path`` (reloaded if the file changed)."""
    p = Path(path).resolve()
    st = os.stat(p)
    key = (str(p), st.st_size, st.st_mtime_ns, tuple(post_copy_sql))
    with _IMAGES_LOCK:
        img = _IMAGES.get(key)
        if img is not None:
            _IMAGES.move_to_end(key)
            return img
    img = DatabaseImage(p, post_copy_sql)
    with _IMAGES_LOCK:
        _IMAGES[key] = img
        while len(_IMAGES) > _MAX_IMAGES:
            _IMAGES.popitem(last=False)
    return img


class Session:
    """One episode's database state. Not thread-safe; one per episode.

    ``dirty_tables`` lists the tables whose rows this session may have changed (collected by the
    authorizer when statements are prepared, a superset of the truly changed ones); the digest
    re-hashes only those and serves the others from the image's cache.

    A writable session runs in autocommit mode on a pooled private copy: every agent statement is
    its own transaction, so a failing, interrupted or ``OR ROLLBACK`` statement undoes only
    itself, and what earlier statements did (temporary objects, values from ``random()``) stays
    exactly as the agent saw it, with nothing replayed. (Savepoints inside one episode transaction
    cannot give this: SQLite rolls back the whole transaction, savepoints included, when a write
    is interrupted.) Closing the session refills the copy from the image if it was written to.
    Transaction-control statements (and savepoints) are refused to the agent.
    """

    # (slots: a session is opened per episode, and its attributes are read per statement)
    __slots__ = (
        "image",
        "writable",
        "limits",
        "dirty_tables",
        "schema_changed",
        "trusted_deadline",
        "changes",
        "_conn",
        "_temp_used",
        "_deadline",
        "_mem0",
        "_stop_reason",
        "_stmt_writes",
        "_sql",
        "_first_stmt",
        "_refusal",
        "_pending_dirty",
        "_tracer",
        "_sqlite_s",
        "_exts",
        "_stmt_exts",
        "_lazy",
        "_slice_end",
        "_ticks_left",
        "__weakref__",
    )

    def __init__(self, image: DatabaseImage, writable: bool, limits: SessionLimits):
        self._conn: apsw.Connection | None = None
        self.image = image
        self.writable = writable
        self.limits = limits
        self.dirty_tables: set[str] = set()
        self.schema_changed = False
        #: when set (``time.monotonic()``), :meth:`trusted` reads stop there (InterruptError)
        self.trusted_deadline: float | None = None
        #: SQLite's session extension records which rows a writable session changes (by primary
        #: key, or rowid for tables without one), so the digest can update a changed table's
        #: multiset hash from those rows alone (clarisql.envs.state.digest).
        self.changes: apsw.Session | None = None
        self._temp_used = False
        self._deadline = 0.0
        #: the end of an inline statement's time slice (:meth:`execute_inline`); else inf
        self._slice_end = _INF
        #: progress-handler calls left in the statement's step budget (``max_vm_steps``)
        self._ticks_left = 0
        self._mem0 = 0
        self._stop_reason: str | None = None
        self._stmt_writes = False
        self._sql = ""
        self._first_stmt = True
        self._refusal: Refusal | None = None
        self._sqlite_s = 0.0
        self._pending_dirty: set[str] = set()
        self._lazy: tuple[tuple[str, Any], ...] = ()
        # a pooled connection whose last session changed nothing keeps its empty recorder
        conn, idle_changes, applied = image._acquire(writable)
        self._conn = conn
        #: the exec tracer, bound once (binding a method per statement costs an allocation)
        self._tracer = self._trace
        try:
            if applied is limits:  # a pooled connection with these limits (re-assert the length)
                conn.limit(apsw.SQLITE_LIMIT_LENGTH, max(1, int(limits.max_value_bytes)))
            else:
                apply_connection_limits(
                    conn,
                    max_value_bytes=limits.max_value_bytes,
                    writable=writable,
                    image_pages=image.size_bytes // image.page_size,
                    page_size=image.page_size,
                    max_growth_bytes=limits.max_growth_bytes,
                )
        except apsw.Error:
            image._release(conn, writable, reusable=False, changes=idle_changes)
            self._conn = None
            raise
        if writable:
            if idle_changes is None:
                idle_changes = apsw.Session(conn, "main")
                idle_changes.config(apsw.SQLITE_SESSION_OBJCONFIG_ROWID, 1)
                idle_changes.attach(None)
            self.changes = idle_changes
        conn.authorizer = self._authorize
        conn.set_progress_handler(self._progress, limits.progress_steps)
        _episode_counters(conn)
        self._exts: dict[str, Any] = {}
        self._stmt_exts: list[Any] = []
        lazy = []
        for name, factory in list(SESSION_EXTENSIONS.items()):
            if getattr(factory, "needed", None) is not None:
                lazy.append((name, factory))
            else:
                self._make_extension(name, factory)
        if lazy:
            self._lazy = tuple(lazy)

    # --- extensions --------------------------------------------------------------------------
    def _make_extension(self, name: str, factory: Any) -> None:
        ext = factory(self)
        if ext is not None:
            self._exts[name] = ext
            if hasattr(ext, "before"):
                self._stmt_exts.append(ext)

    def _wake_extensions(self, sql: Any) -> None:
        """Make the lazy extensions that ``sql`` may need, before it runs."""
        rest = []
        for name, factory in self._lazy:
            if factory.needed(sql):
                self._make_extension(name, factory)
            else:
                rest.append((name, factory))
        self._lazy = tuple(rest)

    @property
    def extensions(self) -> dict[str, Any]:
        """The session's extensions by name (a lazy one is made when this is read)."""
        if self._lazy:
            lazy, self._lazy = self._lazy, ()
            for name, factory in lazy:
                self._make_extension(name, factory)
        return self._exts

    # --- lifecycle ---------------------------------------------------------------------------
    @property
    def connection(self) -> apsw.Connection:
        if self._conn is None:
            raise RuntimeError("session is closed")
        return self._conn

    def close(self) -> None:
        """Give the connection back (its state is discarded); idempotent."""
        self._close(pool=True)

    def _close(self, pool: bool) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        self._tracer = None  # (no cycle left: a dropped session is freed at once)
        for ext in self._exts.values():
            if hasattr(ext, "close"):
                ext.close()
        wrote = bool(self.dirty_tables) or self.schema_changed
        idle_changes = None
        if self.changes is not None:
            if not wrote and self.changes.is_empty:
                idle_changes = self.changes  # nothing written or recorded: reusable as it is
            else:
                self.changes.close()
            self.changes = None
        conn.authorizer = None
        conn.set_progress_handler(None)
        grown = False
        if self.writable and wrote:  # only a session that wrote can have grown its database
            grown = self._grown(conn)
        reusable = (
            pool
            and not self._temp_used
            and not grown
            and (self.writable or not conn.in_transaction)
        )
        self.image._release(conn, self.writable, reusable, wrote, idle_changes, self.limits)
        if grown:
            trim_heap()  # a big session's pages were freed with its connection: give them back

    def _grown(self, conn: apsw.Connection) -> bool:
        """Whether this session's database grew too far past the image to be pooled."""
        try:
            # a copy-on-write file knows its size (no statement); temp has pages only
            # when the session made temporary objects
            main_bytes = cow_database_bytes(conn)
            if main_bytes is None:
                (pages,) = conn.execute("PRAGMA main.page_count").fetchone()
                main_bytes = pages * self.image.page_size
            temp_pages = 0
            if self._temp_used:
                (temp_pages,) = conn.execute("PRAGMA temp.page_count").fetchone()
            return (
                main_bytes > self.image.size_bytes + _POOL_SLACK_BYTES
                or temp_pages * self.image.page_size > _POOL_SLACK_BYTES
            )
        except apsw.Error:
            return True

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - safety net (a closed session: one test)
        # A session dropped unclosed closes its connection instead of pooling it: the garbage
        # collector has already cleared the weak references to it (the per-connection maps of
        # clarisql.envs.sandbox.cow and .limits forget it), so it must not come back to life in a pool.
        try:
            if self._conn is not None:
                self._close(pool=False)
        except Exception:
            pass

    # --- sandbox hooks -----------------------------------------------------------------------
    def _deny(self, message: str) -> int:
        if self._refusal is None:
            self._refusal = Refusal(message)
        return apsw.SQLITE_DENY

    def _authorize(
        self, op: int, p1: str | None, p2: str | None, db: str | None, trig: str | None
    ) -> int:
        if op in ALWAYS_ALLOWED:  # (the common read operations: one set lookup)
            return _SQLITE_OK
        if op in (apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH):
            return self._deny(
                "ATTACH/DETACH (and VACUUM INTO) are not allowed: the episode cannot touch other files"
            )
        if op == apsw.SQLITE_PRAGMA:
            name = (p1 or "").lower()
            if name in INTROSPECTION_PRAGMAS or (name in READ_PRAGMAS and p2 is None):
                return apsw.SQLITE_OK
            return self._deny(
                f"PRAGMA {name} is not allowed: only schema-introspection and read-only pragmas may run"
            )
        if op == apsw.SQLITE_FUNCTION:
            if (p2 or "").lower() in DENIED_FUNCTIONS:
                return self._deny(f"function {p2}() is not allowed")
            return apsw.SQLITE_OK
        if op in (apsw.SQLITE_TRANSACTION, apsw.SQLITE_SAVEPOINT):
            return self._deny(
                "transaction control is not allowed: every statement commits on its own"
            )
        if op in (apsw.SQLITE_CREATE_VTABLE, apsw.SQLITE_DROP_VTABLE):
            return self._deny("virtual tables are not allowed")
        if op in TEMP_ACTIONS:
            if not self.writable:
                return self._deny("this episode is read-only: temporary objects cannot be created")
            self._temp_used = self._stmt_writes = True
            return apsw.SQLITE_OK
        if op in WRITE_ACTIONS:
            if db == "temp":
                if not self.writable:
                    return self._deny("this episode is read-only: writes are not allowed")
                self._temp_used = self._stmt_writes = True
                return apsw.SQLITE_OK
            if not self.writable:
                return self._deny(
                    f"this episode is read-only: {self._operation(op, p1)} is not allowed"
                )
            self._stmt_writes = True
            if op in ROW_CHANGING and p1:
                self._pending_dirty.add(p1)
            elif op == apsw.SQLITE_ALTER_TABLE and p2:
                self._pending_dirty.add(p2)
            if op not in (apsw.SQLITE_INSERT, apsw.SQLITE_UPDATE, apsw.SQLITE_DELETE):
                self.schema_changed = True
            return apsw.SQLITE_OK
        return apsw.SQLITE_OK

    def _operation(self, op: int, p1: str | None) -> str:
        """The statement's operation for a refusal message.

        SQLite authorizes a DDL statement's write to the schema table (DELETE for DROP TABLE,
        INSERT for CREATE VIEW) before the DDL action itself, so such a write is named after the
        statement (``DROP TABLE``, ``CREATE VIEW``) rather than the schema-table write.
        """
        name = WRITE_ACTIONS[op]
        if (p1 or "").lower() in SCHEMA_TABLES:
            first = words(self._sql, 4)
            if first and first[0] in ("CREATE", "DROP", "ALTER"):
                kinds = [w for w in first[1:] if w not in ("TEMP", "TEMPORARY", "UNIQUE")]
                if kinds:
                    name = f"{first[0]} {kinds[0]}"
        return name

    def _progress(self) -> bool:
        self._ticks_left -= 1
        if self._ticks_left < 0:  # (first: the step budget's verdict never depends on time)
            self._stop_reason = "steps"
            return True
        now = time.monotonic()
        if now > self._slice_end:
            self._stop_reason = "slice"
            return True
        reserve = self.limits.write_reserve * self.limits.timeout_s if self._stmt_writes else 0.0
        if now > self._deadline - reserve:
            self._stop_reason = "timeout"
            return True
        if apsw.memory_used() - self._mem0 > self.limits.max_statement_memory_bytes:
            self._stop_reason = "memory"
            return True
        return False

    def _trace(self, cursor: apsw.Cursor, stmt: str, bindings: Any) -> bool:
        """Exec tracer: let only the action's one statement run (trailing comments allowed)."""
        if self._first_stmt:
            self._first_stmt = False
            sql = self._sql
            if (
                len(sql) > len(stmt)
                and sql.startswith(stmt)
                and not only_comments(sql[len(stmt) :])
            ):
                self._refusal = Refusal(
                    "only one SQL statement per execute action (found several)", "multiple"
                )
                return False
            return True
        if only_comments(stmt):
            return True
        self._refusal = Refusal(
            "only one SQL statement per execute action (found several)", "multiple"
        )
        return False

    # --- execution ---------------------------------------------------------------------------
    def execute(self, sql: Any) -> ExecResult:
        """Run one agent statement under the sandbox. Never raises for bad SQL (see module doc)."""
        t0 = time.perf_counter()
        self._sqlite_s = 0.0
        for _, factory in self._lazy:  # (usually one: SUQL, until a statement needs it)
            if factory.needed(sql):
                self._wake_extensions(sql)
                break
        exts = self._stmt_exts
        if exts:
            original = sql
            for ext in exts:
                sql = ext.before(sql)
            res = self._execute(sql)
            for ext in exts:
                ext.after(res)
            if isinstance(original, str):
                res.sql = original
        else:
            res = self._execute(sql)
            if self._lazy and isinstance(sql, str):
                res.sql = sql  # (as with the extension made: the statement as the agent wrote it)
        res.elapsed_s = time.perf_counter() - t0
        res.sqlite_s = self._sqlite_s
        return res

    @property
    def running_inline(self) -> bool:
        """Whether a statement runs inline now (:meth:`execute_inline`): a callback that would
        block (a model call) raises ``apsw.InterruptError`` instead, and the statement is run
        again off the caller's thread."""
        return self._slice_end != _INF

    def execute_inline(self, sql: Any, slice_s: float) -> ExecResult | None:
        """:meth:`execute` within a time slice, for a caller that must not block for long.

        Runs only a statement that cannot change the database (any statement of a read-only
        session; ``SELECT``/``VALUES``/``EXPLAIN``/``PRAGMA`` in a writable one) and that the
        statement extensions allow (``inline_ok(sql)``: SUQL declines statements that call a
        model). When it is not done ``slice_s`` seconds after it started (at most a quarter of
        the budget) it is stopped, by the progress handler or by this thread's
        :class:`~clarisql.envs.sandbox.limits.SliceGuard` (a few ms later; SQLite sees the interrupt
        between VM operations), and ``None`` comes back; so it does when it meets a value,
        row or LIKE pattern, or returns a result, past the inline caps
        (:data:`~clarisql.envs.sandbox.statements.INLINE_MAX_VALUE` and the others: one SQLite function
        over long values cannot be interrupted). A stopped read changed nothing, so the caller
        runs it again with :meth:`execute`, the whole budget and the session's own caps. A model call met inside the statement (were one not named in its
        text: SQLite refuses them in views and triggers) also stops it, before the call.
        ``None`` too, at once, for a statement this does not run. Otherwise the result is the
        one :meth:`execute` gives.
        """
        if self.writable and (not isinstance(sql, str) or first_word(sql) not in INLINE_WORDS):
            return None
        for _, factory in self._lazy:  # (a statement that needs SUQL may call a model)
            if factory.needed(sql):
                return None
        for ext in self._stmt_exts:
            ok = getattr(ext, "inline_ok", None)
            if ok is not None and not ok(sql):
                return None
        conn = self.connection
        # (small values and patterns only: see statements.INLINE_MAX_VALUE)
        length = conn.limit(
            apsw.SQLITE_LIMIT_LENGTH, min(self.limits.max_value_bytes, INLINE_MAX_VALUE)
        )
        pattern = conn.limit(apsw.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, INLINE_MAX_PATTERN)
        guard = slice_guard()
        # (the slice stays well inside the budget: the watchdog is not armed inline)
        self._slice_end = end = time.monotonic() + min(slice_s, 0.25 * self.limits.timeout_s)
        guard.arm(conn, end)
        try:
            res = self.execute(sql)
        finally:
            guard.disarm()
            self._slice_end = _INF
            conn.limit(apsw.SQLITE_LIMIT_LENGTH, length)
            conn.limit(apsw.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, pattern)
        return None if res.error_kind == "deferred" else res

    def _execute(self, sql: Any) -> ExecResult:
        checked = check_text(sql, self.limits.max_sql_chars)
        if not isinstance(checked, str):
            return checked  # (refused before SQLite sees it)
        sql = checked
        conn = self._conn
        if conn is None:
            raise RuntimeError("session is closed")
        self._refusal = None
        if self._pending_dirty:
            self._pending_dirty = set()
        self._sql = sql
        self._first_stmt = True
        cur = conn.cursor()
        cur.exec_trace = self._tracer
        lim = self.limits
        self._deadline = time.monotonic() + lim.timeout_s
        steps = lim.max_vm_steps
        self._ticks_left = _NO_STEP_CAP if steps is None else steps // max(1, lim.progress_steps)
        self._stop_reason = None
        self._stmt_writes = False
        self._mem0 = apsw.memory_used()
        total0 = conn.total_changes()
        # the grace never exceeds 4 % of the budget: the step, bookkeeping included, must end
        # within budget + 10 % also for short budgets
        grace = min(lim.watchdog_grace_s, 0.04 * lim.timeout_s)
        # (an inline statement is stopped by its slice guard long before this deadline)
        token = WATCHDOG.watch(conn, self._deadline + grace) if self._slice_end == _INF else -1
        t_sql = time.perf_counter()
        try:
            it = cur.execute(sql, can_cache=False)
            try:
                columns = list(map(FIRST_ITEM, cur.get_description()))
            except apsw.ExecutionCompleteError:
                columns = []
            if self._slice_end == _INF:
                rows, truncated = take_rows(it, lim.max_rows, lim.max_bytes)
            else:  # inline: a small result only (its formatting runs on the caller's loop)
                cap_rows = min(lim.max_rows, INLINE_MAX_ROWS)
                cap_bytes = min(lim.max_bytes, INLINE_MAX_BYTES)
                rows, truncated = take_rows(it, cap_rows, cap_bytes)
                if truncated and (cap_rows, cap_bytes) != (lim.max_rows, lim.max_bytes):
                    return ExecResult(
                        False, sql, error="too big to take inline", error_kind="deferred"
                    )
        except STATEMENT_ERRORS as e:
            inline = self._slice_end != _INF
            return error_result(e, sql, lim, self._refusal, self._stop_reason, inline)
        finally:
            if token >= 0:
                WATCHDOG.cancel(token)
            self._sqlite_s = time.perf_counter() - t_sql
            self._deadline = 0.0
            if self._pending_dirty or self.schema_changed:
                self.dirty_tables |= {t.lower() for t in self._pending_dirty}
                self.dirty_tables.add("sqlite_sequence")
            try:
                cur.close(force=True)
            except apsw.Error:
                pass
        is_write = bool(self._pending_dirty)
        # changes() keeps the count of the last INSERT/UPDATE/DELETE that completed, on this
        # connection, even one from an earlier statement or episode; it is this statement's
        # count only when this statement changed rows (total_changes moved).
        changed = conn.changes() if is_write and conn.total_changes() != total0 else 0
        return ExecResult(True, sql, columns, rows, truncated, changed, is_write=is_write)

    # --- helpers used by the environment ----------------------------------------------------
    @contextlib.contextmanager
    def trusted(self) -> Iterator[apsw.Connection]:
        """The raw connection with the sandbox hooks off, for the environment's own reads.

        The value-length limit is lifted too: the digest renders values with ``quote()``, which
        doubles a blob's length. With :attr:`trusted_deadline` set, reads stop at that time.
        """
        conn = self.connection
        conn.authorizer = None
        deadline = self.trusted_deadline
        if deadline is None:
            conn.set_progress_handler(None)
        else:
            conn.set_progress_handler(
                lambda: time.monotonic() > deadline, self.limits.progress_steps
            )
        length = conn.limit(apsw.SQLITE_LIMIT_LENGTH, 0x7FFFFFFF)
        try:
            yield conn
        finally:
            conn.limit(apsw.SQLITE_LIMIT_LENGTH, length)
            conn.authorizer = self._authorize
            conn.set_progress_handler(self._progress, self.limits.progress_steps)

    def is_dirty(self, table: str) -> bool:
        return table.lower() in self.dirty_tables


__all__ = [
    "DatabaseFileError",
    "SESSION_EXTENSIONS",
    "DatabaseImage",
    "ExecResult",
    "Session",
    "SessionLimits",
    "get_image",
]
