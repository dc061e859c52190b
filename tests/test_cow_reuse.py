"""A pooled copy-on-write connection reused across many resets never serves a stale page.

The connection runs in SQLite's exclusive locking mode (it keeps its page cache between
transactions), so after each reset SQLite must be made to drop that cache; these tests write in
every way that changes pages differently (in place, growth, freelist, schema, temp objects) and
check, cycle after cycle, that the connection sees exactly the base file again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clarisql.envs.sandbox.cow import open_cow, overlay_bytes, reset_cow
from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits

WRITES = [
    "UPDATE t SET v = 'changed' WHERE id = 7",  # one page in place
    "UPDATE t SET v = v || 'x' WHERE id % 50 = 0",  # many pages in place
    "INSERT INTO t(v) SELECT hex(randomblob(200)) FROM t LIMIT 300",  # growth
    "DELETE FROM t WHERE id > 1500",  # freelist pages
    "CREATE TABLE extra(a); INSERT INTO extra VALUES (1)",  # schema change
    "DROP TABLE u",  # schema change, freed pages
    "CREATE INDEX iv ON t(v)",
    "UPDATE u SET w = 'q'",
]


def _dump(conn: apsw.Connection) -> str:
    h = hashlib.sha256()
    for (name,) in conn.execute("SELECT name FROM sqlite_schema ORDER BY name").fetchall():
        h.update(name.encode())
    for table in ("t", "u"):
        for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1"):
            h.update(repr(row).encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("cow") / "base.sqlite"
    conn = apsw.Connection(str(p))
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE u(k, w)")
    conn.execute(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 2000) "
        "INSERT INTO t SELECT x, hex(randomblob(60)) FROM c"
    )
    conn.execute("INSERT INTO u VALUES (1, 'a'), (2, 'b')")
    conn.close()
    return p


@settings(max_examples=25, deadline=None)
@given(cycles=st.lists(st.lists(st.sampled_from(WRITES), max_size=4), min_size=1, max_size=6))
def test_every_reset_shows_the_base_again(base_db: Path, cycles: list[list[str]]) -> None:
    ro = apsw.Connection(
        f"file:{base_db}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    want = _dump(ro)
    (pages,) = ro.execute("PRAGMA page_count").fetchone()
    ro.close()
    conn = open_cow(base_db)
    try:
        assert _dump(conn) == want
        for writes in cycles:
            for sql in writes:
                try:
                    conn.execute(sql)
                except apsw.SQLError:  # e.g. UPDATE u after DROP TABLE u in this cycle
                    pass
            if writes:
                conn.execute("SELECT count(*) FROM t").fetchall()  # cache the written pages
            reset_cow(conn)
            assert overlay_bytes(conn) == 0
            assert _dump(conn) == want
            assert conn.execute("PRAGMA page_count").fetchone() == (pages,)
        # and the connection still writes correctly after all those resets
        conn.execute("INSERT INTO t(v) SELECT v FROM t LIMIT 500")
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (2500,)
    finally:
        conn.close()


def test_pooled_write_sessions_start_from_the_image(base_db: Path) -> None:
    img = DatabaseImage(base_db)
    for i in range(6):
        with img.session(True, SessionLimits()) as s:
            assert s.execute("SELECT v FROM t WHERE id = 7").rows != [("changed",)], i
            assert s.execute("SELECT count(*) FROM t").rows == [(2000,)], i
            assert s.execute(WRITES[i % 3]).ok
            assert s.execute("UPDATE t SET v = 'changed' WHERE id = 7").ok
            assert s.execute("SELECT v FROM t WHERE id = 7").rows == [("changed",)]
            conn = s.connection
        with img.session(True, SessionLimits()) as s:  # the same pooled connection
            assert s.connection is conn
