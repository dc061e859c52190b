"""Final-state digest: canonical, type-aware, volatile-aware, incremental."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from clarisql.envs.sandbox.database import DatabaseImage
from clarisql.envs.state import digest as dg
from clarisql.envs.state.deferred import session_digest
from clarisql.envs.state.digest import (
    DigestConfig,
    connection_digest,
    sorted_state_hash,
)


def mem(*stmts: str) -> apsw.Connection:
    c = apsw.Connection(":memory:")
    for s in stmts:
        c.execute(s)
    return c


def test_row_order_does_not_matter() -> None:
    a = mem("CREATE TABLE t(a, b)", "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (2, 'y')")
    b = mem("CREATE TABLE t(a, b)", "INSERT INTO t VALUES (2, 'y'), (1, 'x'), (2, 'y')")
    assert connection_digest(a) == connection_digest(b)


def test_duplicates_count() -> None:
    a = mem("CREATE TABLE t(a)", "INSERT INTO t VALUES (1), (1)")
    b = mem("CREATE TABLE t(a)", "INSERT INTO t VALUES (1)")
    c = mem("CREATE TABLE t(a)", "INSERT INTO t VALUES (1), (1), (1), (1)")
    assert len({connection_digest(x) for x in (a, b, c)}) == 3


@pytest.mark.parametrize(
    "x,y", [("1", "1.0"), ("1", "'1'"), ("1.0", "'1.0'"), ("NULL", "''"), ("x'31'", "'1'")]
)
def test_storage_types_differ(x: str, y: str) -> None:
    a = mem("CREATE TABLE t(a)", f"INSERT INTO t VALUES ({x})")
    b = mem("CREATE TABLE t(a)", f"INSERT INTO t VALUES ({y})")
    assert connection_digest(a) != connection_digest(b)


def test_cells_do_not_bleed_into_each_other() -> None:
    a = mem("CREATE TABLE t(a, b)", "INSERT INTO t VALUES ('x,', 'y')")
    b = mem("CREATE TABLE t(a, b)", "INSERT INTO t VALUES ('x', ',y')")
    assert connection_digest(a) != connection_digest(b)


def test_volatile_columns_are_excluded_and_configurable() -> None:
    a = mem("CREATE TABLE t(a, last_update)", "INSERT INTO t VALUES (1, '2020')")
    b = mem("CREATE TABLE t(a, Last_Update)", "INSERT INTO t VALUES (1, '2024')")
    assert connection_digest(a) == connection_digest(b)
    strict = DigestConfig(volatile_columns=())
    assert connection_digest(a, strict) != connection_digest(b, strict)


def test_table_order_and_count_only() -> None:
    a = mem(
        "CREATE TABLE t(a)",
        "CREATE TABLE u(b)",
        "INSERT INTO t VALUES (1)",
        "INSERT INTO u VALUES (5)",
    )
    b = mem(
        "CREATE TABLE t(a)",
        "CREATE TABLE u(b)",
        "INSERT INTO t VALUES (1)",
        "INSERT INTO u VALUES (6)",
    )
    assert connection_digest(a) != connection_digest(b)
    cfg = DigestConfig(count_only_tables=("u",))
    assert connection_digest(a, cfg) == connection_digest(b, cfg)
    # table order only changes how tables are folded, not what is equal
    ordered = DigestConfig(table_order=("u", "t"))
    assert connection_digest(a, ordered) != connection_digest(a)
    assert (connection_digest(a, ordered) == connection_digest(b, ordered)) is False


def test_schema_is_part_of_the_state() -> None:
    a = mem("CREATE TABLE t(a)")
    b = mem("CREATE TABLE t(a, b)")
    c = mem("CREATE TABLE t(a)", "CREATE TABLE u(a)")
    assert len({connection_digest(x) for x in (a, b, c)}) == 3


def test_views_are_not_state() -> None:
    a = mem("CREATE TABLE t(a)", "INSERT INTO t VALUES (1)")
    b = mem("CREATE TABLE t(a)", "INSERT INTO t VALUES (1)", "CREATE VIEW v AS SELECT a FROM t")
    assert connection_digest(a) == connection_digest(b)


EDITS = [
    [],
    ["UPDATE sales SET price = price + 1 WHERE id = 3"],
    [
        "UPDATE sales SET price = price + 1 WHERE id = 3",
        "UPDATE sales SET price = price - 1 WHERE id = 3",
    ],
    ["DELETE FROM sales WHERE year = 2020"],
    ["INSERT INTO cities VALUES (3, 'Eastham')"],
    ["INSERT INTO cities (name) VALUES ('Eastham')"],
    ["UPDATE sales SET project = 'Project 1 ' WHERE id = 1"],
    ["UPDATE log SET last_update = '1999-01-01'"],
    ["ALTER TABLE cities ADD COLUMN zone TEXT"],
    ["CREATE TABLE extra(a)", "INSERT INTO extra VALUES (1)"],
    ["DROP TABLE log"],
    ["ALTER TABLE log RENAME TO journal"],
    ["CREATE TEMP TABLE scratch(a)", "INSERT INTO scratch VALUES (1)"],
    ["UPDATE tags SET n = 30 WHERE tag IS NULL"],
    ["INSERT INTO tags VALUES (NULL, 4)"],
    ["DELETE FROM tags WHERE tag IS NULL"],
    ["INSERT OR REPLACE INTO tags VALUES ('a', 10)"],
    ["UPDATE kv SET v = 'one and a half' WHERE k = 'x' AND part = 1"],
    ["UPDATE kv SET part = 3 WHERE k = 'y'"],
    ["UPDATE sales SET id = 100 WHERE id = 1"],
    ["DELETE FROM cities WHERE id = 2", "INSERT INTO cities VALUES (2, 'Northport')"],
    ["UPDATE sales SET price = price * 2"],
    ["DELETE FROM sales"],
    ["INSERT INTO cities VALUES (3, 'Eastham')", "DELETE FROM cities WHERE id = 3"],
    [
        "UPDATE sales SET project = upper(project) WHERE id < 4",
        "UPDATE sales SET project = 'Project ' || id WHERE id < 4",
    ],
]


@pytest.mark.parametrize("edits", EDITS, ids=[" / ".join(e)[:60] or "none" for e in EDITS])
def test_session_digest_matches_full_recompute(small_db: Path, edits: list[str]) -> None:
    img = DatabaseImage(small_db)
    with img.session(True) as s:
        for sql in edits:
            assert s.execute(sql).ok, sql
        got = session_digest(s)
        with s.trusted() as conn:
            assert got == connection_digest(conn)
    # temp tables and reverted edits leave the state unchanged
    if edits in (EDITS[0], EDITS[2], EDITS[7], EDITS[12], EDITS[20], EDITS[23], EDITS[24]):
        assert got == dg.image_digest(img)
    else:
        assert got != dg.image_digest(img)


def test_match_decisions_agree_with_sort_based_hash(small_db: Path) -> None:
    img = DatabaseImage(small_db)
    ours, naive = [], []
    for edits in EDITS:
        with img.session(True) as s:
            for sql in edits:
                s.execute(sql)
            ours.append(session_digest(s))
            with s.trusted() as conn:
                naive.append(sorted_state_hash(conn))
    for i in range(len(EDITS)):
        for j in range(len(EDITS)):
            assert (ours[i] == ours[j]) == (naive[i] == naive[j]), (EDITS[i], EDITS[j])


def test_only_changed_rows_are_read(small_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-row change costs no full pass over any table, and the result is still exact."""
    img = DatabaseImage(small_db)
    dg.image_digest(img)  # warm the per-image cache
    full_passes: list[str] = []
    real = dg.table_digest

    def counting(conn, table, config):  # noqa: ANN001
        full_passes.append(table)
        return real(conn, table, config)

    monkeypatch.setattr(dg, "table_digest", counting)
    with img.session(True) as s:
        s.execute("UPDATE sales SET price = 1 WHERE id = 7")
        s.execute("SELECT * FROM cities")
        got = session_digest(s)
        assert set(full_passes) <= {"sqlite_sequence"}
        with s.trusted() as conn:
            assert got == connection_digest(conn)
    # a table whose key may hold NULLs is hashed in full (the change list can miss such rows)
    full_passes.clear()
    with img.session(True) as s:
        s.execute("UPDATE tags SET n = 0 WHERE tag IS NULL")
        got = session_digest(s)
        assert "tags" in full_passes
        with s.trusted() as conn:
            assert got == connection_digest(conn)
