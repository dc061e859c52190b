"""Copy-on-write sessions and the on-disk digest cache (issue 14)."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import apsw
import pytest

from clarisql.envs.sandbox.cow import open_cow, overlay_bytes, reset_cow
from clarisql.envs.sandbox.database import DatabaseImage, SessionLimits
from clarisql.envs.state import digest as digest_mod
from clarisql.envs.state.deferred import session_digest
from clarisql.envs.state.digest import DigestConfig, image_digest


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture
def big_db(tmp_path: Path) -> Path:
    p = tmp_path / "big.sqlite"
    conn = apsw.Connection(str(p))
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE u(k, w)")
    conn.execute(
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 20000) "
        "INSERT INTO t SELECT x, hex(randomblob(40)) FROM c"
    )
    conn.execute("INSERT INTO u VALUES (1, 'a'), (2, 'b')")
    conn.close()
    return p


def test_private_pages_only_for_writes_and_reset(big_db: Path) -> None:
    before = _sha(big_db)
    a, b = open_cow(big_db), open_cow(big_db)
    size = big_db.stat().st_size
    a.execute("UPDATE u SET w = 'z'")
    a.execute("INSERT INTO t(v) VALUES ('new')")
    assert 0 < overlay_bytes(a) < size // 20  # a few pages, not a copy of the file
    assert b.execute("SELECT w FROM u ORDER BY k").fetchall() == [("a",), ("b",)]
    assert a.execute("SELECT w FROM u ORDER BY k").fetchall() == [("z",), ("z",)]
    reset_cow(a)
    assert overlay_bytes(a) == 0
    assert a.execute("SELECT w FROM u ORDER BY k").fetchall() == [("a",), ("b",)]
    assert a.execute("SELECT count(*) FROM t").fetchone() == (20000,)
    a.execute("DROP TABLE t")
    reset_cow(a)
    assert a.execute("SELECT count(*) FROM t").fetchone() == (20000,)  # schema came back too
    a.close()
    b.close()
    assert _sha(big_db) == before


def test_sessions_isolated_under_threads(big_db: Path) -> None:
    img = DatabaseImage(big_db)
    errors: list[str] = []

    def worker(i: int) -> None:
        for n in range(5):
            with img.session(True, SessionLimits()) as s:
                s.execute(f"INSERT INTO u VALUES ({100 + i}, 'w{i}-{n}')")
                rows = s.execute("SELECT count(*) FROM u").rows
                if rows != [(3,)]:
                    errors.append(f"{i}/{n}: {rows}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors


def test_session_digest_matches_a_full_copy(big_db: Path) -> None:
    img = DatabaseImage(big_db)
    cfg = DigestConfig()
    with img.session(True, SessionLimits()) as s:
        s.execute("UPDATE t SET v = 'x' WHERE id % 1000 = 0")
        got = session_digest(s, cfg)
    mem = apsw.Connection(":memory:")
    with mem.backup("main", apsw.Connection(str(big_db)), "main") as b:
        b.step(-1)
    mem.execute("UPDATE t SET v = 'x' WHERE id % 1000 = 0")
    assert got == digest_mod.connection_digest(mem, cfg)


def test_digest_cache_on_disk_is_shared(big_db: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CLARISQL_CACHE_DIR", str(tmp_path / "cache"))
    first = image_digest(DatabaseImage(big_db))
    assert list((tmp_path / "cache" / "digests").glob("*.json"))

    def no_hashing(*a, **k):  # a new image (as in another process) must not hash a row
        raise AssertionError("table digest recomputed despite the cache on disk")

    monkeypatch.setattr(digest_mod, "table_digest", no_hashing)
    assert image_digest(DatabaseImage(big_db)) == first
    # a changed file is another content: no stale digest
    conn = apsw.Connection(str(big_db))
    conn.execute("DELETE FROM u WHERE k = 1")
    conn.close()
    monkeypatch.undo()
    monkeypatch.setenv("CLARISQL_CACHE_DIR", str(tmp_path / "cache"))
    assert image_digest(DatabaseImage(big_db)) != first
