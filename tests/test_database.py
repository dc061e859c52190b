"""The sandboxed session against real SQLite: isolation, the attack list, limits."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits, get_image

from .conftest import sha256

LIMITS = SessionLimits(timeout_s=0.5, max_rows=1000)

ATTACKS = [
    ("attach", "ATTACH DATABASE '{tmp}/other.db' AS other", "refused", "ATTACH"),
    ("load_extension", "SELECT load_extension('{tmp}/evil.so')", "refused", "load_extension"),
    ("vacuum_into", "VACUUM INTO '{tmp}/x.db'", "refused", "VACUUM INTO"),
    ("writable_schema", "PRAGMA writable_schema=1", "refused", "PRAGMA writable_schema"),
    (
        "endless_cte",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
        "timeout",
        "budget",  # the statement's SQLite-step budget, or (on a slow machine) its time budget
    ),
    (
        "cross_join",
        "SELECT count(*) FROM sales a, sales b, sales c, sales d, sales e, sales f, sales g",
        "timeout",
        "budget",  # the statement's SQLite-step budget, or (on a slow machine) its time budget
    ),
    ("several_statements", "SELECT 1; DELETE FROM sales", "multiple", "one SQL statement"),
    ("empty", "   -- nothing here\n  ", "empty", "empty SQL"),
    ("non_utf8", b"SELECT '\xff\xfe'", "encoding", "UTF-8"),
    ("lone_surrogate", "SELECT '\udcff'", "encoding", "UTF-8"),
    ("misspelled_quoted_column", 'SELECT "prise" FROM sales', "syntax", 'no such column: "prise"'),
    ("detach", "DETACH DATABASE main", "refused", "DETACH"),
    ("pragma_off", "PRAGMA foreign_keys = OFF", "refused", "PRAGMA foreign_keys"),
    ("transaction", "BEGIN IMMEDIATE", "refused", "transaction"),
]


@pytest.mark.parametrize("writable", [False, True], ids=["read-only", "writable"])
@pytest.mark.parametrize("name,sql,kind,needle", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_attack_list(
    small_db: Path, tmp_path: Path, writable: bool, name: str, sql, kind: str, needle: str
) -> None:
    before = sha256(small_db)
    img = DatabaseImage(small_db)
    if isinstance(sql, str):
        sql = sql.format(tmp=tmp_path)
    with img.session(writable, LIMITS) as s:
        t0 = time.monotonic()
        res = s.execute(sql)
        elapsed = time.monotonic() - t0
        assert not res.ok, f"{name} was not refused"
        assert res.error_kind == kind, res.error
        assert needle.lower() in res.error.lower(), res.error
        # stopped within its budget (generous slack for a loaded machine)
        assert elapsed < LIMITS.timeout_s + 1.5
        # the session still works afterwards, and the data is intact
        assert s.execute("SELECT count(*) FROM sales").rows == [(30,)]
    assert sha256(small_db) == before
    assert not (tmp_path / "x.db").exists()
    assert not (tmp_path / "other.db").exists()


def test_write_refused_in_read_only_episode(small_db: Path) -> None:
    before = sha256(small_db)
    img = DatabaseImage(small_db)
    with img.session(False, LIMITS) as s:
        for sql in (
            "DELETE FROM sales",
            "UPDATE sales SET price = 0",
            "INSERT INTO cities VALUES (3, 'X')",
            "DROP TABLE sales",
            "CREATE TABLE t(a)",
            "CREATE TEMP TABLE t(a)",
            "ALTER TABLE sales ADD COLUMN z",
        ):
            res = s.execute(sql)
            assert not res.ok and res.error_kind == "refused", sql
            assert "read-only" in res.error
        assert s.execute("SELECT count(*) FROM sales").rows == [(30,)]
    assert sha256(small_db) == before


def test_writes_are_private_to_the_episode(small_db: Path) -> None:
    before = sha256(small_db)
    img = DatabaseImage(small_db)
    a = img.session(True, LIMITS)
    b = img.session(True, LIMITS)
    r = img.session(False, LIMITS)
    assert a.execute("DELETE FROM sales WHERE year = 2019").changes == 10
    assert a.execute("SELECT count(*) FROM sales").rows == [(20,)]
    assert b.execute("SELECT count(*) FROM sales").rows == [(30,)]
    assert r.execute("SELECT count(*) FROM sales").rows == [(30,)]
    a.close()
    # a pooled connection handed out again starts from the pristine image
    c = img.session(True, LIMITS)
    assert c.execute("SELECT count(*) FROM sales").rows == [(30,)]
    for s in (b, r, c):
        s.close()
    assert sha256(small_db) == before


def test_read_only_session_copies_nothing(small_db: Path) -> None:
    from clarisql.envs.sandbox.cow import is_cow, overlay_bytes

    before = sha256(small_db)
    img = DatabaseImage(small_db)
    with img.session(False, LIMITS) as s:
        # the handle reads the source file itself (no in-memory copy)
        assert s.connection.filename == str(small_db.resolve())
        assert s.connection.readonly("main")
    with img.session(True, LIMITS) as s:
        # copy-on-write over the same file: private pages only for what it writes
        assert is_cow(s.connection) and overlay_bytes(s.connection) == 0
        assert s.execute("UPDATE sales SET price = price + 1").ok
        assert 0 < overlay_bytes(s.connection) < 64 * 4096
    assert sha256(small_db) == before


def test_result_caps(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(False, SessionLimits(max_rows=7, max_bytes=10_000)) as s:
        res = s.execute("SELECT * FROM sales")
        assert res.ok and res.truncated and len(res.rows) == 7
        res = s.execute(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
        )
        assert res.ok and res.truncated and len(res.rows) == 7
    with img.session(False, SessionLimits(max_bytes=100)) as s:
        res = s.execute("SELECT project FROM sales")
        assert res.ok and res.truncated and 0 < len(res.rows) < 30


def test_huge_string_is_refused(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(False, SessionLimits(timeout_s=5)) as s:
        res = s.execute("SELECT length(randomblob(2000000000))")
        assert not res.ok and ("too big" in res.error or "budget" in res.error)


def test_trailing_comments_and_semicolons_are_one_statement(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(False, LIMITS) as s:
        assert s.execute("SELECT count(*) FROM sales; -- done\n /* c */ ;;").rows == [(30,)]
        assert s.execute("SELECT ';' || '--'").rows == [(";--",)]


def test_dirty_tables_tracked(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True, LIMITS) as s:
        s.execute("SELECT * FROM cities")
        assert s.dirty_tables == set()
        s.execute("UPDATE sales SET price = price + 1 WHERE id = 1")
        assert "sales" in s.dirty_tables and "cities" not in s.dirty_tables


def test_post_copy_sql_applies_to_every_episode(small_db: Path) -> None:
    before = sha256(small_db)
    img = DatabaseImage(small_db, post_copy_sql=["DELETE FROM log"])
    for writable in (False, True):
        with img.session(writable, LIMITS) as s:
            assert s.execute("SELECT count(*) FROM log").rows == [(0,)]
    assert sha256(small_db) == before


def test_image_cache_is_shared_and_refreshed(small_db: Path) -> None:
    a = get_image(small_db)
    assert get_image(small_db) is a
    import sqlite3

    con = sqlite3.connect(small_db)
    con.execute("INSERT INTO cities VALUES (3, 'Eastham')")
    con.commit()
    con.close()
    b = get_image(small_db)
    assert b is not a
    with b.session(False) as s:
        assert s.execute("SELECT count(*) FROM cities").rows == [(3,)]


def test_missing_database_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        DatabaseImage(tmp_path / "nope.sqlite")


def test_chinook_source_untouched_by_attacks(chinook: Path, tmp_path: Path) -> None:
    before = sha256(chinook)
    img = DatabaseImage(chinook)
    with img.session(True, LIMITS) as s:
        for _, sql, _, _ in ATTACKS:
            s.execute(sql.format(tmp=tmp_path) if isinstance(sql, str) else sql)
        s.execute("DELETE FROM invoice_items")
        s.execute("DROP TABLE tracks")
    assert sha256(chinook) == before


def test_statements_behave_as_autocommit_when_sqlite_rolls_back(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True, SessionLimits(timeout_s=0.3)) as s:
        assert s.execute("UPDATE sales SET price = 0 WHERE id = 1").ok
        # an interrupted write: SQLite rolls back the whole transaction; only this statement may go
        slow = "UPDATE sales SET price = (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c) WHERE id = 2"
        assert s.execute(slow).error_kind == "timeout"
        assert s.execute("SELECT price FROM sales WHERE id IN (1, 2) ORDER BY id").rows == [
            (0.0,),
            (102.0,),
        ]
        # OR ROLLBACK on a constraint violation
        assert s.execute("INSERT INTO cities VALUES (5, 'Fifth')").ok
        res = s.execute("INSERT OR ROLLBACK INTO cities VALUES (1, 'Dup')")
        assert not res.ok and "UNIQUE" in res.error
        assert s.execute("SELECT count(*) FROM cities").rows == [(3,)]
        assert s.execute("SELECT price FROM sales WHERE id = 1").rows == [(0.0,)]
        # a plain failing statement undoes only itself
        assert not s.execute("INSERT INTO cities VALUES (1, 'Dup')").ok
        assert s.execute("SELECT count(*) FROM cities").rows == [(3,)]
    # the pooled copy handed out next is the pristine image again
    with img.session(True) as s:
        assert s.execute("SELECT count(*) FROM cities").rows == [(2,)]
        assert s.execute("SELECT price FROM sales WHERE id = 1").rows == [(101.0,)]


def test_schema_changes_do_not_leak_into_the_next_episode(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    with img.session(True) as s:
        assert s.execute("DROP TABLE log").ok
        assert s.execute("ALTER TABLE cities ADD COLUMN zone TEXT").ok
        assert s.execute("CREATE TABLE extra(a)").ok
    with img.session(True) as s:
        names = [
            r[0]
            for r in s.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
            ).rows
        ]
        assert names == ["cities", "kv", "log", "sales", "tags"]
        assert [r[1] for r in s.execute("PRAGMA table_info(cities)").rows] == ["id", "name"]


def test_a_session_dropped_unclosed_closes_its_connection(small_db: Path) -> None:
    # The garbage collector clears weak references before it runs __del__, so a connection
    # that a dropped session gave back to the pool would come back without its per-connection
    # state (and, never closed, could crash the interpreter at exit): it is closed instead.
    import gc
    import weakref

    img = DatabaseImage(small_db)
    for writable in (True, False):
        s = img.session(writable, SessionLimits())
        assert s.execute("SELECT count(*) FROM sales").ok
        conn = weakref.ref(s.connection)
        holder: list = [s]
        holder.append(holder)  # (only the collector frees it)
        del s, holder
        gc.collect()
        assert conn() is None  # closed and freed, not pooled
        with img.session(writable, SessionLimits()) as s2:
            assert s2.execute("SELECT count(*) FROM sales").rows == [(30,)]
